// In-process measurements of the harness, one per command; each prints one JSON line.
//
//   node micro.mjs standin --streams N --rate R --chunks C [--repeats 3]
//       CPU per delta of the model stand-in alone (standin.mjs): N streams at once, R
//       deltas a second each, read to their end; the marginal cost of C deltas over 2
//       (best of the repeats), as bench.streaming measures the studio's offline provider.
//   node micro.mjs tool [--repeat 200]
//       `unit_convert.execute(input)` (createTool, zod validation of input and output):
//       median per call over batches of 100 calls.
//   node micro.mjs partial --file F [--delta 16]
//       The AI SDK's parsePartialJson on the accumulated text after each delta of F (how
//       an AI SDK page shows a tool argument while it streams): seconds, and whether the
//       last value equals JSON.parse of the whole text.

import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { parsePartialJson } from "ai";
import { standinModel } from "./standin.mjs";
import { unitConvert } from "./tools.mjs";

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    streams: { type: "string", default: "1" },
    rate: { type: "string", default: "30" },
    chunks: { type: "string", default: "90" },
    repeats: { type: "string", default: "3" },
    repeat: { type: "string", default: "200" },
    file: { type: "string" },
    delta: { type: "string", default: "16" },
  },
});

function cpuSeconds() {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}

async function readStandin(model, chunks, delay) {
  const { stream } = await model.doStream({
    prompt: [{ role: "user", content: [{ type: "text", text: "go" }] }],
    tools: [{ type: "function", name: "bench_sink", inputSchema: {} }],
    providerOptions: { bench: { stamp: chunks, delay } },
  });
  let deltas = 0;
  for await (const part of stream) {
    if (part.type === "text-delta" || part.type === "tool-input-delta") deltas += 1;
  }
  return deltas;
}

async function standin() {
  const streams = Number(values.streams);
  const delay = 1 / Number(values.rate);
  const model = standinModel();
  const phase = async (chunks) => {
    const started = cpuSeconds();
    const counts = await Promise.all(
      Array.from({ length: streams }, () => readStandin(model, chunks, delay)),
    );
    return [cpuSeconds() - started, counts.reduce((a, b) => a + b, 0)];
  };
  let best = Infinity;
  for (let n = 0; n < Number(values.repeats); n += 1) {
    const [longCpu, longCount] = await phase(Number(values.chunks));
    const [shortCpu, shortCount] = await phase(2);
    best = Math.min(best, ((longCpu - shortCpu) / Math.max(1, longCount - shortCount)) * 1e6);
  }
  return { us_per_delta: Math.max(0, best) };
}

async function tool() {
  const input = { value: 3, from: "km", to: "mi" };
  const check = await unitConvert.execute(input, {});
  if (check?.unit !== "mi") throw new Error(`unexpected result ${JSON.stringify(check)}`);
  const bad = await unitConvert.execute({ value: "3", from: "km", to: "mi" }, {});
  const batch = 100;
  for (let n = 0; n < 20 * batch; n += 1) await unitConvert.execute(input, {});
  const samples = [];
  for (let b = 0; b < Number(values.repeat); b += 1) {
    const started = process.hrtime.bigint();
    for (let n = 0; n < batch; n += 1) await unitConvert.execute(input, {});
    samples.push(Number(process.hrtime.bigint() - started) / 1e3 / batch);
  }
  samples.sort((a, b) => a - b);
  return {
    us_per_call: samples[Math.floor(samples.length / 2)],
    calls: samples.length * batch,
    rejects_bad_input: Boolean(bad?.error),
  };
}

async function partial() {
  const text = readFileSync(values.file, "utf8");
  const size = Number(values.delta);
  const deltas = [];
  for (let i = 0; i < text.length; i += size) deltas.push(text.slice(i, i + size));
  let accumulated = "";
  let last;
  const started = process.hrtime.bigint();
  for (const delta of deltas) {
    accumulated += delta;
    last = await parsePartialJson(accumulated);
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const agrees = JSON.stringify(last.value) === JSON.stringify(JSON.parse(text));
  return { seconds, deltas: deltas.length, chars: text.length, agrees };
}

const commands = { standin, tool, partial };
const command = commands[positionals[0]];
if (!command) {
  console.error(`usage: node micro.mjs ${Object.keys(commands).join("|")} [options]`);
  process.exit(2);
}
console.log(JSON.stringify(await command()));
