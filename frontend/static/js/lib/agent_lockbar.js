// The agent editor's lock bar: who holds the edit lock (lib/edit_lock.js), in words, and
// which of "Start editing", "Take over" and "Break lock" this user may press now.

import { fullTime, timeAgo } from "./format.js";

const $ = (id) => document.getElementById(id);
const ago = (iso) => (iso ? timeAgo(iso) : "");

// [mode, text]: mode is readonly, mine, yours (this user's other tab), other, expired or free.
function lockText(lock, { canEdit }) {
  const info = lock.info;
  if (!canEdit) return ["readonly", "You can read this agent but not edit it."];
  if (lock.mine) {
    return ["mine", `You are editing in this tab (lock taken ${ago(info.acquired_at)}). It renews while this page is open.`];
  }
  if (lock.heldByMyOtherSession && info && !info.expired) {
    return ["yours", `You are editing this agent in another tab or window (since ${ago(info.acquired_at)}). ` +
      "This tab is read-only; take over to edit here (the other tab becomes read-only)."];
  }
  if (info) {
    const text = `Locked by ${info.holder} since ${ago(info.acquired_at)}`;
    return info.expired ? ["expired", `${text} — the lock has expired.`] : ["other", `${text}. Read-only until they finish.`];
  }
  return ["free", "Nobody holds the lock."];
}

// Draws the lock bar; `message` (a refusal, a loss) comes before the lock's state.
export function renderLockBar(lock, { canEdit, canBreak }, message = "") {
  const [mode, text] = lockText(lock, { canEdit });
  const info = lock.info;
  $("lockbar").dataset.mode = mode;
  $("lock-text").textContent = message ? `${message} ${text}` : text;
  $("lock-text").title = info ? `Taken ${fullTime(info.acquired_at)}, expires ${fullTime(info.expires_at)}` : "";
  const take = $("lock-take");
  take.hidden = !(canEdit && (mode === "yours" || mode === "expired" || mode === "free"));
  take.textContent = mode === "yours" ? "Take over here" : mode === "free" ? "Start editing" : "Take over";
  $("lock-break").hidden = !(canEdit && canBreak && mode === "other");
}
