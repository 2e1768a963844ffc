// The pure parts of the widget tools' module (frontend/static/js/lib/widget_kinds.js) and
// how the chat's model classifies a widget's suspended call (lib/chat_calls.js).

import assert from "node:assert/strict";
import { test } from "node:test";

import { suspendKind } from "../../../frontend/static/js/lib/chat_calls.js";
import { answerText, safeUrl } from "../../../frontend/static/js/lib/widget_kinds.js";

test("only http(s) URLs are followed", () => {
  assert.equal(safeUrl("https://example.org/a?b=1"), "https://example.org/a?b=1");
  assert.equal(safeUrl("HTTP://Example.org"), "http://example.org/");
  for (const bad of ["javascript:alert(1)", " JavaScript:alert(1)", "data:text/html,<b>", "vbscript:x", "/relative", "//example.org", "", null, 42, { href: "https://x" }]) {
    assert.equal(safeUrl(bad), null, String(bad));
  }
});

test("a form's answer reads as its values", () => {
  assert.equal(answerText({ values: { guests: 2, breakfast: true, note: "late" } }), "You answered: guests: 2 · breakfast: true · note: late");
  assert.equal(answerText({ values: {} }), "You answered: (nothing)");
  assert.equal(answerText({ answer: "Paris" }), null);
});

test("a widget tool's suspended call is a widget, not an ask_user question", () => {
  const payload = { kind: "widget", widget: { kind: "choice", question: "Which?", options: ["a", "b"] }, resumeSchema: {} };
  assert.equal(suspendKind("pick_city", payload), "widget");
  assert.equal(suspendKind("ask_user", { kind: "ask-user", question: "?" }), "ask");
});
