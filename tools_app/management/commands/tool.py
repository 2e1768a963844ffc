"""`python manage.py tool execute NAME '<json>'`: run a tool and print its result as JSON.

    manage.py tool execute weather_lookup '{"city": "Paris"}'
    manage.py tool execute web_fetch '{"url": "https://example.com"}'
    manage.py tool execute weather_lookup --schema          # the input schema
    manage.py tool rotate-credentials    # after putting a new key first in STUDIO_ENCRYPTION_KEYS
    manage.py tool execute weather_lookup '{"city": "Paris"}' \
        --url http://127.0.0.1:8000 --token KEY

stdout gets the tool's result (for a failed run that still has an output, such as a
web_fetch `isError` object, that output); the reason goes to stderr. Exit codes:
0 completed, 1 the run failed (crash, timeout, invalid output, isError), 2 the input was
rejected (JSON syntax or schema), 3 no such tool, or the studio could not be reached.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

EXIT_OK, EXIT_FAILED, EXIT_INPUT, EXIT_UNAVAILABLE = 0, 1, 2, 3


class Command(BaseCommand):
    help = "Run a tool (in-process, or through a running studio with --url)."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        execute = sub.add_parser("execute", help="Execute a tool and print its result.")
        execute.add_argument("name")
        execute.add_argument("input", nargs="?", default="{}", help="The input as JSON text.")
        execute.add_argument("--schema", action="store_true", help="Print the input schema.")
        execute.add_argument("--user", help="Run as this user (their tools and run history).")
        execute.add_argument("--mode", choices=["sync", "async"], default="sync")
        execute.add_argument("--url", help="Base URL of a running studio (uses its API).")
        execute.add_argument("--token", help="API token for --url (Authorization: Token).")
        sub.add_parser(
            "rotate-credentials",
            help="Re-encrypt stored credentials with the first encryption key.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["action"] == "rotate-credentials":
            from tools_app.crypto import credentials_rotate

            count = credentials_rotate()
            self.stdout.write(f"Re-encrypted the credentials of {count} tools and tool sources.")
            return
        if options["url"]:
            code = self._remote(options)
        else:
            code = self._local(options)
        if code:
            sys.exit(code)

    # --- in-process ---------------------------------------------------------------------
    def _local(self, options: dict[str, Any]) -> int:
        from tools_app.api.runs import tool_schema_data
        from tools_app.models import Tool
        from tools_app.selectors import tool_get
        from tools_app.services.execute import tool_execute
        from tools_app.services.runs import tool_run_data

        user = None
        if options["user"]:
            user = get_user_model().objects.filter(username=options["user"]).first()
            if user is None:
                raise CommandError(f"No user {options['user']!r}.")
            tool = tool_get(user=user, name=options["name"])
        else:
            # Without --user this is the operator's shell: every live tool is reachable.
            # Names are unique per owner: a name several users have needs --user.
            found = list(Tool.objects.live().filter(name=options["name"])[:2])
            if len(found) > 1:
                raise CommandError(
                    f"Several users have a tool named {options['name']!r}: add --user."
                )
            tool = found[0] if found else None
        if tool is None:
            self.stderr.write(f"No tool named {options['name']!r}.")
            return EXIT_UNAVAILABLE
        if options["schema"]:
            self._print(tool_schema_data(tool)["input_schema"])
            return EXIT_OK
        run = tool_execute(tool=tool, input_text=options["input"], user=user, mode=options["mode"])
        return self._report(tool_run_data(run), getattr(run, "input_rejected", False))

    # --- through a running studio -------------------------------------------------------
    def _remote(self, options: dict[str, Any]) -> int:
        import httpx

        base = options["url"].rstrip("/")
        headers = {"Accept": "application/json"}
        if options["token"]:
            headers["Authorization"] = f"Token {options['token']}"
        name = options["name"]
        try:
            with httpx.Client(
                timeout=None,  # noqa: S113 - the tool's own timeout applies
                headers=headers,
                trust_env=False,
            ) as client:
                if options["schema"]:
                    response = client.get(f"{base}/api/tools/{name}/schema")
                else:
                    response = client.post(
                        f"{base}/api/tools/{name}/execute",
                        params={"mode": options["mode"]},
                        json={"input_text": options["input"]},
                    )
        except httpx.HTTPError as exc:
            self.stderr.write(f"Cannot reach {base}: {exc}")
            return EXIT_UNAVAILABLE
        try:
            body = response.json()
        except ValueError:
            body = {"detail": response.text[:500]}
        if response.status_code in (401, 403, 404):
            self.stderr.write(f"{response.status_code}: {body.get('detail', body)}")
            return EXIT_UNAVAILABLE
        if options["schema"]:
            self._print(body.get("input_schema"))
            return EXIT_OK
        if response.status_code >= 500 or "status" not in body:
            self.stderr.write(f"{response.status_code}: {body}")
            return EXIT_FAILED
        return self._report(body, response.status_code == 400)

    # --- output -------------------------------------------------------------------------
    def _report(self, run: dict[str, Any], input_rejected: bool) -> int:
        if run["status"] == "completed":
            self._print(run["output"])
            return EXIT_OK
        if run["status"] in ("pending", "running"):
            self._print({"id": run["id"], "status": run["status"]})
            return EXIT_OK
        if run.get("output") is not None and not input_rejected:
            self._print(run["output"])
        self.stderr.write(run["error"] or "The run failed.")
        for error in run.get("errors") or []:
            self.stderr.write(f"  {error['path']}: {error['message']}")
        if run.get("logs"):
            self.stderr.write(run["logs"].rstrip())
        return EXIT_INPUT if input_rejected else EXIT_FAILED

    def _print(self, value: Any) -> None:
        self.stdout.write(json.dumps(value, indent=2, ensure_ascii=False))
