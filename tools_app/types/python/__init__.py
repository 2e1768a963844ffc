"""Python code tools: the author's code runs in a sandbox (tools_app.types.python.sandbox)
started fresh for every call, or in the docker-compose `sandbox` service when
settings.STUDIO_SANDBOX_URL is set (tools_app.types.python.server). Tool credentials are
never passed to this type: the sandbox receives only the code and the input."""

from __future__ import annotations

from typing import Any, ClassVar

from tools_app.types import ToolType

CODE_CONTRACT = (
    "Python 3 (standard library only). Write the body of `def run(input):` and `return` "
    'the output, e.g. `return {"sum": input["a"] + input["b"]}`; or write a module '
    "that defines `def run(input):` yourself (helpers allowed). `input` is the validated "
    "input object; the return value must be JSON. print() goes to the run's logs. Each "
    "call runs in a fresh isolated process: no network, no server environment or "
    "secrets, no database, limited CPU time, 512 MB of memory, the tool's timeout."
)


class PythonToolType(ToolType):
    kind = "python"
    label = "Python code (sandboxed)"
    config_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "code": {
                "type": "string",
                "title": "Code",
                "description": CODE_CONTRACT,
                "minLength": 1,
                "x-widget": "code",
            }
        },
        "required": ["code"],
        "additionalProperties": False,
    }

    async def execute(self, tool: Any, input: Any, context: Any) -> Any:  # noqa: A002
        from django.conf import settings

        from tools_app.execution import ToolError

        code = tool.config.get("code", "")
        if settings.STUDIO_SANDBOX_URL:
            result = await _remote(settings.STUDIO_SANDBOX_URL, code, input, tool.timeout_seconds)
        else:
            from tools_app.types.python.sandbox import sandbox_run

            result = await sandbox_run(
                code,
                input,
                timeout=tool.timeout_seconds,
                python=settings.STUDIO_PYTHON_EXECUTABLE,
            )
        context.isolation = result.get("isolation")
        for stream in ("stdout", "stderr"):
            if result.get(stream):
                context.log(f"[{stream}]\n{result[stream]}")
        if not result.get("ok"):
            if result.get("traceback"):
                context.log(f"[traceback]\n{result['traceback']}")
            raise ToolError(result.get("error") or "The code failed.")
        return result.get("output")


async def _remote(url: str, code: str, input: Any, timeout: float) -> dict[str, Any]:  # noqa: A002
    """The sandbox service is the deployment's own internal address, not a user URL, so
    it does not go through the web_fetch guard."""
    import httpx

    from tools_app.execution import ToolError

    try:
        async with httpx.AsyncClient(timeout=timeout + 10, trust_env=False) as client:
            response = await client.post(
                url.rstrip("/") + "/run", json={"code": code, "input": input, "timeout": timeout}
            )
    except httpx.HTTPError as exc:
        raise ToolError(f"The sandbox service at {url} is unreachable: {exc}") from None
    if response.status_code != 200:
        raise ToolError(
            f"The sandbox service answered {response.status_code}: {response.text[:500]}"
        )
    return response.json()


tool_type = PythonToolType()
