"""Settings have their defaults in one place: every `settings.NAME` the project's code reads
is defined by the settings package, no code repeats a default with
`getattr(settings, NAME, default)`, and every environment variable the settings read is
listed in docs/configuration.md."""

from __future__ import annotations

import ast

from django.conf import settings

from tests.source import ROOT, production_modules, settings_environment_variables

SETTINGS_PACKAGE = ROOT / "studio" / "settings"


def _is_settings(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and node.id in {"settings", "django_settings"}


def settings_reads() -> dict[str, set[str]]:
    """Setting name -> the modules that read it (`settings.NAME`, `getattr(settings, "NAME")`)."""
    reads: dict[str, set[str]] = {}
    for module in production_modules():
        for node in ast.walk(module.tree()):
            name = None
            if isinstance(node, ast.Attribute) and _is_settings(node.value):
                name = node.attr
            elif _getattr_on_settings(node):
                name = node.args[1].value
            if name and name.isupper():
                reads.setdefault(name, set()).add(module.relpath)
    return reads


def _getattr_on_settings(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "getattr"
        and len(node.args) >= 2
        and _is_settings(node.args[0])
        and isinstance(node.args[1], ast.Constant)
        and isinstance(node.args[1].value, str)
    )


def test_the_reader_sees_attribute_and_getattr_reads():
    reads = settings_reads()
    assert "studio/settings/__init__.py" not in str(reads)
    assert "agents_core/registry.py" in reads["STUDIO_CODE_MODULES"]
    assert "STUDIO_MAX_BODY_BYTES" in reads


def test_every_setting_the_code_reads_is_defined():
    missing = sorted(
        f"{name} (read in {', '.join(sorted(where))})"
        for name, where in settings_reads().items()
        if not hasattr(settings, name)
    )
    assert not missing, "settings read but never defined in studio/settings/:\n" + "\n".join(
        missing
    )


def test_no_code_repeats_a_default_with_getattr():
    repeated = sorted(
        f"{module.relpath}:{node.lineno} {node.args[1].value}"
        for module in production_modules()
        if not module.path.is_relative_to(SETTINGS_PACKAGE)
        for node in ast.walk(module.tree())
        if _getattr_on_settings(node)
    )
    assert not repeated, "getattr(settings, ...) with a default:\n" + "\n".join(repeated)


def test_every_environment_variable_of_the_settings_is_documented():
    variables = settings_environment_variables()
    documented = (ROOT / "docs" / "configuration.md").read_text()
    assert len(variables) > 50
    missing = sorted(v for v in variables if f"`{v}`" not in documented)
    assert not missing, "not in docs/configuration.md: " + ", ".join(missing)
