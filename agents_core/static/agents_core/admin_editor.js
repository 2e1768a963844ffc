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
    window.addEventListener("pagehide", () => call("DELETE", { keepalive: true }));
  }

  document.addEventListener("DOMContentLoaded", start);
})();
