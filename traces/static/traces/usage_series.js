// Usage answers (/api/usage/) as uPlot's columns: one x per day (Unix seconds, every day
// of the range, zero where nothing happened) and a column per measure. No DOM here.

const DAY = 86400;

export function dailySeries({ since, until, usage, days }) {
  const first = Math.floor(Date.parse(since) / 1000 / DAY) * DAY;
  const last = Math.floor(Date.parse(until) / 1000 / DAY) * DAY;
  const x = [];
  for (let t = first; t <= last; t += DAY) x.push(t);
  const index = new Map(x.map((t, i) => [new Date(t * 1000).toISOString().slice(0, 10), i]));
  const column = () => x.map(() => 0);
  const out = { x, inputTokens: column(), outputTokens: column(), costUsd: column(), runs: column(), errors: column() };
  for (const row of usage) {
    const i = index.get(row.day);
    if (i === undefined) continue;
    out.inputTokens[i] += row.inputTokens;
    out.outputTokens[i] += row.outputTokens;
    out.costUsd[i] += row.costUsd;
  }
  for (const row of days) {
    const i = index.get(row.day);
    if (i === undefined) continue;
    out.runs[i] = row.runs;
    out.errors[i] = row.errors;
  }
  return out;
}
