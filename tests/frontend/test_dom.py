"""lib/dom.js, the one element builder of the pages, in a real Chromium page: text stays
text, inline handlers given as strings are dropped, absent children are skipped, and
form values land once the children are in."""

from __future__ import annotations

import pytest

from tests.conftest import browser_login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def page(studio_server, browser, owner):
    page = browser_login(browser, studio_server, "owner")
    page.goto(f"{studio_server}/tools/")
    page.wait_for_selector("#tools-app[data-ready='1']")
    yield page
    page.context.close()


def test_untrusted_text_stays_text_and_string_handlers_are_dropped(page):
    result = page.evaluate(
        """async () => {
        const { h, fill } = await import('/static/js/lib/dom.js');
        let clicked = 0;
        const node = h('div', {class: 'x', title: '<t>', onclick: 'window.pwned = 1',
                               onmouseover: () => { clicked += 1; }, hidden: false, 'data-a': true},
          '<img src=x onerror="window.pwned = 1">', null, undefined, false, 0, ['a', ['b']]);
        node.dispatchEvent(new MouseEvent('mouseover'));
        node.click();
        const list = fill(h('ul'), null, [h('li', {}, 'one')], false);
        return {text: node.textContent, nodes: [...node.childNodes].map((n) => n.nodeType),
                attributes: node.getAttributeNames(), title: node.title, clicked,
                pwned: window.pwned ?? null, images: node.querySelectorAll('img').length,
                list: list.outerHTML};
    }"""
    )
    assert result["text"] == '<img src=x onerror="window.pwned = 1">0ab'
    assert set(result["nodes"]) == {3}  # text nodes only
    assert result["attributes"] == ["class", "title", "data-a"]
    assert result["title"] == "<t>"
    assert result["images"] == 0
    assert result["pwned"] is None
    assert result["clicked"] == 1
    assert result["list"] == "<ul><li>one</li></ul>"


def test_select_and_textarea_values_are_set_after_their_children(page):
    result = page.evaluate(
        """async () => {
        const { h } = await import('/static/js/lib/dom.js');
        const select = h('select', {value: 'b'}, ['a', 'b'].map((v) => h('option', {value: v}, v)));
        const area = h('textarea', {value: 'typed <text>'});
        const box = h('input', {type: 'checkbox', checked: true});
        return {select: select.value, area: area.value, box: box.checked};
    }"""
    )
    assert result == {"select": "b", "area": "typed <text>", "box": True}
