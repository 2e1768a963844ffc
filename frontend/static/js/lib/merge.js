// A line-level three-way merge: the edits base->mine and base->theirs, applied together.

import { lineDiff } from "./line_diff.js";

// The merged text, or null when both sides changed the same lines differently.
export function merge3(baseText, mineText, theirsText) {
  const baseLines = baseText.split("\n");
  const hunks = [...hunksOf(baseText, mineText), ...hunksOf(baseText, theirsText)]
    .sort((a, b) => a.start - b.start || a.end - b.end);
  for (let k = 1; k < hunks.length; k++) {
    const [a, b] = [hunks[k - 1], hunks[k]];
    const same = a.start === b.start && a.end === b.end && a.lines.join("\n") === b.lines.join("\n");
    if (!same && (b.start < a.end || (a.start === b.start))) return null;
  }
  const out = [];
  let at = 0;
  let previous = null;
  for (const hunk of hunks) {
    if (previous && hunk.start === previous.start && hunk.end === previous.end) continue; // both made it
    out.push(...baseLines.slice(at, hunk.start), ...hunk.lines);
    at = hunk.end;
    previous = hunk;
  }
  out.push(...baseLines.slice(at));
  return out.join("\n");
}

// The changed regions of newText against oldText: [{start, end, lines}] where old lines
// [start, end) are replaced by `lines`.
export function hunksOf(oldText, newText) {
  const hunks = [];
  let current = null;
  let at = 0; // index in the old lines
  for (const line of lineDiff(oldText, newText)) {
    if (line.op === "equal") {
      current = null;
      at += 1;
      continue;
    }
    if (!current) {
      current = { start: at, end: at, lines: [] };
      hunks.push(current);
    }
    if (line.op === "delete") {
      at += 1;
      current.end = at;
    } else {
      current.lines.push(line.text);
    }
  }
  return hunks;
}
