// One edit lock session per page (per tab): taken when the page opens (or by the server,
// on the admin's change page), renewed while the page is open, released when it is left,
// and named on every write (X-Edit-Lock), which the server refuses while another session
// holds the live lock. A second tab of the same user is refused like anyone else and may
// take the lock over; the first learns it at its next renewal or save.
//
// The id of the session a tab held is kept in sessionStorage (per tab, kept across a
// reload): a page that finds the lock held by that very session knows it is its own
// previous page, not another tab, and takes the lock over without asking.

import { ApiError, api, csrfToken } from "./api.js";

export const LOCK_HEADER = "X-Edit-Lock";

export class EditLockSession {
  // url: /api/agents/<slug>/lock/; username: who this page is signed in as;
  // onChange(session, message) after every change of state.
  constructor({ url, username, heartbeatMs, onChange = () => {} }) {
    this.url = url;
    this.username = username;
    this.heartbeatMs = heartbeatMs;
    this.onChange = onChange;
    this.info = null; // the lock as the server last described it (whoever holds it)
    this.mine = false; // this page's session holds it
    this.timer = null;
    this.storageKey = `editlock:${url}`;
  }

  get id() {
    return this.mine ? this.info.id : null;
  }

  // The headers a write from this page sends.
  headers() {
    return this.mine ? { [LOCK_HEADER]: String(this.info.id) } : {};
  }

  // The lock is held by this user's other tab, window or client.
  get heldByMyOtherSession() {
    return !this.mine && this.info != null && this.info.holder === this.username;
  }

  // Take the lock (takeOver: move this user's live lock to this page).
  async take({ takeOver = false } = {}) {
    try {
      const data = await api(this.url, { method: "POST", body: takeOver ? { take_over: true } : undefined });
      this.adopt(data.lock);
      return true;
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      const body = err.body || {};
      if (err.status === 423 && body.yours && !takeOver && this.wasMine(body.lock)) return this.take({ takeOver: true });
      this.lose(err.status === 423 ? body.lock : null, err.status === 423 ? "" : err.message);
      return false;
    }
  }

  // This tab held that session before (the page was reloaded, or left and opened again).
  wasMine(lock) {
    return lock != null && sessionStorage.getItem(this.storageKey) === String(lock.id);
  }

  // This page holds `info` (taken here, or by the server for this page).
  adopt(info) {
    this.info = info;
    this.mine = true;
    sessionStorage.setItem(this.storageKey, String(info.id));
    clearInterval(this.timer);
    this.timer = setInterval(() => this.renew(), this.heartbeatMs);
    this.onChange(this, "");
  }

  async renew() {
    if (!this.mine) return;
    try {
      const data = await api(`${this.url}?lock=${this.info.id}`, { method: "PUT" });
      this.info = data.lock;
      this.onChange(this, "");
    } catch (err) {
      if (!(err instanceof ApiError) || err.status === 0) return; // offline: try again later
      const taken = err.status === 423 ? err.body?.lock : null;
      this.lose(taken, taken ? "" : "You lost the edit lock.");
    }
  }

  // A write or a renewal was refused: `info` (a 423's lock, or null) holds the lock now.
  lose(info, message = "") {
    clearInterval(this.timer);
    this.mine = false;
    this.info = info || null;
    this.onChange(this, message);
  }

  // What the lock is now, for a page that does not hold it (polling).
  async refresh() {
    try {
      this.info = (await api(this.url)).lock;
      this.onChange(this, "");
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
    }
  }

  // The page is being left: end this session (keepalive lets the request outlive the page).
  release() {
    if (!this.mine) return;
    clearInterval(this.timer);
    fetch(`${this.url}?lock=${this.info.id}`, {
      method: "DELETE", keepalive: true, credentials: "same-origin", headers: { "X-CSRFToken": csrfToken() },
    });
  }
}
