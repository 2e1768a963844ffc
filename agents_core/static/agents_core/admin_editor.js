// Heartbeat for the edit lock on the admin's agent change page: renew while the page is
// open, release when it closes. The server decides everything; this only keeps time.
(() => {
  const RENEW_EVERY_MS = 30000;
  const csrf = () => (document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/) || [])[1] || "";

  function start() {
    const badge = document.getElementById("editor-lock");
    // Only a locked badge has a holder; a non-holder's renew is refused and says who holds it.
    if (!badge || !badge.dataset.holder) return;
    const url = badge.dataset.lockUrl;
    const call = (method, extra = {}) =>
      fetch(url, { method, credentials: "same-origin", headers: { "X-CSRFToken": csrf() }, ...extra });
    const timer = setInterval(async () => {
      const response = await call("PUT");
      if (!response.ok) {
        clearInterval(timer);
        const body = await response.json().catch(() => ({}));
        badge.textContent = body.detail || "You lost the edit lock.";
        badge.classList.add("errornote");
      }
    }, RENEW_EVERY_MS);
    // Release this page's lock session only: the next page (after a save) has its own.
    const release = `${url}?lock=${badge.dataset.lockId}`;
    window.addEventListener("pagehide", () =>
      fetch(release, { method: "DELETE", keepalive: true, credentials: "same-origin", headers: { "X-CSRFToken": csrf() } }));
  }

  document.addEventListener("DOMContentLoaded", start);
})();
