"""The studio's side of the sandbox service (tools_app.types.python.server).

The service is the deployment's own internal address, not a user URL, so it does not go
through the outbound address guard. Every request carries the run limits of the
studio's settings, so a run gets the same limits wherever it executes.
"""

from __future__ import annotations

from typing import Any

import httpx

from tools_app.types.python.isolation import RunLimits

STATUS_TIMEOUT = 10.0
# Beyond the run's own timeout and queue wait: the service's start and kill of the run.
SLACK_SECONDS = 15.0


class SandboxServiceError(Exception):
    """The service could not be asked (unreachable, or an unexpected answer)."""


async def remote_run(
    url: str,
    *,
    code: str,
    input: Any,  # noqa: A002
    timeout: float,
    limits: RunLimits,
    tenant: str,
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
        async with httpx.AsyncClient(timeout=wait, trust_env=False) as client:
            response = await client.post(url.rstrip("/") + "/run", json=body)
    except httpx.HTTPError as exc:
        return {"ok": False, "error": f"The sandbox service at {url} is unreachable: {exc}"}
    data = _json(response)
    if response.status_code == 200 and data is not None:
        return data
    message = (data or {}).get("error") or response.text[:500]
    if (data or {}).get("refused"):
        return {"ok": False, "refused": True, "error": message}
    return {"ok": False, "error": f"The sandbox service answered {response.status_code}: {message}"}


def remote_status(url: str, limits: RunLimits) -> dict[str, Any]:
    """The service's isolation as the console shows it; a clear refusal if unreachable."""
    try:
        response = httpx.post(
            url.rstrip("/") + "/status",
            json={"limits": limits.as_dict()},
            timeout=STATUS_TIMEOUT,
            trust_env=False,
        )
        data = _json(response)
        if response.status_code != 200 or data is None:
            raise SandboxServiceError(f"it answered {response.status_code}")
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
