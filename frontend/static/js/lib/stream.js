// The event stream of one thread: a websocket that survives reloads and lost connections
// without losing or duplicating an event.
//
// Every sequenced event ({type, runId, seq, ...}) is handed to `onEvent` exactly once and
// in seq order:
// - the stream remembers the last seq it delivered; a reconnect asks the server for
//   `?after=<seq>` (the server replays what was missed, then goes live);
// - an event whose seq is at or below the last one is a duplicate and is dropped (a
//   replay overlapping live events, or a REST catch-up overlapping the socket);
// - an event that skips ahead reveals a gap: it waits in a buffer while the missing range
//   is fetched from `/api/threads/<id>/events/?after=<seq>`, then everything is
//   delivered in order;
// - events without a seq (the `partial` answer to `get-partial`) pass straight through.
// Reconnects back off exponentially (with jitter) up to `maxDelay`.

export const STATES = Object.freeze({
  IDLE: "idle", CONNECTING: "connecting", OPEN: "open", RECONNECTING: "reconnecting", CLOSED: "closed",
});

// REST events may come flat ({type, seq, runId, ...}) or as stored rows ({seq, type, payload}).
export function normalizeEvent(raw) {
  if (raw && raw.payload && typeof raw.payload === "object" && !Array.isArray(raw.payload) && !("toolCallId" in raw) && !("delta" in raw)) {
    const { payload, ...rest } = raw;
    const event = { ...payload, ...rest };
    if (event.runId === undefined && rest.run !== undefined) event.runId = rest.run;
    delete event.payload;
    return event;
  }
  return raw;
}

function eventsOf(data) {
  if (Array.isArray(data)) return data;
  return (data && (data.results || data.events)) || [];
}

export class ThreadStream {
  constructor({
    wsUrl, eventsUrl, onEvent, onState = () => {}, onGap = () => {}, after = 0,
    // Default: reload the page, which rebuilds the conversation from what is stored.
    onReset = () => { if (typeof location !== "undefined") location.reload(); },
    fetchImpl = (...args) => fetch(...args), WebSocketImpl = WebSocket,
    minDelay = 400, maxDelay = 8000,
  }) {
    this.wsUrl = wsUrl;
    this.eventsUrl = eventsUrl;
    this.onEvent = onEvent;
    this.onState = onState;
    this.onGap = onGap;
    this.onReset = onReset;
    this.fetchImpl = fetchImpl;
    this.WebSocketImpl = WebSocketImpl;
    this.minDelay = minDelay;
    this.maxDelay = maxDelay;
    this.lastSeq = after;
    this.pending = new Map(); // seq -> event, waiting for a gap to close
    this.filling = null; // the in-flight gap fetch
    this.fillRetry = 0;
    this.socket = null;
    this.state = STATES.IDLE;
    this.attempt = 0;
    this.timer = null;
    this.closedByUs = false;
    this.stats = { delivered: 0, duplicates: 0, gaps: 0, fetched: 0, reconnects: 0 };
    this._online = () => { if (this.state === STATES.RECONNECTING) this._reconnectNow(); };
    if (typeof window !== "undefined") window.addEventListener("online", this._online);
  }

  _setState(state, detail = {}) {
    this.state = state;
    this.onState(state, { attempt: this.attempt, lastSeq: this.lastSeq, ...detail });
  }

  // Delivers one event (from the socket, a replay or REST) at most once, in seq order.
  ingest(raw) {
    const event = normalizeEvent(raw);
    if (!event || typeof event !== "object") return;
    if (event.type === "reset") {
      // The server lost events it had sent (their run's process died before storing them):
      // what follows `lastSeq` is what is stored now.
      this.lastSeq = Number(event.lastSeq);
      this.pending.clear();
      this.onReset(event);
      return;
    }
    if (event.seq === undefined || event.seq === null) {
      this.onEvent(event);
      return;
    }
    const seq = Number(event.seq);
    if (seq <= this.lastSeq || this.pending.has(seq)) {
      this.stats.duplicates += 1;
      return;
    }
    if (seq === this.lastSeq + 1) {
      this._deliver(event);
      this._drain();
      return;
    }
    this.pending.set(seq, event);
    this._fillGap();
  }

  _deliver(event) {
    this.lastSeq = Number(event.seq);
    this.stats.delivered += 1;
    try {
      this.onEvent(event);
    } catch (error) {
      // A rendering bug must not stall the stream (the next events still apply).
      console.error("stream: event handler failed", event, error);
    }
  }

