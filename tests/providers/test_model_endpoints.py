"""Where a model call may go is the operator's decision (STUDIO_MODEL_API_BASES): the rule
itself, and every place an agent is saved (REST, admin, code definitions).

A canary model server listens on 127.0.0.1 in every test that could reach it; it must
never see a connection.
"""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import Client

from agents_core.definitions import Agent as AgentDefinition
from agents_core.definitions import DefinitionError
from agents_core.models import Agent, Revision
from providers.gate import allowed_origins, base_origin
from providers.model_endpoints import model_config_problems
from tests.agents_core.canary import canary_server
from tests.agents_core.factories import AgentFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def canary(settings):
    settings.STUDIO_MODEL_API_BASES = ["http://127.0.0.1:11434", "https://models.example.org"]
    with canary_server() as server:
        yield server
    assert server.connections == []


def studio_agent_body(**fields):
    return {"slug": "probe", "name": "Probe", "model": "openai/gpt-4o-mini", **fields}


# --- the rule -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("url", "origin"),
    [
        ("http://127.0.0.1:11434", "http://127.0.0.1:11434"),
        ("http://127.0.0.1:11434/v1/", "http://127.0.0.1:11434"),
        ("HTTP://LocalHost:8000/v1", "http://localhost:8000"),
        ("https://models.example.org/v1", "https://models.example.org:443"),
        ("https://models.example.org:443", "https://models.example.org:443"),
        ("http://models.example.org", "http://models.example.org:80"),
        ("http://[::1]:8080/v1", "http://[::1]:8080"),
        ("http://127.0.0.1:0/v1", "http://127.0.0.1:0"),
    ],
)
def test_a_base_is_compared_by_scheme_host_and_port(url, origin):
    assert base_origin(url) == origin


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        (None, "http:// or https://"),
        (42, "http:// or https://"),
        ("", "http:// or https://"),
        ("ftp://127.0.0.1:21", "http:// or https://"),
        ("file:///etc/passwd", "http:// or https://"),
        ("//127.0.0.1:11434", "http:// or https://"),
        ("http://", "no host"),
        ("http://user:pw@127.0.0.1:11434", "user name or password"),
        ("http://127.0.0.1:11434@evil.example", "user name or password"),
        ("http://127.0.0.1:11434\\@evil.example", "backslashes"),
        ("http://127.0.0.1:11434\t/v1", "control characters"),
        ("http://127.0.0.1:11434/v1?x=1", "query"),
        ("http://127.0.0.1:11434#frag", "fragment"),
        ("http://127.0.0.1:port", "invalid port"),
        ("http://ｍodels.example.org", "ASCII"),
    ],
)
def test_a_base_that_cannot_be_compared_safely_is_refused(url, reason):
    with pytest.raises(ValueError, match=reason):
        base_origin(url)


@pytest.mark.parametrize(
    "base",
    [
        "http://127.0.0.1:11435/v1",  # another port
        "https://127.0.0.1:11434/v1",  # another scheme
        "http://localhost:11434/v1",  # another name for the same address
        "http://127.0.0.1/v1",  # the default port, not 11434
        "http://models.example.org/v1",  # http, where https is listed
        "http://10.0.0.5:8000/v1",
    ],
)
def test_only_a_listed_server_matches(settings, base):
    settings.STUDIO_MODEL_API_BASES = ["http://127.0.0.1:11434", "https://models.example.org"]
    problems = model_config_problems(model="openai/x", metadata={"api_base": base})
    assert [(p.field, p.path) for p in problems] == [("metadata", "$.api_base")]
    assert "STUDIO_MODEL_API_BASES" in problems[0].message


def test_a_listed_server_matches_whatever_the_path(settings):
    settings.STUDIO_MODEL_API_BASES = ["http://127.0.0.1:11434", "https://models.example.org"]
    for base in (
        "http://127.0.0.1:11434",
        "http://127.0.0.1:11434/v1",
        "https://models.example.org/a/b",
    ):
        assert model_config_problems(model="openai/x", metadata={"api_base": base}) == []


