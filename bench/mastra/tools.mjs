// The tools of the harness, with zod schemas as a Mastra user writes them: the agent's
// `bench_sink` (bench/_streaming_agent.py) and the trivial `unit_convert`
// (tools_app/demo.py), the same conversion and the same schemas.

import { createTool } from "@mastra/core/tools";
import { z } from "zod";

export const benchSink = createTool({
  id: "bench_sink",
  description: "Receives a long log (benchmarks).",
  inputSchema: z.object({ log: z.string() }),
  execute: async ({ log }) => ({ ok: true, chars: log.length }),
});

const LENGTH_M = {
  mm: 0.001,
  cm: 0.01,
  m: 1.0,
  km: 1000.0,
  in: 0.0254,
  ft: 0.3048,
  yd: 0.9144,
  mi: 1609.344,
};
const MASS_KG = { g: 0.001, kg: 1.0, lb: 0.45359237, oz: 0.028349523125, t: 1000.0 };
const TO_CELSIUS = { c: (v) => v, f: (v) => ((v - 32) * 5) / 9, k: (v) => v - 273.15 };
const FROM_CELSIUS = { c: (v) => v, f: (v) => (v * 9) / 5 + 32, k: (v) => v + 273.15 };
const UNITS = [...Object.keys(LENGTH_M), ...Object.keys(MASS_KG), ...Object.keys(TO_CELSIUS)]
  .sort();

function convert(value, from, to) {
  for (const table of [LENGTH_M, MASS_KG]) {
    if (from in table && to in table) return (value * table[from]) / table[to];
  }
  if (from in TO_CELSIUS && to in TO_CELSIUS) return FROM_CELSIUS[to](TO_CELSIUS[from](value));
  throw new Error(`Cannot convert ${from} to ${to}: different quantities.`);
}

export const unitConvert = createTool({
  id: "unit_convert",
  description: "Convert a value between units of length, mass or temperature.",
  inputSchema: z
    .object({
      value: z.number().describe("The amount to convert."),
      from: z.enum(UNITS),
      to: z.enum(UNITS),
    })
    .strict(),
  outputSchema: z.object({ value: z.number(), unit: z.string() }),
  execute: async ({ value, from, to }) => ({
    value: Math.round(convert(value, from, to) * 1e6) / 1e6,
    unit: to,
  }),
});
