// The edit lock on the admin's agent change page. The server took this page's lock
// session when it rendered the page (the badge carries its id); this renews it while the
// page is open, releases it when the page is left (not when the form is submitted: the
// server ends it after a save, and a form sent back with an error keeps it), and makes the
// page read-only once another session took the lock. Times read "2 min ago".
//
// It shares the studio's modules (frontend/static/js/lib/), served under the same /static/.

import { EditLockSession } from "../js/lib/edit_lock.js";
import { refreshTimes } from "../js/lib/format.js";

function readOnly(message) {
  for (const field of document.querySelectorAll("[name^=editor_]:not([type=hidden])")) field.disabled = true;
  for (const button of document.querySelectorAll(".submit-row input[type=submit]")) button.disabled = true;
  const badge = document.getElementById("editor-lock");
  badge.textContent = message;
  badge.classList.add("errornote");
}

function lostMessage(session) {
  const info = session.info;
  if (!info) return "You lost the edit lock: reload the page to edit again. Nothing more is saved from this page.";
  const who = session.heldByMyOtherSession ? "you, in another tab or window" : info.holder;
  return `The lock is now held by ${who}: this page is read-only. Reload it to see the latest.`;
}

function start() {
  refreshTimes();
  setInterval(() => refreshTimes(), 30_000);
  const form = document.querySelector("#agent_form");
  const reset = document.querySelector("[name=editor_instructions_reset]");
  form?.addEventListener("submit", (event) => {
    const saving = event.submitter?.name?.startsWith("_");
    if (saving && reset?.checked && !confirm("Reset the instructions to the code value? The override is dropped (the revisions keep it).")) {
      event.preventDefault();
      return;
    }
    submitting = true;
  });
  const badge = document.getElementById("editor-lock");
  if (!badge) return;
  const session = new EditLockSession({
    url: badge.dataset.lockUrl,
    username: badge.dataset.username,
    heartbeatMs: Number(badge.dataset.heartbeatMs) || 30_000,
    onChange: (changed) => {
      if (!changed.mine && held) readOnly(lostMessage(changed));
      held = changed.mine;
    },
  });
  let held = false;
  if (badge.dataset.lockId) {
    session.adopt({ id: Number(badge.dataset.lockId), holder: badge.dataset.username });
    // A URL naming the session (after a take-over or a refused save) is this page's alone:
    // a copy of it opened in another tab must start its own session, not share this one.
    const url = new URL(window.location.href);
    if (url.searchParams.has("editor_lock")) {
      url.searchParams.delete("editor_lock");
      history.replaceState(null, "", url);
    }
  } else if (badge.dataset.otherId && session.wasMine({ id: badge.dataset.otherId })) {
    // The lock is held by this tab's previous page (a reload): continue here.
    document.getElementById("editor-take-over")?.click();
  }
  window.addEventListener("pagehide", () => {
    if (!submitting) session.release();
  });
}

let submitting = false;
document.addEventListener("DOMContentLoaded", start);
