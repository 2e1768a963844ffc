"""Clean what was stored before secrets were redacted where they are used: every secret
value stored today (provider keys, tool and source credentials, OAuth tokens, web search
keys, decrypted with the app's own keys; the server's provider keys from its environment)
is replaced by tools_app.redaction.MARK wherever it was written down: run and tool-call
errors and outputs, stream events, messages, tool runs, spans, notification, test-case
and document errors. Rows are found by the database (the value, or one of its encodings,
inside the field's text) and only those are rewritten. Without encryption keys there is
nothing to decrypt, and nothing is changed."""

from __future__ import annotations

import os
from typing import Any

from django.db import migrations
from django.db.models import Q, TextField
from django.db.models.functions import Cast

ENCRYPTED = [
    ("providers", "ProviderCredential", "secret_encrypted"),
    ("tools_app", "Tool", "credentials_encrypted"),
    ("tools_app", "ToolSource", "credentials_encrypted"),
    ("tools_app", "OAuthToken", "token_encrypted"),
    ("tools_app", "WebSearchSetting", "secret_encrypted"),
]
STORED = [
    ("agents_core", "Run", ("error",)),
    ("agents_core", "ToolCall", ("error", "output", "model_output")),
    ("agents_core", "StreamEvent", ("payload",)),
    ("agents_core", "Message", ("parts",)),
    ("agents_core", "NotificationRecord", ("error",)),
    ("tools_app", "ToolRun", ("error", "errors", "output", "model_output", "logs")),
    ("traces", "Span", ("error", "attributes")),
    ("evals", "CaseResult", ("error", "turns")),
    ("knowledge", "Document", ("error",)),
]
FORMS_PER_QUERY = 200


def _stored_secrets(apps: Any) -> Any:
    from providers.catalog import PROVIDERS
    from tools_app.crypto import CredentialsUnavailable, decrypt
    from tools_app.redaction import Secrets, basic_pair

    secrets = Secrets()
    for app, model, field in ENCRYPTED:
        rows = apps.get_model(app, model).objects.exclude(**{field: ""})
        for token in rows.values_list(field, flat=True).iterator():
            try:
                data = decrypt(token)
            except CredentialsUnavailable:
                continue  # no keys, or not this deployment's: nothing to look for
            secrets.add_all(data)
            if isinstance(data, dict) and data.get("username"):
                secrets.add(basic_pair(data["username"], data.get("password", "")))
    for provider in PROVIDERS.values():
        if provider.env_key:
            secrets.add(os.environ.get(provider.env_key))
    return secrets


def _clean(model: Any, fields: tuple[str, ...], secrets: Any) -> None:
    forms = secrets.forms()
    texts = {f"_text_{field}": Cast(field, TextField()) for field in fields}
    for start in range(0, len(forms), FORMS_PER_QUERY):
        match = Q()
        for form in forms[start : start + FORMS_PER_QUERY]:
            for name in texts:
                match |= Q(**{f"{name}__contains": form})
        for row in model.objects.annotate(**texts).filter(match).iterator():
            changed = [f for f in fields if secrets.value(getattr(row, f)) != getattr(row, f)]
            for field in changed:
                setattr(row, field, secrets.value(getattr(row, field)))
            if changed:
                row.save(update_fields=changed)


def redact_stored_secrets(apps: Any, schema_editor: Any) -> None:
    secrets = _stored_secrets(apps)
    if not secrets:
        return
    for app, model, fields in STORED:
        _clean(apps.get_model(app, model), fields, secrets)


class Migration(migrations.Migration):
    dependencies = [
        ("tools_app", "0007_names_per_owner"),
        ("providers", "0001_initial"),
        ("agents_core", "0013_import_job"),
        ("traces", "0002_span_tool_run"),
        ("evals", "0002_suite_run_lease"),
        ("knowledge", "0001_initial"),
    ]

    operations = [
        migrations.RunPython(redact_stored_secrets, migrations.RunPython.noop, elidable=True),
    ]
