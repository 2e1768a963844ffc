// The address guard's verdict on a URL, next to the field that holds it. Every
// <input data-url-check> on the page (there at load or added later), and every input given
// to watchUrl(), is checked as it is typed (POST /api/url-check): a line under it says when
// calls to that URL will be refused and why, when it is not judged now (a host from the
// tool's input, a name that does not resolve), or when it reaches a private network the
// operator allows. Saving is never blocked by it: every call is checked when it is made.

import { api } from "./api.js";
import { h } from "./dom.js";

const WAIT_MS = 350;

// One verdict as a line of text; `withUrl` prefixes it with the URL (the tool page).
export function verdictLine(verdict, { withUrl = false } = {}) {
  return h("div", {
    class: `url-verdict is-${verdict.status}${verdict.private_network ? " is-private" : ""}`,
    dataset: { status: verdict.status },
  },
  withUrl ? [h("code", {}, verdict.url), " "] : null,
  verdict.status === "refused" ? `⚠ ${verdict.message}` : verdict.message);
}

export function watchUrl(input) {
  if (!input || input.dataset.urlWatched) return;
  input.dataset.urlWatched = "1";
  const box = h("div", { class: "url-verdict-box", "aria-live": "polite" });
  input.after(box);
  let timer = null;
  let asked = 0;
  async function check() {
    clearTimeout(timer);
    const url = input.value.trim();
    const mine = ++asked;
    if (!/^[a-z][a-z0-9+.-]*:\/\/./i.test(url)) {
      box.replaceChildren();
      delete box.dataset.status;
      return;
    }
    let verdict;
    try {
      verdict = await api("/api/url-check", { method: "POST", body: { url } });
    } catch {
      verdict = null; // a hint only: the save and every call are checked on the server
    }
    if (mine !== asked) return; // a newer value is being checked
    const quiet = !verdict || (verdict.status === "allowed" && !verdict.private_network);
    box.replaceChildren(...(quiet ? [] : [verdictLine(verdict)]));
    box.dataset.status = verdict ? verdict.status : "failed";
  }
  input.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(check, WAIT_MS);
  });
  input.addEventListener("change", check);
  check();
}

function scan(node) {
  if (node.nodeType !== Node.ELEMENT_NODE) return;
  if (node.matches("input[data-url-check]")) watchUrl(node);
  node.querySelectorAll("input[data-url-check]").forEach(watchUrl);
}

new MutationObserver((records) => {
  for (const record of records) record.addedNodes.forEach(scan);
}).observe(document.body, { childList: true, subtree: true });
scan(document.body);
