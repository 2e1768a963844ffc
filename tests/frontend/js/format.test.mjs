// The one formatting module of the pages (frontend/static/js/lib/format.js).

import assert from "node:assert/strict";
import { test } from "node:test";

import { formatDuration, formatInline, formatJson, timeAgo } from "../../../frontend/static/js/lib/format.js";

const NOW = Date.parse("2026-03-10T12:00:00Z");
const before = (seconds) => new Date(NOW - seconds * 1000).toISOString();

test("relative times read as words, past and future", () => {
  const cases = [
    [before(10), "just now"],
    [before(-10), "in a moment"],
    [before(90), "2 min ago"],
    [before(50), "1 min ago"],
    [before(-120), "in 2 min"],
    [before(3 * 3600), "3 h ago"],
    [before(2 * 86400), "2 d ago"],
    ["", ""],
    ["not a date", ""],
  ];
  for (const [iso, expected] of cases) assert.equal(timeAgo(iso, NOW), expected, iso);
  assert.equal(timeAgo(before(30 * 86400), NOW), new Date(before(30 * 86400)).toLocaleDateString());
});

test("durations", () => {
  const cases = [[null, "—"], [undefined, "—"], [0.4, "<1 ms"], [35.4, "35 ms"], [1200, "1.20 s"], [12345, "12.3 s"]];
  for (const [ms, expected] of cases) assert.equal(formatDuration(ms), expected, String(ms));
});

test("JSON for a block and for a line", () => {
  const cyclic = {};
  cyclic.self = cyclic;
  assert.equal(formatJson({ a: [1, "x"] }), '{\n  "a": [\n    1,\n    "x"\n  ]\n}');
  assert.equal(formatJson(undefined), "");
  assert.equal(formatJson(null), "null");
  assert.equal(formatJson(cyclic), "[object Object]");
  assert.equal(formatInline("plain text"), "plain text");
  assert.equal(formatInline({ a: 1 }), '{"a":1}');
  assert.equal(formatInline(3), "3");
});