def test_nothing_is_allowed_until_the_operator_lists_it(settings):
    settings.STUDIO_MODEL_API_BASES = []
    problems = model_config_problems(
        model="openai/x", default_options={"modelSettings": {"apiBase": "http://127.0.0.1:11434"}}
    )
    assert [(p.field, p.path) for p in problems] == [("default_options", "$.modelSettings.apiBase")]


@pytest.mark.parametrize(
    "entry", ["ftp://models:21", "http://models:8000/v1", "models:8000", "http://a@models:1"]
)
def test_a_bad_entry_in_the_operators_list_fails_loudly(settings, entry):
    settings.STUDIO_MODEL_API_BASES = ["http://127.0.0.1:11434", entry]
    with pytest.raises(ImproperlyConfigured, match="STUDIO_MODEL_API_BASES"):
        allowed_origins()


@pytest.mark.parametrize("key", ["api_base", "apiBase", "base_url", "baseURL", "baseUrl"])
def test_every_spelling_of_the_base_in_model_settings_is_checked(settings, key):
    settings.STUDIO_MODEL_API_BASES = []
    problems = model_config_problems(
        model="openai/x", run_options={"modelSettings": {key: "http://127.0.0.1:9/v1"}}
    )
    assert [(p.field, p.path) for p in problems] == [("options", f"$.modelSettings.{key}")]


def test_a_runs_model_settings_replace_the_agents(settings):
    settings.STUDIO_MODEL_API_BASES = ["http://127.0.0.1:11434"]
    saved = {"modelSettings": {"api_base": "http://127.0.0.1:9/v1"}}
    run = {"modelSettings": {"api_base": "http://127.0.0.1:11434/v1"}}
    # The run's settings are the ones the call reads, so only they count...
    assert model_config_problems(model="openai/x", default_options=saved, run_options=run) == []
    # ...and a run without its own reads the agent's.
    problems = model_config_problems(model="openai/x", default_options=saved, run_options={})
    assert [(p.field, p.path) for p in problems] == [
        ("default_options", "$.modelSettings.api_base")
    ]


def test_model_settings_that_are_not_an_object_are_refused():
    problems = model_config_problems(model="openai/x", run_options={"modelSettings": "fast"})
    assert [(p.field, p.path, p.message) for p in problems] == [
        ("options", "$.modelSettings", "must be a JSON object")
    ]


@pytest.mark.parametrize(
    "model",
    ["ollama/llama3", "ollama_chat/llama3", "hosted_vllm/qwen", "openai_like/x", "llamafile/x"],
)
def test_a_self_hosted_provider_needs_a_listed_base(settings, model):
    settings.STUDIO_MODEL_API_BASES = ["http://127.0.0.1:11434"]
    problems = model_config_problems(model=model)
    assert [(p.field, p.path) for p in problems] == [("model", "$")]
    assert "set api_base" in problems[0].message
    assert model_config_problems(model=model, metadata={"api_base": "http://127.0.0.1:11434"}) == []


@pytest.mark.parametrize(
    "model", ["huggingface/https://evil.example/v1", "huggingface/http://127.0.0.1:9"]
)
def test_a_model_string_cannot_carry_an_address(model):
    problems = model_config_problems(model=model)
    assert [(p.field, p.path) for p in problems] == [("model", "$")]


def test_a_hosted_provider_without_a_base_goes_to_its_own_endpoint(settings):
    settings.STUDIO_MODEL_API_BASES = []
    for model in ("openai/gpt-4o-mini", "anthropic/claude-3-5-haiku", "studio/scripted"):
        assert model_config_problems(model=model, metadata={"team": "x"}) == []


