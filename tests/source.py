"""The project's own Python source, read with `ast`: the packages at the repository's root,
their modules, and the imports each module makes (at module level and inside functions)."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Not production code: the tests themselves, and the migrations Django writes.
NOT_PRODUCTION = {"tests", "migrations"}


@dataclass(frozen=True)
class Module:
    name: str  # dotted, e.g. "agents_core.services.threads"
    path: Path
    is_package: bool  # an __init__.py

    @property
    def relpath(self) -> str:
        return str(self.path.relative_to(ROOT))

    def tree(self) -> ast.Module:
        return ast.parse(self.path.read_text(), filename=str(self.path))


def project_packages() -> list[str]:
    """The top-level packages of the project: folders at the root with an __init__.py."""
    return sorted(
        path.parent.name
        for path in ROOT.glob("*/__init__.py")
        if not path.parent.name.startswith(".")
    )


def production_modules() -> Iterator[Module]:
    for package in project_packages():
        if package in NOT_PRODUCTION:
            continue
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if NOT_PRODUCTION & set(parts) or any(p.startswith(".") for p in parts):
                continue
            is_package = parts[-1] == "__init__"
            name = ".".join(parts[:-1] if is_package else parts)
            yield Module(name=name, path=path, is_package=is_package)


def imported_names(module: Module) -> set[str]:
    """Every dotted name `module` imports, wherever the import statement stands; relative
    imports are resolved. `from a.b import c` yields both "a.b" and "a.b.c"."""
    names: set[str] = set()
    package = module.name if module.is_package else module.name.rpartition(".")[0]
    for node in ast.walk(module.tree()):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names if alias.name != "*")
    return names


# What the settings package reads from the environment: env*("NAME", ...) and
# os.environ.get("NAME").
_ENV_READ = re.compile(r"""(?:env[a-z]*|os\.environ\.get)\(\s*["']([A-Z][A-Z0-9_]+)["']""")


def settings_environment_variables() -> set[str]:
    return {
        name
        for path in (ROOT / "studio" / "settings").glob("*.py")
        for name in _ENV_READ.findall(path.read_text())
    }
