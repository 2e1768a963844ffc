// Results of async tool runs, as they land: pushed over the /ws/tool-runs/ websocket, and
// polled from /api/tool-runs/<id>/ while the socket is down, so a result is never missed.

import { api } from "./api.js";

export const FINAL = new Set(["completed", "failed", "cancelled", "timeout"]);
export const isFinal = (run) => Boolean(run) && FINAL.has(run.status);

export class ToolRunWatcher {
  constructor({ url = "/ws/tool-runs/", pollMs = 1500, safetyMs = 4000, onState = () => {}, onRunState = () => {} } = {}) {
    this.url = url;
    this.onRunState = onRunState; // ({watch, id, note}): a run waits for a sandbox slot (note) or runs (null)
    this.pollMs = pollMs;
    this.safetyMs = safetyMs;
    this.onState = onState; // "open" | "closed": for the connection dot in the console
    this.waiting = new Map(); // run id -> callback(run)
    this.landed = new Map(); // run id -> final run that arrived before anyone waited for it
    this.retries = 0;
    this.pollTimer = null;
    this.connect();
  }

  get open() {
    return this.socket?.readyState === WebSocket.OPEN;
  }

  connect() {
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    const socket = new WebSocket(`${scheme}//${location.host}${this.url}`);
    this.socket = socket;
    socket.addEventListener("open", () => {
      this.retries = 0;
      this.onState("open");
      this.stopPolling();
      // Anything that finished while we were disconnected was not pushed: ask once.
      this.pollOnce();
    });
    socket.addEventListener("message", (event) => {
      let data;
      try {
        data = JSON.parse(event.data);
      } catch {
        return;
      }
      if (data?.type === "tool-run" && data.id) this.deliver(data, "socket");
      else if (data?.type === "tool-run-state") this.onRunState(data);
    });
    socket.addEventListener("close", () => {
      if (this.socket !== socket) return;
      this.onState("closed");
      this.startPolling();
      // Reconnect with a growing delay; polling covers the gap.
      const delay = Math.min(30000, 500 * 2 ** this.retries++);
      this.reconnectTimer = setTimeout(() => this.connect(), delay);
    });
  }

  deliver(run, via) {
    if (!isFinal(run)) {
      this.waiting.get(run.id)?.({ ...run, via }, false);
      return;
    }
    const callback = this.waiting.get(run.id);
    if (callback) {
      this.waiting.delete(run.id);
      callback({ ...run, via }, true);
    } else {
      this.landed.set(run.id, { ...run, via });
    }
    if (!this.waiting.size) this.stopPolling();
  }

  // callback(run, final) is called with the finished run (and with progress, if pushed).
  watch(runId, callback) {
    const early = this.landed.get(runId);
    if (early) {
      this.landed.delete(runId);
      callback(early, true);
      return;
    }
    this.waiting.set(runId, callback);
    if (this.open) {
      // The push normally comes first; one late look covers a push lost in between
      // (a run that finished before the socket joined its group, a layer hiccup).
      setTimeout(() => this.pollOnce([runId]), this.safetyMs);
    } else {
      this.pollOnce([runId]);
      this.startPolling();
    }
  }

  forget(runId) {
    this.waiting.delete(runId);
  }

  startPolling() {
    if (this.pollTimer || !this.waiting.size) return;
    this.pollTimer = setInterval(() => this.pollOnce(), this.pollMs);
  }

  stopPolling() {
    clearInterval(this.pollTimer);
    this.pollTimer = null;
  }

  async pollOnce(ids = [...this.waiting.keys()]) {
    for (const id of ids) {
      try {
        const run = await api(`/api/tool-runs/${encodeURIComponent(id)}/`);
        if (isFinal(run) && this.waiting.has(id)) this.deliver(run, "poll");
      } catch {
        // A failed poll is retried on the next tick (or the socket delivers first).
      }
    }
  }

  close() {
    clearTimeout(this.reconnectTimer);
    this.stopPolling();
    const socket = this.socket;
    this.socket = null;
    socket?.close();
  }
}