  _drain() {
    while (this.pending.has(this.lastSeq + 1)) {
      const next = this.pending.get(this.lastSeq + 1);
      this.pending.delete(this.lastSeq + 1);
      this._deliver(next);
    }
    // Anything buffered at or below lastSeq arrived twice meanwhile.
    for (const seq of this.pending.keys()) {
      if (seq <= this.lastSeq) { this.pending.delete(seq); this.stats.duplicates += 1; }
    }
    if (this.pending.size === 0) this.fillRetry = 0;
  }

  get hasGap() {
    return this.pending.size > 0;
  }

  _fillGap() {
    if (this.filling) return this.filling;
    this.stats.gaps += 1;
    this.onGap({ after: this.lastSeq, waiting: this.pending.size });
    this.filling = this.fetchAfter(this.lastSeq)
      .catch((error) => console.warn("stream: gap fetch failed", error))
      .finally(() => {
        this.filling = null;
        if (this.hasGap) {
          // The missing events were not there yet (or the fetch failed): try again soon.
          this.fillRetry += 1;
          const delay = Math.min(this.maxDelay, this.minDelay * 2 ** Math.min(this.fillRetry, 5));
          setTimeout(() => { if (this.hasGap) this._fillGap(); }, delay);
        }
      });
    return this.filling;
  }

  // Fetches and ingests every stored event after `after` (following pages if any).
  async fetchAfter(after) {
    let url = `${this.eventsUrl}?after=${after}`;
    for (let page = 0; page < 1000 && url; page++) {
      const response = await this.fetchImpl(url, { credentials: "same-origin", headers: { Accept: "application/json" } });
      if (!response.ok) throw new Error(`GET ${url}: ${response.status}`);
      const data = await response.json();
      const events = eventsOf(data);
      this.stats.fetched += events.length;
      for (const event of events) this.ingest(event);
      if (data && data.next) url = data.next;
      else if (data && data.has_more && events.length) url = `${this.eventsUrl}?after=${this.lastSeq}`;
      else url = null;
    }
  }

  // The REST catch-up before the socket: history renders even if the socket is slow.
  catchUp() {
    return this.fetchAfter(this.lastSeq);
  }

  connect() {
    this.closedByUs = false;
    clearTimeout(this.timer);
    this._setState(this.attempt ? STATES.RECONNECTING : STATES.CONNECTING);
    const separator = this.wsUrl.includes("?") ? "&" : "?";
    let socket;
    try {
      socket = new this.WebSocketImpl(`${this.wsUrl}${separator}after=${this.lastSeq}`);
    } catch (error) {
      this._scheduleReconnect();
      return;
    }
    this.socket = socket;
    socket.onopen = () => {
      this.attempt = 0;
      this._setState(STATES.OPEN);
    };
    socket.onmessage = (message) => {
      let data;
      try {
        data = JSON.parse(message.data);
      } catch {
        console.warn("stream: not JSON", message.data);
        return;
      }
      for (const event of Array.isArray(data) ? data : [data]) this.ingest(event);
    };
    socket.onclose = (closeEvent) => {
      if (this.socket !== socket) return;
      this.socket = null;
      if (this.closedByUs) {
        this._setState(STATES.CLOSED);
        return;
      }
      this._scheduleReconnect(closeEvent && closeEvent.code);
    };
    socket.onerror = () => {}; // onclose follows and reconnects
  }

  _scheduleReconnect(code) {
    this.attempt += 1;
    this.stats.reconnects += 1;
    const base = Math.min(this.maxDelay, this.minDelay * 2 ** Math.min(this.attempt - 1, 6));
    const delay = Math.round(base * (0.75 + Math.random() * 0.5));
    this._setState(STATES.RECONNECTING, { delay, code });
    this.timer = setTimeout(() => this.connect(), delay);
  }

  _reconnectNow() {
    clearTimeout(this.timer);
    this.connect();
  }

  // Drops the connection as a network failure would (tests and the "reconnect" button).
  dropConnection() {
    if (this.socket) this.socket.close(4000, "client drop");
  }

  send(message) {
    if (!this.socket || this.socket.readyState !== 1) return false;
    this.socket.send(JSON.stringify(message));
    return true;
  }

  get isOpen() {
    return Boolean(this.socket && this.socket.readyState === 1);
  }

  close() {
    this.closedByUs = true;
    clearTimeout(this.timer);
    if (typeof window !== "undefined") window.removeEventListener("online", this._online);
    if (this.socket) this.socket.close(1000, "bye");
    else this._setState(STATES.CLOSED);
  }
}
