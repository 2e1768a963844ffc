// The waterfall of a trace, as data: the spans in tree order (each after its parent,
// siblings by start) with their depth and their bar's place on the trace's time line in
// percent. No DOM here, so the Node tests import it as the page does.

// spans: the API's {id, parent, start, end, ...}; now (ms) stands for the end of spans
// still open (a suspension waiting, an async tool pending).
export function layout(spans, now = Date.now()) {
  const ms = (iso) => new Date(iso).getTime();
  const ids = new Set(spans.map((span) => span.id));
  const children = new Map();
  for (const span of spans) {
    const parent = span.parent && ids.has(span.parent) ? span.parent : null;
    if (!children.has(parent)) children.set(parent, []);
    children.get(parent).push(span);
  }
  for (const list of children.values()) list.sort((a, b) => ms(a.start) - ms(b.start));
  const start = Math.min(...spans.map((span) => ms(span.start)));
  const end = Math.max(...spans.map((span) => (span.end ? ms(span.end) : Math.max(now, ms(span.start)))));
  const total = Math.max(end - start, 1);
  const rows = [];
  const walk = (parent, depth) => {
    for (const span of children.get(parent) || []) {
      const from = ms(span.start);
      const to = span.end ? ms(span.end) : Math.max(now, from);
      rows.push({
        span,
        depth,
        open: !span.end,
        offset: ((from - start) / total) * 100,
        width: Math.max(((to - from) / total) * 100, 0.3),
        durationMs: to - from,
      });
      walk(span.id, depth + 1);
    }
  };
  walk(null, 0);
  return { rows, totalMs: end - start };
}

// What a span's details show, in order: [label, value] for the attributes that are there.
const SECTIONS = {
  model: [["Messages", "messages"], ["Tools", "tools"], ["Parameters", "params"], ["Tool choice", "tool_choice"]],
  tool: [["Input", "input"], ["Output", "output"], ["Model output", "model_output"]],
  signal: [["Signals", "signals"]],
};
const FACTS = {
  model: ["response_model", "input_tokens", "output_tokens", "cached_tokens", "cost_usd", "time_to_first_token_ms", "finish_reason"],
  tool: ["tool_kind", "mode", "isolation", "worker", "attempts", "outcome", "resumed", "tool_duration_ms"],
  run: ["agent", "model", "outcome", "steps", "usage", "resumed"],
  subagent: ["agent", "model", "outcome", "steps", "usage"],
  hook: ["proceed", "reason", "inputChanged", "outputChanged", "source", "error"],
  suspension: ["tool", "call_id"],
};

export function details(span) {
  const attributes = span.attributes || {};
  const facts = (FACTS[span.kind] || []).filter((key) => attributes[key] !== undefined && attributes[key] !== null)
    .map((key) => [key, attributes[key]]);
  const sections = (SECTIONS[span.kind] || []).filter(([, key]) => attributes[key] !== undefined)
    .map(([label, key]) => [label, attributes[key]]);
  return { facts, sections };
}
