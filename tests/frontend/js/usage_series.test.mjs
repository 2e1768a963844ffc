// Usage answers as chart columns (traces/static/traces/usage_series.js).

import assert from "node:assert/strict";
import { test } from "node:test";

import { dailySeries } from "../../../traces/static/traces/usage_series.js";

test("every day of the range is a point, with the day's sums and zeros elsewhere", () => {
  const series = dailySeries({
    since: "2026-03-01T10:00:00Z",
    until: "2026-03-04T09:00:00Z",
    usage: [
      { day: "2026-03-02", inputTokens: 10, outputTokens: 5, costUsd: 0.5 },
      { day: "2026-03-02", inputTokens: 1, outputTokens: 1, costUsd: 0.25 },
      { day: "2026-02-01", inputTokens: 99, outputTokens: 99, costUsd: 9 },
    ],
    days: [{ day: "2026-03-04", runs: 3, errors: 1 }],
  });
  assert.equal(series.x.length, 4);
  assert.equal(new Date(series.x[0] * 1000).toISOString(), "2026-03-01T00:00:00.000Z");
  assert.deepEqual(series.inputTokens, [0, 11, 0, 0]);
  assert.deepEqual(series.costUsd, [0, 0.75, 0, 0]);
  assert.deepEqual(series.runs, [0, 0, 0, 3]);
  assert.deepEqual(series.errors, [0, 0, 0, 1]);
});
