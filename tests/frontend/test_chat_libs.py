"""The chat page's shared modules, run inside a real Chromium page served by Daphne:
lib/patch.js (applies tool-input-delta patches in place) and lib/stream.js (seq order,
duplicates dropped, gaps fetched from the events endpoint)."""

from __future__ import annotations

import pytest

from tests.conftest import browser_login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def page(studio_server, browser, owner):
    page = browser_login(browser, studio_server, "owner")
    page.goto(f"{studio_server}/chat/")
    yield page
    page.context.close()


def test_patches_build_the_value_a_json_parser_would(page):
    result = page.evaluate(
        """async () => {
        const { applyPatches } = await import('/static/js/lib/patch.js');
        let value;
        const steps = [];
        const deltas = [
          [{op: 'set', path: [], value: {}}],
          [{op: 'set', path: ['city'], value: ''}],
          [{op: 'append', path: ['city'], value: 'Par'}],
          [{op: 'append', path: ['city'], value: 'is'}, {op: 'set', path: ['days'], value: []}],
          [{op: 'set', path: ['days', 0], value: 3}, {op: 'set', path: ['opts'], value: {}}],
          [{op: 'set', path: ['opts', 'note'], value: 'caf'}],
          [{op: 'append', path: ['opts', 'note'], value: 'é \\"x\\"'}],
        ];
        for (const patches of deltas) {
          value = applyPatches(value, patches);
          steps.push(JSON.stringify(value));
        }
        return steps;
    }"""
    )
    assert result[2] == '{"city":"Par"}'
    assert result[3] == '{"city":"Paris","days":[]}'
    assert result[-1] == '{"city":"Paris","days":[3],"opts":{"note":"café \\"x\\""}}'


def test_patches_keep_the_same_object_and_append_to_root_strings(page):
    result = page.evaluate(
        """async () => {
        const { applyPatch, applyPatches, PatchError } = await import('/static/js/lib/patch.js');
        const root = {items: [{name: 'a'}]};
        const same = applyPatches(root, [{op: 'append', path: ['items', 0, 'name'], value: 'bc'},
                                         {op: 'set', path: ['items', 1], value: {name: ''}}]);
        let text = applyPatch(undefined, {op: 'append', path: [], value: 'he'});
        text = applyPatch(text, {op: 'append', path: [], value: 'llo'});
        let refused = null;
        try { applyPatch({}, {op: 'remove', path: ['x']}); }
        catch (e) { refused = e instanceof PatchError; }
        return {identical: same === root, root, text, refused};
    }"""
    )
    assert result["identical"] is True
    assert result["root"] == {"items": [{"name": "abc"}, {"name": ""}]}
    assert result["text"] == "hello"
    assert result["refused"] is True


def test_a_large_argument_applies_in_linear_time_without_reparsing(page):
    # 100 KB in 16-character appends: applying must not re-read what came before, so the
    # final string equals the concatenation and every patch was applied once.
    result = page.evaluate(
        """async () => {
        const { applyPatches } = await import('/static/js/lib/patch.js');
        let value = applyPatches(undefined, [{op: 'set', path: [], value: {log: ''}}]);
        const chunk = '0123456789abcdef';
        for (let i = 0; i < 6400; i++) {
          value = applyPatches(value, [{op: 'append', path: ['log'], value: chunk}]);
        }
        return {length: value.log.length, ok: value.log === chunk.repeat(6400)};
    }"""
    )
    assert result == {"length": 102400, "ok": True}


STREAM_HARNESS = """
async ({events, stored, after}) => {
  const { ThreadStream } = await import('/static/js/lib/stream.js');
  const delivered = [];
  const fetched = [];
  // The events endpoint, served from the list `stored`: what the server persisted.
  const fetchImpl = async (url) => {
    const from = Number(new URL(url, location.href).searchParams.get('after'));
    fetched.push(from);
    const page = stored.filter((e) => e.seq > from);
    return {ok: true, json: async () => page};
  };
  const stream = new ThreadStream({wsUrl: 'ws://unused/', eventsUrl: '/api/threads/x/events/',
    onEvent: (e) => delivered.push(e.seq ?? e.type), fetchImpl, after, minDelay: 10});
  for (const event of events) stream.ingest(event);
  for (let i = 0; i < 50 && (stream.hasGap || stream.filling); i++) {
    await new Promise((r) => setTimeout(r, 20));
  }
  return {delivered, fetched, lastSeq: stream.lastSeq, stats: stream.stats};
}
"""


def _events(*seqs):
    return [{"type": "text-delta", "runId": "r", "seq": s, "delta": f"t{s} "} for s in seqs]


def test_the_stream_drops_duplicates_and_keeps_order(page):
    result = page.evaluate(
        STREAM_HARNESS, {"events": _events(1, 2, 2, 3, 1, 4, 4), "stored": [], "after": 0}
    )
    assert result["delivered"] == [1, 2, 3, 4]
    assert result["stats"]["duplicates"] == 3
    assert result["fetched"] == []


