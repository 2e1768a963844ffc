// Small fetch wrapper for the studio's REST API (/api/...): JSON in and out, the session's
// CSRF token on writes, and one error type that keeps the server's per-field messages.

export class ApiError extends Error {
  constructor(status, body) {
    super(ApiError.summary(status, body));
    this.status = status;
    this.body = body;
  }

  // {"field": ["msg"]} bodies -> {"field": "msg; msg"}; "detail"/"errors" stay in body.
  get fieldErrors() {
    const out = {};
    if (!this.body || typeof this.body !== "object" || Array.isArray(this.body)) return out;
    for (const [key, value] of Object.entries(this.body)) {
      if (["detail", "code", "errors"].includes(key)) continue;
      out[key] = flattenMessages(value);
    }
    return out;
  }

  static summary(status, body) {
    if (body && typeof body === "object" && body.detail) return String(body.detail);
    if (status === 0) return "The studio did not answer (network error).";
    if (status >= 500) return `The server failed (HTTP ${status}).`;
    if (status === 403) return "You are not allowed to do that.";
    if (status === 404) return "Not found.";
    return `Request refused (HTTP ${status}).`;
  }
}

// DRF nests messages for nested serializers ({"config": {"url": ["..."]}}): flatten to text.
export function flattenMessages(value) {
  if (value == null) return "";
  if (typeof value === "string") return value;
  if (Array.isArray(value)) return value.map(flattenMessages).filter(Boolean).join(" ");
  if (typeof value === "object") {
    return Object.entries(value)
      .map(([k, v]) => `${k}: ${flattenMessages(v)}`)
      .join(" ");
  }
  return String(value);
}

export function csrfToken() {
  const input = document.querySelector("input[name=csrfmiddlewaretoken]");
  if (input) return input.value;
  const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
  return match ? decodeURIComponent(match[1]) : "";
}

export async function api(path, { method = "GET", body, signal, headers: extra = {} } = {}) {
  const headers = { Accept: "application/json", ...extra };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (method !== "GET") headers["X-CSRFToken"] = csrfToken();
  let response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: "same-origin",
      signal,
    });
  } catch (err) {
    if (err.name === "AbortError") throw err;
    throw new ApiError(0, null);
  }
  const text = await response.text();
  let data = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = { detail: text.slice(0, 300) };
    }
  }
  if (!response.ok) throw new ApiError(response.status, data);
  return data;
}

// DRF list endpoints may or may not paginate: accept both shapes.
export function listOf(data) {
  if (Array.isArray(data)) return data;
  if (data && Array.isArray(data.results)) return data.results;
  return [];
}
