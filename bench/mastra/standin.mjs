// The model stand-in: an AI SDK language model (specification v2, the interface Mastra's
// own model router implements) that streams the same chunks as the studio's offline
// provider in benchmark mode (providers/offline.py, `stamp`):
//
// - first call of a run: `stamp` deltas, the first half as text, the second half as the
//   argument text of one `bench_sink` call (`{"log": "` first, `"}` last), each delta
//   `<index, 7 digits>@<unix time, 6 decimals>;` stamped when it is yielded;
// - after the tool result: "done." and a stop.
//
// Every chunk (text delta, the argument's opening, each argument delta, its closing, the
// finish) waits for its slot at a fixed rate (`delay` seconds apart, counted from the
// stream's start): time the consumer spends between chunks does not slow the stream down,
// and after a stall of more than two slots the schedule is re-anchored instead of catching
// up in a burst, as the offline provider does.
//
// The per-call options come as provider options: `providerOptions.bench = {stamp, delay}`.

import { setTimeout as sleep } from "node:timers/promises";

const STAMP_WIDTH = 7;

export function wallSeconds() {
  return (performance.timeOrigin + performance.now()) / 1000;
}

function stamp(index) {
  return `${String(index).padStart(STAMP_WIDTH, "0")}@${wallSeconds().toFixed(6)};`;
}

function afterTools(prompt) {
  const last = prompt[prompt.length - 1];
  return last !== undefined && last.role === "tool";
}

function usage(outputTokens) {
  return { inputTokens: 1, outputTokens, totalTokens: outputTokens + 1 };
}

// The chunks of one call, each a function that returns the stream parts to enqueue at
// its slot (stamps are made then, not before the wait).
export function script({ count, toolName, finished }) {
  const steps = [];
  if (finished) {
    steps.push(() => [
      { type: "text-start", id: "text-1" },
      { type: "text-delta", id: "text-1", delta: "done." },
      { type: "text-end", id: "text-1" },
    ]);
    steps.push(() => [{ type: "finish", finishReason: "stop", usage: usage(1) }]);
    return steps;
  }
  // Without a tool every delta is text, as the offline provider streams it.
  const half = toolName ? Math.floor(count / 2) : count;
  let index = 0;
  for (let n = 0; n < half; n += 1) {
    steps.push(() => {
      index += 1;
      const parts = [{ type: "text-delta", id: "text-0", delta: stamp(index) }];
      return index === 1 ? [{ type: "text-start", id: "text-0" }, ...parts] : parts;
    });
  }
  if (!toolName) {
    steps.push(() => [
      ...(half > 0 ? [{ type: "text-end", id: "text-0" }] : []),
      { type: "finish", finishReason: "stop", usage: usage(count) },
    ]);
    return steps;
  }
  const callId = "call_bench_0";
  let input = '{"log": "';
  steps.push(() => [
    ...(half > 0 ? [{ type: "text-end", id: "text-0" }] : []),
    { type: "tool-input-start", id: callId, toolName },
    { type: "tool-input-delta", id: callId, delta: input },
  ]);
  for (let n = half; n < count; n += 1) {
    steps.push(() => {
      index += 1;
      const delta = stamp(index);
      input += delta;
      return [{ type: "tool-input-delta", id: callId, delta }];
    });
  }
  steps.push(() => {
    input += '"}';
    return [
      { type: "tool-input-delta", id: callId, delta: '"}' },
      { type: "tool-input-end", id: callId },
      { type: "tool-call", toolCallId: callId, toolName, input },
    ];
  });
  steps.push(() => [{ type: "finish", finishReason: "tool-calls", usage: usage(count) }]);
  return steps;
}

// Paces `steps` at one per `delay` seconds into a ReadableStream of stream parts.
export function paced(steps, delay) {
  let number = 0;
  let start = performance.now();
  return new ReadableStream({
    start(controller) {
      controller.enqueue({ type: "stream-start", warnings: [] });
    },
    async pull(controller) {
      if (number >= steps.length) {
        controller.close();
        return;
      }
      number += 1;
      if (delay > 0) {
        const wait = start + number * delay * 1000 - performance.now();
        if (wait > 0) {
          await sleep(wait);
        } else if (wait < -2 * delay * 1000) {
          start = performance.now() - number * delay * 1000;
        }
      }
      for (const part of steps[number - 1]()) controller.enqueue(part);
    },
  });
}

export function standinModel({ defaultDelay = 1 / 30, defaultCount = 240 } = {}) {
  return {
    specificationVersion: "v2",
    provider: "bench",
    modelId: "standin",
    supportedUrls: {},
    async doGenerate() {
      throw new Error("the stand-in only streams");
    },
    async doStream(options) {
      const settings = options.providerOptions?.bench ?? {};
      const count = Number(settings.stamp ?? defaultCount);
      const delay = Number(settings.delay ?? defaultDelay);
      const tools = (options.tools ?? []).filter((tool) => tool.type === "function");
      const steps = script({
        count,
        toolName: tools.length ? tools[0].name : null,
        finished: afterTools(options.prompt),
      });
      return { stream: paced(steps, delay) };
    },
  };
}
