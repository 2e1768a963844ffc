// A tool's connection to the signed-in user's account (OAuth 2.0 authorization code with
// PKCE, tools_app/auth): its status, "Connect" (a plain link: the server redirects to the
// authorization server and back) and "Disconnect" (revoked at the server when it can be).
// The token itself never reaches the page.

import { api } from "./api.js";
import { fill, h } from "./dom.js";

const when = (iso) => (iso ? new Date(iso).toLocaleString() : "");

export async function showConnection(tool, box) {
  const url = `/api/tools/${encodeURIComponent(tool.name)}/connection`;
  let status;
  try {
    status = await api(url);
  } catch {
    return;
  }
  if (!status.connectable) return;
  render(status, new URLSearchParams(location.search).has("connected") ? "Connected." : "");

  function render(current, note) {
    const connect = h("a", { class: "button primary", id: "connect-account", href: current.connect_url || `/oauth/tools/${encodeURIComponent(tool.name)}/connect` },
      current.connected ? "Connect again" : "Connect");
    const disconnect = current.connected
      ? h("button", { type: "button", class: "secondary", id: "disconnect-account", onclick: () => remove() }, "Disconnect")
      : null;
    fill(box,
      h("h3", {}, "Your account"),
      h("p", { id: "connection-status", "data-connected": String(Boolean(current.connected)) },
        current.connected
          ? `Connected${current.scope ? ` (scope: ${current.scope})` : ""} since ${when(current.connected_at)}` +
            (current.expires_at ? `; the access token ${current.expired ? "expired" : "expires"} ${when(current.expires_at)}` +
              (current.refreshable ? " and is refreshed when needed." : ".") : ".")
          : "Not connected: this tool calls its API as you, with your own account. Connect it first."),
      h("div", { class: "tool-actions" }, connect, disconnect),
      note ? h("p", { class: "muted", id: "connection-note", role: "status" }, note) : null);
    box.hidden = false;
  }

  async function remove() {
    try {
      const result = await api(url, { method: "DELETE" });
      render({ ...status, connected: false }, result.detail);
    } catch (err) {
      render(status, err.message);
    }
  }
}