def test_a_gap_in_seq_is_fetched_from_the_events_endpoint_and_delivered_in_order(page):
    stored = _events(*range(1, 9))
    result = page.evaluate(
        STREAM_HARNESS, {"events": _events(1, 2, 6, 7, 5, 8), "stored": stored, "after": 0}
    )
    assert result["delivered"] == [1, 2, 3, 4, 5, 6, 7, 8]
    assert result["fetched"] == [2]
    assert result["lastSeq"] == 8


def test_events_at_or_below_the_resume_point_are_never_delivered_again(page):
    result = page.evaluate(
        STREAM_HARNESS,
        {"events": _events(3, 4, 5, 6), "stored": _events(1, 2, 3, 4, 5, 6), "after": 4},
    )
    assert result["delivered"] == [5, 6]


def test_unsequenced_replies_pass_straight_through(page):
    result = page.evaluate(
        STREAM_HARNESS,
        {
            "events": [
                *_events(1),
                {"type": "partial", "toolCallId": "c", "value": {}},
                *_events(2),
            ],
            "stored": [],
            "after": 0,
        },
    )
    assert result["delivered"] == [1, "partial", 2]


def test_stored_rows_with_a_payload_are_flattened_like_live_events(page):
    result = page.evaluate(
        """async () => {
        const { normalizeEvent } = await import('/static/js/lib/stream.js');
        return normalizeEvent({seq: 7, type: 'tool-call', run: 'r1',
                               payload: {toolCallId: 'c1', toolName: 'w', input: {a: 1}}});
    }"""
    )
    assert result == {
        "seq": 7,
        "type": "tool-call",
        "run": "r1",
        "runId": "r1",
        "toolCallId": "c1",
        "toolName": "w",
        "input": {"a": 1},
    }


WIDGET_HARNESS = """
async ({payload, pick, text}) => {
  const { buildWidget, suspendKind } = await import('/static/js/lib/chat_widgets.js');
  const sent = [];
  const kind = suspendKind('ask_user', payload);
  const form = buildWidget({kind, toolName: 'ask_user', payload,
                            submit: async (answer) => { sent.push(answer); }});
  document.body.append(form);
  for (const value of pick || []) form.querySelector(`input[value="${value}"]`).click();
  if (text !== undefined) form.querySelector('textarea[name=answer]').value = text;
  form.querySelector('button[type=submit]').click();
  await new Promise((r) => setTimeout(r, 50));
  const shown = document.querySelector('.answered')?.textContent || null;
  const inputs = [...form.querySelectorAll('input')].map((i) => i.type);
  document.querySelector('.answered')?.remove();
  form.remove();
  return {kind, sent, shown, inputs};
}
"""


def test_a_single_select_question_sends_the_chosen_option(page):
    payload = {
        "kind": "ask-user",
        "question": "Which city?",
        "mode": "single",
        "options": ["Paris", "Tokyo"],
    }
    result = page.evaluate(WIDGET_HARNESS, {"payload": payload, "pick": ["Tokyo"]})
    assert result["kind"] == "ask"
    assert result["sent"] == [{"answer": "Tokyo"}]
    assert result["shown"] == "You answered: Tokyo"


def test_a_multi_select_question_sends_every_checked_option(page):
    payload = {
        "kind": "ask-user",
        "question": "Which herbs?",
        "mode": "multi",
        "options": ["basil", "mint", "thyme"],
    }
    result = page.evaluate(WIDGET_HARNESS, {"payload": payload, "pick": ["basil", "thyme"]})
    assert result["sent"] == [{"answer": ["basil", "thyme"]}]
    assert result["shown"] == "You answered: basil, thyme"


def test_an_answer_reads_as_the_labels_of_the_options_chosen(page):
    payload = {
        "kind": "ask-user",
        "question": "Which cities?",
        "mode": "multi",
        "options": [{"value": "ber", "label": "Berlin"}, {"id": "osl", "label": "Oslo"}, "Rome"],
    }
    result = page.evaluate(WIDGET_HARNESS, {"payload": payload, "pick": ["osl", "Rome"]})
    assert result["sent"] == [{"answer": ["osl", "Rome"]}]
    assert result["shown"] == "You answered: Oslo, Rome"


def test_a_question_without_an_answer_is_not_sent(page):
    payload = {"kind": "ask-user", "question": "Anything else?", "mode": "free-text"}
    result = page.evaluate(WIDGET_HARNESS, {"payload": payload, "text": "   "})
    assert result["sent"] == []
    assert result["shown"] is None


def test_suspend_payload_kinds_pick_their_widget(page):
    kinds = page.evaluate(
        """async () => {
          const { suspendKind } = await import('/static/js/lib/chat_widgets.js');
          return [
            suspendKind('submit_plan', {kind: 'plan-approval', plan: 'x'}),
            suspendKind('weather', {kind: 'approval', tool: 'weather', input: {}}),
            suspendKind('clock', {kind: 'client-function', function: 'local_time'}),
            suspendKind('ask_user', {kind: 'ask-user', question: 'q'}),
            suspendKind('custom', {anything: 1}),
          ];
        }"""
    )
    assert kinds == ["plan", "approval", "client", "ask", "generic"]
