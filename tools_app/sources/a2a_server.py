"""Studio agents served over A2A (a2a-sdk), authenticated by DRF token.

    GET  /a2a/<slug>/.well-known/agent-card.json   the agent card
    POST /a2a/<slug>/                               JSON-RPC: message/send, tasks/get...

The caller must see the agent (its owner, or anyone for code agents). A message starts
a task that runs the agent to completion through the agent side's `run_agent`
(tools_app.agent_side), as an agent tool does; the reply is the task's artifact. Tasks live
in memory per process and per agent, and belong to the user who started them (the
SDK's owner resolver keys them by user name).
"""

from __future__ import annotations

import asyncio
from typing import Any

from channels.db import database_sync_to_async

from tools_app.agent_side import agent_side_get
from tools_app.sources.asgi import A2A_PREFIX, guarded, respond_json

CARD_PATH = "/.well-known/agent-card.json"


@database_sync_to_async
def _agent(user: Any, slug: str) -> Any:
    side = agent_side_get()
    return side.agent_get(user, slug) if side is not None else None


def _base_url(scope: dict[str, Any]) -> str:
    host = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"host"), "")
    return f"{scope.get('scheme', 'http')}://{host}"


def agent_card(agent: Any, url: str) -> Any:
    from a2a.types.a2a_pb2 import (
        AgentCapabilities,
        AgentCard,
        AgentInterface,
        AgentSkill,
        HTTPAuthSecurityScheme,
        SecurityRequirement,
        SecurityScheme,
    )

    return AgentCard(
        name=agent.name,
        description=agent.description or f"The studio agent {agent.slug}.",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="1.0")
        ],
        capabilities=AgentCapabilities(streaming=False),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[
            AgentSkill(
                id=agent.slug,
                name=agent.name,
                tags=["agent-studio"],
                description=agent.description or agent.name,
            )
        ],
        security_schemes={
            "token": SecurityScheme(
                http_auth_security_scheme=HTTPAuthSecurityScheme(
                    scheme="bearer",
                    description="A studio API token: 'Authorization: Token <key>' or "
                    "'Bearer <key>'.",
                )
            )
        },
        security_requirements=[SecurityRequirement(schemes={"token": {}})],
    )


def _executor(slug: str) -> Any:
    from a2a.helpers import (
        get_message_text,
        new_task_from_user_message,
        new_text_message,
        new_text_part,
    )
    from a2a.server.agent_execution import AgentExecutor
    from a2a.server.tasks import TaskUpdater
    from a2a.types.a2a_pb2 import TaskState

    class StudioAgentExecutor(AgentExecutor):
        async def execute(self, context: Any, event_queue: Any) -> None:
            from tools_app.execution import ExecutionContext

            user = context.call_context.state["studio_user"]
            task = context.current_task or new_task_from_user_message(context.message)
            await event_queue.enqueue_event(task)
            updater = TaskUpdater(event_queue, task.id, task.context_id)
            await updater.update_status(TaskState.TASK_STATE_WORKING)
            try:
                reply = await agent_side_get().run_agent(
                    slug, get_message_text(context.message), ExecutionContext(user=user)
                )
            except Exception as exc:  # the run's failure is the task's failure, with its reason
                await updater.failed(
                    new_text_message(str(exc), task_id=task.id, context_id=task.context_id)
                )
                return
            await updater.add_artifact([new_text_part(reply)], name="reply")
            await updater.complete()

        async def cancel(self, context: Any, event_queue: Any) -> None:
            updater = TaskUpdater(event_queue, context.task_id, context.context_id)
            await updater.cancel()

    return StudioAgentExecutor()


def _context_builder() -> Any:
    from a2a.auth.user import User
    from a2a.server.context import ServerCallContext
    from a2a.server.routes import ServerCallContextBuilder

    class StudioUser(User):
        def __init__(self, user: Any) -> None:
            self.user = user

        @property
        def is_authenticated(self) -> bool:
            return True

        @property
        def user_name(self) -> str:
            return self.user.get_username()

    class StudioContextBuilder(ServerCallContextBuilder):
        def build(self, request: Any) -> ServerCallContext:
            user = request.scope["studio_user"]
            # The SDK reads the A2A-Version header from state["headers"].
            return ServerCallContext(
                user=StudioUser(user), state={"studio_user": user, "headers": dict(request.headers)}
            )

    return StudioContextBuilder()


class _Apps:
    """One JSON-RPC app per agent slug (its task store lives as long as the process)."""

    def __init__(self) -> None:
        self.apps: dict[tuple[int, str], Any] = {}

    def get(self, agent: Any, url: str) -> Any:
        key = (id(asyncio.get_running_loop()), agent.slug)
        if key not in self.apps:
            from a2a.server.request_handlers import DefaultRequestHandler
            from a2a.server.routes import create_jsonrpc_routes
            from a2a.server.tasks import InMemoryTaskStore
            from starlette.applications import Starlette

            handler = DefaultRequestHandler(
                agent_executor=_executor(agent.slug),
                task_store=InMemoryTaskStore(),
                agent_card=agent_card(agent, url),
            )
            routes = create_jsonrpc_routes(handler, rpc_url="/", context_builder=_context_builder())
            self.apps[key] = Starlette(routes=routes)
        return self.apps[key]


_apps = _Apps()


async def a2a_asgi(scope: dict[str, Any], receive: Any, send: Any) -> None:
    slug, _, rest = scope["path"][len(A2A_PREFIX) :].partition("/")
    user = await guarded(scope, send)
    if user is None:
        return
    agent = await _agent(user, slug) if slug else None
    if agent is None:
        await respond_json(send, 404, {"detail": f"No agent {slug!r}."})
        return
    url = f"{_base_url(scope)}{A2A_PREFIX}{slug}/"
    if "/" + rest == CARD_PATH and scope["method"] == "GET":
        from a2a.server.request_handlers.response_helpers import agent_card_to_dict

        await respond_json(send, 200, agent_card_to_dict(agent_card(agent, url)))
        return
    app = _apps.get(agent, url)
    await app(
        {
            **scope,
            "path": "/" + rest,
            "raw_path": ("/" + rest).encode(),
            "root_path": "",
            "studio_user": user,
        },
        receive,
        send,
    )
