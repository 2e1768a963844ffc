"""deploy/kubernetes/: the base and the example overlay render (tests/deploy/kustomize.py),
every object is valid for the Kubernetes API (kubernetes-validate's schemas, offline), and
the deployment keeps its promises: probes, resources and a non-root, read-only pod for
every studio process; one beat; an autoscaler on the run workers; secrets only from the
Secret; only environment variables the studio reads; the sandbox as docker-compose runs it."""

from __future__ import annotations

import copy
import importlib.util
import re
import shlex
from typing import Any

import kubernetes_validate
import pytest
import yaml
from django.core.management import get_commands

from tests.deploy.kustomize import containers, find, pod_spec, render
from tests.source import ROOT, settings_environment_variables

KUBERNETES = ROOT / "deploy" / "kubernetes"
BASE = KUBERNETES / "base"
OVERLAY = KUBERNETES / "overlays" / "example"
# The oldest Kubernetes the manifests promise to work with, and the newest schemas known.
VERSIONS = ("1.29.0", kubernetes_validate.utils.latest_version())
STUDIO_PROCESSES = {"web", "runs", "worker", "beat"}
# Variables the manifests set that the studio's settings do not read, and who reads them.
READ_ELSEWHERE = {
    "AWS_ACCESS_KEY_ID": "Lance (the knowledge store on S3)",
    "AWS_SECRET_ACCESS_KEY": "Lance",
    "AWS_REGION": "Lance",
    "AWS_ENDPOINT": "Lance",
    "AWS_ALLOW_HTTP": "Lance",
    "LITELLM_LOCAL_MODEL_COST_MAP": "litellm",
    "HOME": "libraries that cache under the home directory",
    "POD_NAME": "the run worker's command line (its --name)",
}


@pytest.fixture(scope="module")
def base() -> list[dict[str, Any]]:
    return render(BASE)


@pytest.fixture(scope="module")
def overlay() -> list[dict[str, Any]]:
    return render(OVERLAY)


@pytest.fixture(scope="module")
def secret_example() -> dict[str, Any]:
    return yaml.safe_load((KUBERNETES / "secret.example.yaml").read_text())