# --- REST -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("fields", "field", "message_start"),
    [
        ({"metadata": {"api_base": "CANARY"}}, "metadata", "$.api_base: "),
        ({"metadata": {"apiBase": "CANARY"}}, "metadata", "$.apiBase: "),
        (
            {"default_options": {"modelSettings": {"api_base": "CANARY", "api_key": "sk-mine"}}},
            "default_options",
            "$.modelSettings.api_base: ",
        ),
        (
            {"default_options": {"modelSettings": {"baseURL": "CANARY"}}},
            "default_options",
            "$.modelSettings.baseURL: ",
        ),
        ({"model": "ollama/llama3"}, "model", "ollama/ models call a server"),
        ({"model": "huggingface/CANARY"}, "model", "a model string cannot name an address"),
    ],
)
def test_creating_an_agent_with_a_refused_base_is_a_400_and_writes_nothing(
    api, canary, fields, field, message_start
):
    body = studio_agent_body(**_fill(fields, canary.base))

    response = api.post("/api/agents/", body, format="json")

    assert response.status_code == 400, response.json()
    errors = response.json()[field]
    assert errors[0].startswith(message_start), errors
    assert not Agent.objects.filter(slug="probe").exists()


def _fill(value, base):
    """`value` with the canary's base URL where it says CANARY."""
    if isinstance(value, dict):
        return {key: _fill(item, base) for key, item in value.items()}
    return value.replace("CANARY", base) if isinstance(value, str) else value


@pytest.mark.parametrize(
    "change",
    [
        {"metadata": {"api_base": "CANARY"}},
        {"default_options": {"modelSettings": {"apiBase": "CANARY"}}},
        {"model": "ollama/llama3"},
    ],
)
def test_updating_an_agent_with_a_refused_base_is_a_400_and_changes_nothing(
    api, owner, canary, change
):
    agent = AgentFactory(slug="probe", owner=owner, model="openai/gpt-4o-mini")
    before = (agent.model, agent.metadata, agent.default_options, agent.version)

    patched = api.patch("/api/agents/probe/", _fill(change, canary.base), format="json")
    put = api.put(
        "/api/agents/probe/", studio_agent_body(**_fill(change, canary.base)), format="json"
    )

    assert patched.status_code == put.status_code == 400, patched.json()
    assert set(patched.json()) == set(change)
    agent.refresh_from_db()
    assert (agent.model, agent.metadata, agent.default_options, agent.version) == before
    assert not Revision.objects.filter(agent=agent).exists()


def test_a_listed_base_and_a_self_hosted_model_with_it_are_saved(api, canary):
    response = api.post(
        "/api/agents/",
        studio_agent_body(
            model="ollama/llama3",
            metadata={"api_base": "http://127.0.0.1:11434"},
            default_options={"modelSettings": {"api_base": "https://models.example.org/v1"}},
        ),
        format="json",
    )
    assert response.status_code == 201, response.json()


def test_a_save_that_leaves_the_model_configuration_alone_is_not_held_up_by_it(api, owner, canary):
    # Saved while the operator listed the base; the list no longer holds it.
    AgentFactory(slug="probe", owner=owner, metadata={"api_base": canary.base})
    response = api.patch("/api/agents/probe/", {"description": "Renamed."}, format="json")
    assert response.status_code == 200, response.json()
    refused = api.patch("/api/agents/probe/", {"model": "openai/gpt-4o"}, format="json")
    assert refused.status_code == 400
    assert refused.json()["metadata"][0].startswith("$.api_base: ")


# --- admin ----------------------------------------------------------------------------------
@pytest.fixture
def staff(admin_user) -> Client:
    client = Client()
    client.force_login(admin_user)
    return client


def admin_add_form(**fields) -> dict:
    return {
        "slug": "probe",
        "name": "Probe",
        "model": "openai/gpt-4o-mini",
        "instructions": '"Be brief."',
        "default_options": "{}",
        "metadata": "{}",
        "notification_policy": "{}",
        "tool_bindings-TOTAL_FORMS": "0",
        "tool_bindings-INITIAL_FORMS": "0",
        "subagent_bindings-TOTAL_FORMS": "0",
        "subagent_bindings-INITIAL_FORMS": "0",
        **fields,
    }


def test_the_admin_refuses_a_new_agent_with_a_refused_base(staff, canary):
    response = staff.post(
        "/admin/agents_core/agent/add/",
        admin_add_form(metadata=f'{{"api_base": "{canary.base}"}}'),
    )

    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert errors["metadata"][0].startswith("$.api_base: http://127.0.0.1:")
    assert not Agent.objects.filter(slug="probe").exists()


