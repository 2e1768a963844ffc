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

// One line of a list of sources (the connectors and sources pages): whether the user's
// account is connected, and a Connect link that comes back to `next` after the
// authorization. `status` is a connection answer ({connected, connect_url}).
export function accountLine(status, { next, sourceId, notConnected }) {
  const href = `${status.connect_url}?next=${encodeURIComponent(next)}`;
  return h("div", { class: "account-line", "data-connected": String(Boolean(status.connected)) },
    h("span", { class: status.connected ? "ok" : "muted" }, status.connected ? "Your account is connected." : notConnected),
    " ", h("a", { class: "button secondary", href, "data-connect": sourceId }, status.connected ? "Connect again" : "Connect your account"));
}

// The sign-in of an MCP source with the server's own OAuth, on the sources page: the
// connection is fetched after the card is shown (the slot fills in when it answers).
export function serverSignin(source) {
  const slot = h("div", { class: "signin small", "data-signin": source.id },
    h("strong", {}, "Sign-in: OAuth (the server's own)"),
    source.config.oauth?.issuer ? h("span", { class: "muted" }, ` at ${source.config.oauth.issuer}`) : null);
  api(`/api/sources/${source.id}/connection`).then((status) => {
    if (!status.connectable) return;
    const listed = (source.remote_tools || []).length > 0;
    slot.append(accountLine(status, {
      next: "/sources/",
      sourceId: source.id,
      notConnected: "Not connected: its tools are listed and called with your own account.",
    }));
    if (status.connected && !listed) slot.append(h("div", { class: "muted" }, "Press Refresh to list its tools."));
  }).catch(() => {});
  return slot;
}
