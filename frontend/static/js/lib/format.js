// Values as people read them, one formatter for every page (and the admin's editor script):
// times "just now", "2 min ago", "in 1 min", "3 h ago", "2 d ago"; durations "35 ms",
// "1.20 s"; JSON indented for a block or compact for a line. Only refreshTimes() touches
// the page, so the Node unit tests import this module as the browser does.

const MINUTE = 60;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

// An ISO time relative to now (`now` in ms, for tests and for one consistent render);
// past times read "... ago", future ones "in ...". Older than a week: the date.
export function timeAgo(iso, now = Date.now()) {
  if (!iso) return "";
  const then = new Date(iso).getTime();
  if (Number.isNaN(then)) return "";
  const seconds = Math.round((now - then) / 1000);
  const span = Math.abs(seconds);
  if (span < 45) return seconds >= 0 ? "just now" : "in a moment";
  let amount;
  if (span < HOUR) amount = `${Math.max(1, Math.round(span / MINUTE))} min`;
  else if (span < DAY) amount = `${Math.round(span / HOUR)} h`;
  else if (span < 7 * DAY) amount = `${Math.round(span / DAY)} d`;
  else return new Date(iso).toLocaleDateString();
  return seconds >= 0 ? `${amount} ago` : `in ${amount}`;
}

// The full local date and time, for a tooltip beside a relative time.
export function fullTime(iso) {
  return iso ? new Date(iso).toLocaleString([], { dateStyle: "medium", timeStyle: "short" }) : "";
}

// A duration in milliseconds; null or undefined (not measured) is a dash.
export function formatDuration(ms) {
  if (ms === null || ms === undefined) return "—";
  if (ms < 1) return "<1 ms";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return `${(ms / 1000).toFixed(ms < 10000 ? 2 : 1)} s`;
}

// A value as indented JSON for a <pre> block; undefined (no value) is the empty string,
// and what JSON cannot spell (a cycle, a function) falls back to its string form.
export function formatJson(value) {
  if (value === undefined) return "";
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}

// A value on one line: a string as it is, anything else as compact JSON.
export function formatInline(value) {
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

// Keep every <time datetime=... data-ago> under `root` reading right as time passes.
export function refreshTimes(root = document) {
  for (const node of root.querySelectorAll("time[data-ago]")) {
    node.textContent = timeAgo(node.getAttribute("datetime"));
    node.title = fullTime(node.getAttribute("datetime"));
  }
}
