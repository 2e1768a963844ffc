"""Python code tools: the author's code runs in a sandbox (tools_app.types.python.sandbox)
started fresh for every call, or in the docker-compose `sandbox` service when
settings.STUDIO_SANDBOX_URL is set (tools_app.types.python.server). Tool credentials are
never passed to this type: the sandbox receives only the code and the input.

The studio's settings decide every run's limits (sent along to the service) and, for
local runs, how this host isolates them (isolation.HostConfig). A host that can only
isolate weakly refuses Python tools unless the operator accepted that explicitly.
"""

from __future__ import annotations

from typing import Any, ClassVar

from django.conf import settings

from tools_app.types import ToolType
from tools_app.types.python.isolation import HostConfig, RunLimits, capabilities
from tools_app.types.python.remote import remote_run, remote_status
from tools_app.types.python.sandbox import sandbox_run

CODE_CONTRACT = (
    "Python 3 (standard library only). Write the body of `def run(input):` and `return` "
    'the output, e.g. `return {"sum": input["a"] + input["b"]}`; or write a module '
    "that defines `def run(input):` yourself (helpers allowed). `input` is the validated "
    "input object; the return value must be JSON. print() goes to the run's logs. Each "
    "call runs in a fresh isolated process: no network, no server environment or "
    "secrets, no database, a private /tmp, limited processes, memory and CPU (the test "
    "console shows this server's limits), and the tool's timeout."
)
# Beyond its own timeout, a run may wait this long to start (its bubblewrap, its
# cgroup) and to be killed; the pipeline's deadline adds it to the queue wait.
START_GRACE_SECONDS = 10.0


def host_config() -> HostConfig:
    return HostConfig(
        isolation=settings.STUDIO_SANDBOX_ISOLATION,
        allow_weak=settings.STUDIO_SANDBOX_ALLOW_WEAK,
        cgroup=settings.STUDIO_SANDBOX_CGROUP,
        uid_base=settings.STUDIO_SANDBOX_UID_BASE,
        uid_count=settings.STUDIO_SANDBOX_UID_COUNT,
        state_dir=settings.STUDIO_SANDBOX_STATE_DIR,
        python=settings.STUDIO_PYTHON_EXECUTABLE,
        pool_size=settings.STUDIO_SANDBOX_POOL_SIZE,
        spares=settings.STUDIO_SANDBOX_SPARES,
        owner_slots=settings.STUDIO_SANDBOX_OWNER_SLOTS,
    )


def run_limits() -> RunLimits:
    return RunLimits(
        memory_mb=settings.STUDIO_SANDBOX_MEMORY_MB,
        pids=settings.STUDIO_SANDBOX_PIDS,
        cpus=settings.STUDIO_SANDBOX_CPUS,
        tmp_mb=settings.STUDIO_SANDBOX_TMP_MB,
        max_timeout=settings.STUDIO_SANDBOX_MAX_TIMEOUT,
        queue_wait=settings.STUDIO_SANDBOX_QUEUE_WAIT,
        output_mb=settings.STUDIO_SANDBOX_OUTPUT_MB,
    )


def isolation_status() -> dict[str, Any]:
    """What a Python tool run gets here: {mode, strong, own_uid, cgroup, refusal, label,
    limits, service}. Probes the host (or asks the service) once per process."""
    limits = run_limits()
    if settings.STUDIO_SANDBOX_URL:
        status = remote_status(settings.STUDIO_SANDBOX_URL, settings.STUDIO_SANDBOX_TOKEN, limits)
    else:
        status = capabilities(host_config()).summary(limits)
    return {**status, "service": settings.STUDIO_SANDBOX_URL or None}


def owner_key(tool: Any, context: Any) -> str:
    """Whose share of the sandbox pool a run takes: the user who runs it (else the tool's
    owner). One function, so that keying the share by workspace changes only this."""
    user_id = getattr(context.user, "pk", None)
    return f"user:{user_id}" if user_id is not None else f"user:{tool.owner_id or ''}"


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

    def max_timeout(self) -> float | None:
        return settings.STUDIO_SANDBOX_MAX_TIMEOUT

    def wait_seconds(self, tool: Any) -> float:
        # The sandbox enforces the tool's timeout from the moment the code starts; a run
        # may first wait for a pool slot, so the pipeline waits for both.
        return tool.timeout_seconds + settings.STUDIO_SANDBOX_QUEUE_WAIT + START_GRACE_SECONDS

    async def execute(self, tool: Any, input: Any, context: Any) -> Any:  # noqa: A002
        from tools_app.errors import ToolError

        code = tool.config.get("code", "")
        tenant, limits = owner_key(tool, context), run_limits()
        if settings.STUDIO_SANDBOX_URL:
            result = await remote_run(
                settings.STUDIO_SANDBOX_URL,
                token=settings.STUDIO_SANDBOX_TOKEN,
                code=code,
                input=input,
                timeout=tool.timeout_seconds,
                limits=limits,
                tenant=tenant,
                on_wait=context.waiting,
            )
        else:
            result = await sandbox_run(
                code,
                input,
                timeout=tool.timeout_seconds,
                host=host_config(),
                limits=limits,
                tenant=tenant,
                on_wait=context.waiting,
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


tool_type = PythonToolType()
