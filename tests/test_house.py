"""The house rules that hold for every module of the project: no import cycles, `tools_app`
and `providers` independent of `agents_core`, `common` independent of every other app, no
app reaching into `studio` past its wiring, no production module over 400 lines. Each check
names the offending modules. Imports are read with `ast` (tests/source.py), function-level
ones too: a cycle hidden inside a function is still a cycle."""

from __future__ import annotations

from tests.source import ROOT, Module, imported_names, production_modules, project_packages

MAX_LINES = 400


def modules() -> dict[str, Module]:
    return {module.name: module for module in production_modules()}


def import_graph(mods: dict[str, Module]) -> dict[str, set[str]]:
    """Module -> the project modules it imports (a name resolves to its longest prefix that
    is a module: `from a.b import f` is an edge to a.b)."""

    def resolve(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, module in mods.items():
        targets = {resolve(imported) for imported in imported_names(module)}
        graph[name] = {t for t in targets if t is not None and t != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            child = next(edges, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def test_the_cycle_finder_finds_a_cycle_and_only_the_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(graph) == [["a", "b", "c"]]


def test_no_import_cycle_between_the_projects_modules():
    found = cycles(import_graph(modules()))
    assert not found, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in found)


def _edges(graph: dict[str, set[str]], source_app: str, target_app: str) -> list[str]:
    return sorted(
        f"{source} -> {target}"
        for source, targets in graph.items()
        if source.split(".")[0] == source_app
        for target in targets
        if target.split(".")[0] == target_app
    )


def test_tools_app_imports_nothing_from_agents_core():
    wrong = _edges(import_graph(modules()), "tools_app", "agents_core")
    assert not wrong, "tools_app imports agents_core:\n" + "\n".join(wrong)


def test_providers_imports_nothing_from_agents_core():
    """Model access (litellm calls, endpoints, fallbacks, the offline model) is whole in
    providers: agents_core calls it, it never calls back."""
    wrong = _edges(import_graph(modules()), "providers", "agents_core")
    assert not wrong, "providers imports agents_core:\n" + "\n".join(wrong)


def test_no_production_module_is_over_400_lines():
    long = sorted(
        f"{module.relpath}: {count} lines"
        for module in modules().values()
        if (count := len(module.path.read_text().splitlines())) > MAX_LINES
    )
    assert not long, f"modules over {MAX_LINES} lines:\n" + "\n".join(long)


# studio/ is the wiring (settings, URLs, routing, ASGI, the Celery app, the launchers): the
# apps may reach the Celery app and the launchers their management commands start, nothing
# else there. The event bus's helpers (layers, redis_link, pubsub_layer) still live in
# studio/ while the bus is rewritten.
STUDIO_WIRING = {"studio.celery", "studio.server", "studio.embedded"}
STUDIO_BUS = {"studio.layers", "studio.redis_link", "studio.pubsub_layer"}


def test_common_imports_no_other_project_app():
    graph = import_graph(modules())
    wrong = sorted(
        f"{source} -> {target}"
        for source, targets in graph.items()
        if source.split(".")[0] == "common"
        for target in targets
        if target.split(".")[0] != "common"
    )
    assert not wrong, "common imports another project app:\n" + "\n".join(wrong)


def test_no_app_imports_from_studio_but_its_wiring():
    graph = import_graph(modules())
    apps = {name for name in project_packages() if (ROOT / name / "apps.py").exists()}
    assert {"common", "agents_core", "tools_app", "providers", "frontend"} <= apps
    wrong = sorted(
        f"{source} -> {target}"
        for source, targets in graph.items()
        if source.split(".")[0] in apps
        for target in targets
        if target.split(".")[0] == "studio" and target not in STUDIO_WIRING | STUDIO_BUS
    )
    assert not wrong, "apps import studio's non-wiring modules:\n" + "\n".join(wrong)