def test_the_admin_refuses_a_self_hosted_model_without_a_base(staff, canary):
    response = staff.post("/admin/agents_core/agent/add/", admin_add_form(model="ollama/llama3"))
    assert response.status_code == 200
    assert "ollama/ models call a server" in response.context["adminform"].form.errors["model"][0]
    ok = staff.post(
        "/admin/agents_core/agent/add/",
        admin_add_form(model="ollama/llama3", metadata='{"api_base": "http://127.0.0.1:11434"}'),
    )
    assert ok.status_code == 302


def _change_form(response, **changes) -> dict:
    """What the browser posts back from the change page, with `changes`."""
    form = response.context["adminform"].form
    data = {
        name: form[name].value()
        for name, field in form.fields.items()
        if not field.disabled and form[name].value() is not None
    }
    for inline in response.context["inline_admin_formsets"]:
        management = inline.formset.management_form
        for name in management.fields:
            data[f"{inline.formset.prefix}-{name}"] = management[name].value()
    data.update(changes)
    return data


def test_the_admin_refuses_a_refused_base_on_a_studio_agents_change_page(staff, admin_user, canary):
    agent = AgentFactory(slug="probe", owner=admin_user, model="openai/gpt-4o-mini")
    url = f"/admin/agents_core/agent/{agent.pk}/change/"
    page = staff.get(url)
    # The page's edit-lock session: each later load of the page continues it, as the same
    # tab does (a plain reload would be a second session, refused while this one is live).
    session = f"{url}?editor_lock={page.context['adminform'].form['editor_lock'].value()}"

    response = staff.post(
        url,
        _change_form(page, default_options=f'{{"modelSettings": {{"api_base": "{canary.base}"}}}}'),
    )

    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert errors["default_options"][0].startswith("$.modelSettings.api_base: ")
    agent.refresh_from_db()
    assert agent.default_options == {}
    # The model is the editor's field there: a self-hosted one needs a listed base too.
    response = staff.post(url, _change_form(staff.get(session), editor_model="ollama/llama3"))
    assert response.status_code == 200
    assert "ollama/ models" in response.context["adminform"].form.errors["editor_model"][0]
    agent.refresh_from_db()
    assert (agent.model, agent.version) == ("openai/gpt-4o-mini", 1)
    # With a listed base saved beside it, the same change is saved.
    page = staff.get(session)
    staff.post(url, _change_form(page, metadata='{"api_base": "http://127.0.0.1:11434"}'))
    response = staff.post(url, _change_form(staff.get(session), editor_model="ollama/llama3"))
    assert response.status_code == 302
    agent.refresh_from_db()
    assert (agent.model, agent.metadata) == (
        "ollama/llama3",
        {"api_base": "http://127.0.0.1:11434"},
    )


# --- code definitions -----------------------------------------------------------------------
def test_a_code_agent_with_a_refused_base_fails_when_it_is_defined(canary):
    with pytest.raises(DefinitionError) as refused:
        AgentDefinition(
            id="shared-probe",
            name="Shared probe",
            model="openai/gpt-4o-mini",
            metadata={"api_base": canary.base},
        )
    assert str(refused.value).startswith(
        "Agent 'shared-probe': its model call would be refused: metadata $.api_base: "
        f"{canary.origin} is not a model server this studio may call"
    )
    with pytest.raises(DefinitionError, match="default_options \\$.modelSettings.apiBase"):
        AgentDefinition(
            id="shared-probe",
            name="Shared probe",
            model="openai/gpt-4o-mini",
            default_options={"modelSettings": {"apiBase": canary.base}},
        )
    with pytest.raises(DefinitionError, match="model ollama/ models call a server"):
        AgentDefinition(id="shared-probe", name="Shared probe", model="ollama/llama3")


def test_a_code_agent_with_a_listed_base_is_defined(canary):
    definition = AgentDefinition(
        id="shared-probe",
        name="Shared probe",
        model="ollama/llama3",
        metadata={"api_base": "http://127.0.0.1:11434"},
    )
    assert definition.metadata == {"api_base": "http://127.0.0.1:11434"}
