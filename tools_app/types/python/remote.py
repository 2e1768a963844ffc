"""The studio's side of the sandbox service (tools_app.types.python.server).

The service is the deployment's own internal address, not a user URL, so it does not go
through the outbound address guard. Every request carries the shared secret
(STUDIO_SANDBOX_TOKEN) and the run limits of the studio's settings, so a run gets the
same limits wherever it executes. /run answers NDJSON: while the run waits for a slot of
the service's pool, `on_wait` hears why, then None once it runs; the last line is the
result.
"""

from __future__ import annotations

import json
from typing import Any

import httpx

from tools_app.types.python.isolation import RunLimits
from tools_app.types.python.pool import OnWait

STATUS_TIMEOUT = 10.0
# Beyond the run's own timeout and queue wait: the service's start and kill of the run.
SLACK_SECONDS = 15.0


class SandboxServiceError(Exception):
    """The service could not be asked (unreachable, or an unexpected answer)."""


def _headers(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def remote_run(
    url: str,
    *,
    token: str,
    code: str,
    input: Any,  # noqa: A002
    timeout: float,
    limits: RunLimits,
    tenant: str,
    on_wait: OnWait | None = None,
) -> dict[str, Any]:
    body = {
        "code": code,
        "input": input,
        "timeout": timeout,
        "tenant": tenant,
        "limits": limits.as_dict(),
    }
    wait = timeout + limits.queue_wait + SLACK_SECONDS
    try:
        async with (
            httpx.AsyncClient(timeout=wait, trust_env=False) as client,
            client.stream(
                "POST", url.rstrip("/") + "/run", json=body, headers=_headers(token)
            ) as response,
        ):
            if response.status_code != 200:
                await response.aread()
                return _refused(url, response)
            return await _result(response, on_wait)
    except httpx.HTTPError as exc:
        return {"ok": False, "error": f"The sandbox service at {url} is unreachable: {exc}"}


async def _result(response: httpx.Response, on_wait: OnWait | None) -> dict[str, Any]:
    """The last line; the lines before it say whether the run waits for a slot."""
    async for line in response.aiter_lines():
        try:
            data = json.loads(line) if line.strip() else None
        except ValueError:
            data = None
        if not isinstance(data, dict):
            continue
        if "state" not in data:
            return data
        if on_wait is not None:
            await on_wait(str(data.get("note") or "") if data["state"] == "waiting" else None)
    return {"ok": False, "error": "The sandbox service ended its answer without a result."}


def _refused(url: str, response: httpx.Response) -> dict[str, Any]:
    data = _json(response)
    message = (data or {}).get("error") or response.text[:500]
    if (data or {}).get("refused"):
        return {"ok": False, "refused": True, "error": message}
    return {"ok": False, "error": f"The sandbox service answered {response.status_code}: {message}"}


def remote_status(url: str, token: str, limits: RunLimits) -> dict[str, Any]:
    """The service's isolation as the console shows it; a clear refusal if unreachable
    or if it refuses the studio (a wrong token, limits above its maxima)."""
    try:
        response = httpx.post(
            url.rstrip("/") + "/status",
            json={"limits": limits.as_dict()},
            headers=_headers(token),
            timeout=STATUS_TIMEOUT,
            trust_env=False,
        )
        data = _json(response)
        if response.status_code != 200 or data is None:
            said = f": {data['error']}" if data and data.get("error") else ""
            raise SandboxServiceError(f"it answered {response.status_code}{said}")
    except (httpx.HTTPError, SandboxServiceError) as exc:
        return {
            "mode": None,
            "strong": False,
            "own_uid": False,
            "cgroup": None,
            "cgroup_problem": "",
            "refusal": f"The sandbox service at {url} cannot be asked: {exc}",
            "label": "",
            "limits": limits.as_dict(),
        }
    return data


def _json(response: httpx.Response) -> dict[str, Any] | None:
    try:
        data = response.json()
    except ValueError:
        return None
    return data if isinstance(data, dict) else None
