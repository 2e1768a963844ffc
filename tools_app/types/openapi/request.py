"""Build an HTTP request from an OpenAPI tool's input and its recipe (Tool.config).

Serialization follows the OpenAPI parameter styles (3.x `style`/`explode`; Swagger 2.0
`collectionFormat` was mapped to the same names at import):
- path `simple` (the default; `label` and `matrix` too); each value is percent-escaped
  with no safe characters, so a value can never add a path segment (`../`, `/`, `?`);
- query `form` (explode: repeated keys; else comma-joined), `spaceDelimited`,
  `pipeDelimited`, `tabDelimited`, `deepObject` (`key[prop]=v`);
- header `simple`, not percent-escaped (control characters refused); cookie `form`.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote, urlencode

from tools_app.errors import ToolError


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, dict | list):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


def _escape(text: str, allow_reserved: bool = False) -> str:
    return quote(text, safe=":/?#[]@!$&'()*+,;=" if allow_reserved else "")


def _path_value(name: str, value: Any, style: str, explode: bool) -> str:
    if isinstance(value, list):
        items = [_escape(_scalar(v)) for v in value]
        joined = ",".join(items)
        if style == "label":
            return "." + (".".join(items) if explode else joined)
        if style == "matrix":
            return "".join(f";{name}={i}" for i in items) if explode else f";{name}={joined}"
        return joined
    if isinstance(value, dict):
        pairs = [(_escape(str(k)), _escape(_scalar(v))) for k, v in value.items()]
        text = ",".join(f"{k}={v}" if explode else f"{k},{v}" for k, v in pairs)
        return {"label": ".", "matrix": f";{name}="}.get(style, "") + text
    text = _escape(_scalar(value))
    return {"label": f".{text}", "matrix": f";{name}={text}"}.get(style, text)


def _header_value(name: str, value: Any, explode: bool) -> str:
    """`simple` style without percent-escaping (a header is not a URL: "a,b" stays
    "a,b"); a control character, which could end the header, is refused."""
    if isinstance(value, list):
        text = ",".join(_scalar(v) for v in value)
    elif isinstance(value, dict):
        pairs = [(str(k), _scalar(v)) for k, v in value.items()]
        text = ",".join(f"{k}={v}" if explode else f"{k},{v}" for k, v in pairs)
    else:
        text = _scalar(value)
    if any(ord(c) < 32 or ord(c) == 127 for c in text):
        raise ToolError(f"The header {name} may not contain control characters.")
    return text


def _query_pairs(name: str, value: Any, style: str, explode: bool) -> list[tuple[str, str]]:
    if isinstance(value, list):
        if style == "form" and explode:
            return [(name, _scalar(v)) for v in value]
        separator = {"spaceDelimited": " ", "pipeDelimited": "|", "tabDelimited": "\t"}.get(
            style, ","
        )
        return [(name, separator.join(_scalar(v) for v in value))]
    if isinstance(value, dict):
        if style == "deepObject":
            return [(f"{name}[{k}]", _scalar(v)) for k, v in value.items()]
        if explode:
            return [(str(k), _scalar(v)) for k, v in value.items()]
        return [(name, ",".join(f"{k},{_scalar(v)}" for k, v in value.items()))]
    return [(name, _scalar(value))]


def with_fixed(input: dict[str, Any], fixed: list[dict[str, Any]] | None) -> dict[str, Any]:  # noqa: A002
    """The input with the tool's fixed parameter values (config.fixed, [{in, name, value}]:
    what the user gave once when connecting, not asked of the model) filled in."""
    if not fixed:
        return input
    merged = {**input}
    for param in fixed:
        merged[param["in"]] = {**(merged.get(param["in"]) or {}), param["name"]: param["value"]}
    return merged


def build_request(config: dict[str, Any], input: dict[str, Any]) -> dict[str, Any]:  # noqa: A002
    """{method, url, headers, content} for net.fetch, before auth is applied."""
    input = with_fixed(input, config.get("fixed"))  # noqa: A001
    path = config["path"]
    query: list[tuple[str, str]] = []
    headers: dict[str, str] = {}
    cookies: list[str] = []
    for param in config.get("parameters", []):
        where, name = param["in"], param["name"]
        group = input.get(where) or {}
        if name not in group:
            continue
        value = group[name]
        style, explode = param.get("style", "simple"), bool(param.get("explode"))
        if where == "path":
            path = path.replace("{" + name + "}", _path_value(name, value, style, explode))
        elif where == "query":
            query.extend(_query_pairs(name, value, style, explode))
        elif where == "header":
            headers[name] = _header_value(name, value, explode)
        elif where == "cookie":
            cookies.append(f"{name}={_escape(_scalar(value))}")
    missing = [part for part in path.split("/") if part.startswith("{") and part.endswith("}")]
    if missing:
        raise ToolError(f"Missing path parameter {missing[0]}")
    url = config["base_url"].rstrip("/") + path
    if query:
        url += ("&" if "?" in url else "?") + urlencode(query, quote_via=quote)
    if cookies:
        headers["Cookie"] = "; ".join(cookies)
    content = None
    body = config.get("body")
    if body and "body" in input:
        if body.get("media_type") == "application/x-www-form-urlencoded":
            content = urlencode({k: _scalar(v) for k, v in (input["body"] or {}).items()}).encode()
        else:
            content = json.dumps(input["body"]).encode()
        headers["Content-Type"] = body.get("media_type", "application/json")
    headers.setdefault("Accept", "application/json")
    return {"method": config["method"], "url": url, "headers": headers, "content": content}