def component(objects: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    return next(
        o
        for o in objects
        if o["kind"] == kind and o["metadata"]["labels"]["app.kubernetes.io/component"] == name
    )


def deployments(objects: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {
        o["metadata"]["labels"]["app.kubernetes.io/component"]: o
        for o in objects
        if o["kind"] == "Deployment"
    }


def invalid(obj: dict[str, Any]) -> list[str]:
    errors = []
    for version in VERSIONS:
        try:
            kubernetes_validate.validate(obj, version, strict=True)
        except kubernetes_validate.ValidationError as exc:
            errors.append(f"{version}: {'.'.join(map(str, exc.path))}: {exc.message}")
    return errors


@pytest.mark.parametrize("directory", [BASE, OVERLAY], ids=["base", "overlay"])
def test_every_object_is_valid_for_the_kubernetes_api(directory):
    objects = render(directory)
    assert len(objects) >= 10
    problems = {f"{o['kind']}/{o['metadata']['name']}": invalid(o) for o in objects}
    assert not {name: errors for name, errors in problems.items() if errors}


def test_every_object_is_labelled_for_kubectl_selectors(overlay):
    # docs/operations.md applies the ConfigMap and the migration Job alone by component,
    # and restarts every Deployment by part-of.
    for obj in overlay:
        labels = obj["metadata"]["labels"]
        assert labels["app.kubernetes.io/part-of"] == "agent-studio", obj["metadata"]["name"]
        assert labels["app.kubernetes.io/component"], obj["metadata"]["name"]
    first = [
        o["kind"]
        for o in overlay
        if o["metadata"]["labels"]["app.kubernetes.io/component"] in ("config", "migrate")
    ]
    assert first == ["ConfigMap", "Job"]


def test_a_broken_manifest_fails_the_validation(base):
    web = copy.deepcopy(find(base, kind="Deployment", name="studio-web"))
    assert not invalid(web)
    misspelt = copy.deepcopy(web)
    container = misspelt["spec"]["template"]["spec"]["containers"][0]
    container["readinesProbe"] = container.pop("readinessProbe")
    assert invalid(misspelt)
    wrong_type = copy.deepcopy(web)
    wrong_type["spec"]["replicas"] = "two"
    assert invalid(wrong_type)


def what_runs(argv: list[str]) -> tuple[str, ...]:
    """The program a command line runs, whatever starts it: ("execute_runs",),
    ("celery", "worker"), ("tools_app.types.python.server",)."""
    for prefix in (["python", "manage.py"], ["studio"], ["python", "-m"]):
        if argv[: len(prefix)] == prefix:
            return (argv[len(prefix)],)
    if argv[:3] == ["celery", "-A", "studio"]:
        return ("celery", argv[3])
    return (argv[0],)


def test_the_processes_are_those_of_docker_compose(base):
    assert set(deployments(base)) == STUDIO_PROCESSES | {"sandbox"}
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    commands = {name: c[0]["command"] for name, c in deployments_containers(base).items()}
    assert commands["web"] == shlex.split("studio serve --host 0.0.0.0 --port 8000")
    for name in ("runs", "worker", "beat", "sandbox"):
        assert what_runs(commands[name]) == what_runs(compose[name]["command"]), name
    assert what_runs(commands["runs"]) == ("execute_runs",)
    job = find(base, kind="Job", name="studio-migrate")
    assert pod_spec(job)["containers"][0]["command"] == ["studio", "migrate", "--noinput"]


def deployments_containers(objects: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    return {name: pod_spec(d)["containers"] for name, d in deployments(objects).items()}


def test_every_command_and_probe_names_something_that_exists(base):
    known = get_commands()
    for container in containers(base):
        probes = [
            container.get(p, {}).get("exec")
            for p in ("startupProbe", "readinessProbe", "livenessProbe")
        ]
        for argv in [container["command"]] + [p["command"] for p in probes if p]:
            words = shlex.split(argv[2]) if argv[:2] == ["sh", "-c"] else argv
            words = words[1:] if words[0] == "exec" else words
            if words[0] == "studio":
                assert words[1] in known, words
            elif words[0] == "celery":
                assert words[1:3] == ["-A", "studio"], words
            elif words[:2] == ["python", "-m"]:
                assert importlib.util.find_spec(words[2]), words


def test_the_exec_probes_ask_this_pods_own_process(base):
    processes = deployments_containers(base)
    runs = processes["runs"][0]
    # The worker is named after its pod, and the probe checks that name's heartbeat.
    assert runs["command"][-2:] == ["--name", "$(POD_NAME)"]
    assert runs["env"] == [
        {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}
    ]
    probe = shlex.split(runs["livenessProbe"]["exec"]["command"][2])
    assert probe == ["exec", "studio", "execute_runs", "--check", "--name", "$POD_NAME"]
    # Celery names its nodes celery@<host> and, with remote control, celerybeat@<host>.
    for name, node in (("worker", "celery@$HOSTNAME"), ("beat", "celerybeat@$HOSTNAME")):
        probe = shlex.split(processes[name][0]["livenessProbe"]["exec"]["command"][2])
        assert probe[probe.index("-d") + 1] == node
    assert "--enable-remote-control" in processes["beat"][0]["command"]


def test_every_process_has_probes_resources_and_a_locked_down_pod(base):
    for name, deployment in deployments(base).items():
        spec = pod_spec(deployment)
        assert spec["automountServiceAccountToken"] is False, name
        assert spec["enableServiceLinks"] is False, name
        for container in spec["containers"]:
            assert container["readinessProbe"] and container["livenessProbe"], name
            for kind in ("requests", "limits"):
                resources = container["resources"][kind]
                assert set(resources) == {"cpu", "memory"}, name
                assert re.fullmatch(r"\d+m|\d+", resources["cpu"]), name
                assert re.fullmatch(r"\d+(Mi|Gi)", resources["memory"]), name
            assert container["securityContext"]["readOnlyRootFilesystem"] is True, name
            mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
            volumes = {v["name"]: v for v in spec["volumes"]}
            assert "emptyDir" in volumes[mounts["/tmp"]], name
        if name == "sandbox":
            continue
        assert spec["securityContext"]["runAsNonRoot"] is True, name
        assert spec["securityContext"]["runAsUser"] == 10001, name
        for container in spec["containers"]:
            context = container["securityContext"]
            assert context["allowPrivilegeEscalation"] is False, name
            assert context["capabilities"]["drop"] == ["ALL"], name
            assert "privileged" not in context, name


def test_the_web_probes_ask_the_health_check_as_an_allowed_host(base):
    web = deployments_containers(base)["web"][0]
    config = find(base, kind="ConfigMap", name="studio-config")["data"]
    # Ready on what a web process needs; alive while it answers (no restart for an outage).
    paths = {
        "startupProbe": "/healthz?parts=database,redis",
        "readinessProbe": "/healthz?parts=database,redis",
        "livenessProbe": "/healthz?parts=",
    }
    for probe, path in paths.items():
        request = web[probe]["httpGet"]
        assert request["path"] == path
        assert request["port"] == "http"
        host = {h["name"]: h["value"] for h in request["httpHeaders"]}["Host"]
        assert host in config["ALLOWED_HOSTS"].split(",")


def test_the_sandbox_gets_what_bubblewrap_needs_and_nothing_else(base):
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]["sandbox"]
    spec = pod_spec(component(base, "Deployment", "sandbox"))
    container = spec["containers"][0]
    assert compose["privileged"] is True and container["securityContext"]["privileged"] is True
    assert compose["user"] == "0:0" and spec["securityContext"]["runAsUser"] == 0
    assert compose["read_only"] is True
    tmpfs = {entry.split(":")[0] for entry in compose["tmpfs"]}
    assert tmpfs == {m["mountPath"] for m in container["volumeMounts"]}
    # No studio settings or secrets: only the shared token, by key.
    assert "envFrom" not in container
    assert [e["valueFrom"]["secretKeyRef"]["key"] for e in container["env"]] == [
        "STUDIO_SANDBOX_TOKEN"
    ]
    policy = find(base, kind="NetworkPolicy", name="studio-sandbox")
    assert policy["spec"]["egress"] == []
    assert policy["spec"]["podSelector"]["matchLabels"] == spec_labels(base, "sandbox")


def spec_labels(objects: list[dict[str, Any]], name: str) -> dict[str, str]:
    return component(objects, "Deployment", name)["spec"]["selector"]["matchLabels"]


def test_beat_is_exactly_one_pod_replaced_not_rolled(base, overlay):
    for objects in (base, overlay):
        beat = component(objects, "Deployment", "beat")
        assert beat["spec"]["replicas"] == 1
        assert beat["spec"]["strategy"] == {"type": "Recreate"}


def test_an_autoscaler_owns_the_run_workers(base, overlay):
    for objects in (base, overlay):
        runs = component(objects, "Deployment", "runs")
        autoscalers = [o for o in objects if o["kind"] == "HorizontalPodAutoscaler"]
        assert [a["apiVersion"] for a in autoscalers] == ["autoscaling/v2"]
        target = autoscalers[0]["spec"]["scaleTargetRef"]
        assert (target["kind"], target["name"]) == ("Deployment", runs["metadata"]["name"])
        assert "replicas" not in runs["spec"]  # a replicas field would fight the autoscaler
        assert 1 < autoscalers[0]["spec"]["minReplicas"] < autoscalers[0]["spec"]["maxReplicas"]


def test_services_reach_the_pods_and_ports_they_name(base):
    for service in (o for o in base if o["kind"] == "Service"):
        name = service["metadata"]["labels"]["app.kubernetes.io/component"]
        assert service["spec"]["selector"] == spec_labels(base, name)
        pods = component(base, "Deployment", name)["spec"]["template"]["metadata"]["labels"]
        assert service["spec"]["selector"].items() <= pods.items()
        ports = {p["name"] for c in deployments_containers(base)[name] for p in c["ports"]}
        assert {p["targetPort"] for p in service["spec"]["ports"]} <= ports
    config = find(base, kind="ConfigMap", name="studio-config")["data"]
    sandbox = find(base, kind="Service", name="studio-sandbox")
    assert (
        config["STUDIO_SANDBOX_URL"]
        == f"http://studio-sandbox:{sandbox['spec']['ports'][0]['port']}"
    )


def test_secrets_come_only_from_the_secret(base, overlay, secret_example):
    for kustomization in KUBERNETES.rglob("kustomization.yaml"):
        resources = yaml.safe_load(kustomization.read_text())["resources"]
        assert not [r for r in resources if r.endswith("secret.example.yaml")]
    secret_keys = set(secret_example["stringData"])
    assert {"SECRET_KEY", "STUDIO_ENCRYPTION_KEYS", "DATABASE_URL", "REDIS_URL"} <= secret_keys
    for objects in (base, overlay):
        assert not [o for o in objects if o["kind"] == "Secret"]
        config = find(objects, kind="ConfigMap", name="studio-config")["data"]
        assert not secret_keys & set(config)
        for container in containers(objects):
            for source in container.get("envFrom", []):
                if "secretRef" in source:
                    assert source["secretRef"]["name"] == secret_example["metadata"]["name"]
            for variable in container.get("env", []):
                assert "value" not in variable or variable["name"] not in secret_keys
                ref = variable.get("valueFrom", {}).get("secretKeyRef")
                if ref:
                    assert ref["name"] == secret_example["metadata"]["name"]
                    assert ref["key"] in secret_keys


def test_every_environment_variable_is_one_the_studio_reads(base, overlay, secret_example):
    known = settings_environment_variables() | set(READ_ELSEWHERE)
    used = set(secret_example["stringData"])
    for objects in (base, overlay):
        used |= set(find(objects, kind="ConfigMap", name="studio-config")["data"])
        used |= {v["name"] for c in containers(objects) for v in c.get("env", [])}
    assert not used - known, f"not read by the studio: {sorted(used - known)}"


def test_the_overlay_changes_image_replicas_host_and_namespace(base, overlay):
    assert {o["metadata"].get("namespace") for o in overlay} == {"agent-studio"}
    assert {c["image"] for c in containers(base)} == {"agent-studio:latest"}
    assert {c["image"] for c in containers(overlay)} == {"registry.example.com/agent-studio:0.1.0"}
    assert deployments(overlay)["web"]["spec"]["replicas"] == 3
    assert deployments(overlay)["worker"]["spec"]["replicas"] == 2
    config = find(overlay, kind="ConfigMap", name="studio-config")["data"]
    assert config["ALLOWED_HOSTS"] == "studio.example.org,localhost"
    assert config["STUDIO_RUN_EXECUTOR"] == "worker"  # a patch merges, keeps the rest
    ingress = find(overlay, kind="Ingress", name="studio-web")
    assert [r["host"] for r in ingress["spec"]["rules"]] == ["studio.example.org"]
    backend = ingress["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
    assert find(overlay, kind="Service", name=backend["name"])
    runs = find(overlay, kind="HorizontalPodAutoscaler", name="studio-runs")["spec"]
    assert (runs["minReplicas"], runs["maxReplicas"]) == (3, 20)
    assert runs["scaleTargetRef"]["name"] == "studio-runs"
