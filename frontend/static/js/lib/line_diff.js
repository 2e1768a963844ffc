// A line diff by longest common subsequence: [{op: "equal"|"insert"|"delete", old, new, text}]
// with 1-based line numbers (null on the side a line is missing from), as the server's
// revision diffs are shaped, so one renderer shows both.

export function lineDiff(oldText, newText) {
  const a = oldText.split("\n");
  const b = newText.split("\n");
  const n = a.length;
  const m = b.length;
  const lcs = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  }
  const lines = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) lines.push({ op: "equal", old: ++i, new: ++j, text: a[i - 1] });
    else if (j < m && (i >= n || lcs[i][j + 1] >= lcs[i + 1][j])) lines.push({ op: "insert", old: null, new: ++j, text: b[j - 1] });
    else lines.push({ op: "delete", old: ++i, new: null, text: a[i - 1] });
  }
  return lines;
}
