"""OpenAPI schema objects -> JSON Schema 2020-12, with `$ref`s resolved.

A ref is inlined where it is used, except when it refers to itself through its own
expansion (a tree, a linked list, A -> B -> A): then the tool's schema gets a `$defs`
entry and the recursive use becomes `{"$ref": "#/$defs/<Name>"}`, so expansion always
ends. Refs nested deeper than MAX_INLINE_DEPTH also move to `$defs`, and a ref already
in `$defs` is referenced, not inlined again: this bounds the size of the schema even for
documents that share one schema in many places.

The OpenAPI 3.0 / Swagger 2.0 dialect is translated: `nullable`, boolean
`exclusiveMinimum`/`exclusiveMaximum`, `type: file`; documentation-only keywords
(`example`, `xml`, `discriminator`, `x-*`...) are dropped.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

MAX_INLINE_DEPTH = 8
# Keywords that only describe a schema for documentation or code generators.
_DROP_KEYS = {"example", "examples", "xml", "externalDocs", "discriminator", "deprecated"}


def pointer_get(document: dict[str, Any], ref: str) -> Any:
    node: Any = document
    for raw in ref[2:].split("/") if ref != "#" else []:
        key = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        elif isinstance(node, dict) and key in node:
            node = node[key]
        else:
            raise KeyError(ref)
    return node


def _def_name(ref: str) -> str:
    tail = ref.rsplit("/", 1)[-1] or "root"
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", tail)
    return f"{name}_{hashlib.sha256(ref.encode()).hexdigest()[:6]}" if name != tail else name


class SchemaConverter:
    """OpenAPI schema objects -> JSON Schema 2020-12 with refs resolved (module docstring).

    One converter per tool: `defs` collects the `$defs` that tool's schemas need.
    """

    def __init__(self, document: dict[str, Any], version: str) -> None:
        self.document = document
        self.version = version
        self.defs: dict[str, Any] = {}
        self._def_refs: dict[str, str] = {}

    def convert(self, schema: Any) -> Any:
        return self._convert(schema, ())

    def with_defs(self, schema: dict[str, Any]) -> dict[str, Any]:
        if self.defs:
            schema = {**schema, "$defs": dict(sorted(self.defs.items()))}
        return schema

    def _def_ref(self, ref: str) -> dict[str, str]:
        name = self._def_refs.get(ref)
        if name is None:
            name = _def_name(ref)
            while name in self.defs:
                name += "_"
            self._def_refs[ref] = name
            self.defs[name] = True  # reserve the slot before expanding (it may recurse)
            self.defs[name] = self._convert(pointer_get(self.document, ref), (ref,))
        return {"$ref": f"#/$defs/{name}"}

    def _convert(self, node: Any, stack: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [self._convert(item, stack) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str):
            if ref in stack or len(stack) >= MAX_INLINE_DEPTH or ref in self._def_refs:
                return self._def_ref(ref)
            target = self._convert(pointer_get(self.document, ref), (*stack, ref))
            siblings = {k: v for k, v in node.items() if k != "$ref"}
            if siblings and isinstance(target, dict):  # 3.1 allows description next to $ref
                target = {**target, **self._convert(siblings, stack)}
            return target
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in _DROP_KEYS or key.startswith("x-"):
                continue
            if key in ("properties", "patternProperties", "$defs", "definitions"):
                out[key] = {name: self._convert(sub, stack) for name, sub in value.items()}
            else:
                out[key] = self._convert(value, stack)
        return self._dialect(out)

    def _dialect(self, out: dict[str, Any]) -> dict[str, Any]:
        """Fix the keywords where OpenAPI 3.0 and Swagger 2.0 differ from JSON Schema."""
        if out.pop("nullable", False) is True:
            if isinstance(out.get("type"), str):
                out["type"] = [out["type"], "null"]
            elif "enum" in out and None not in out["enum"]:
                out["enum"] = [*out["enum"], None]
        for bound, exclusive in (("maximum", "exclusiveMaximum"), ("minimum", "exclusiveMinimum")):
            if isinstance(out.get(exclusive), bool):
                if out.pop(exclusive) and bound in out:
                    out[exclusive] = out.pop(bound)
        if out.get("type") == "file":
            out["type"] = "string"
        return out
