"""How signals look to the model: XML tags whose attributes and text are escaped.

A value can never break out of its attribute or tag: attribute values go through
quoteattr (quotes, <, >, & and newlines become entities), text through escape, and tag
and attribute names must be plain XML names.
"""

from __future__ import annotations

import json
import re
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from common.exceptions import ApplicationError

# An XML Name without namespaces (no colon), and not the reserved `xml...` prefix.
NAME = re.compile(r"^(?![Xx][Mm][Ll])[A-Za-z_][A-Za-z0-9_.-]{0,63}$")
# Characters XML 1.0 cannot carry at all, even escaped.
_INVALID_XML_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def validate_name(name: Any, *, what: str) -> str:
    if not isinstance(name, str) or not NAME.match(name):
        raise ApplicationError(
            f"{what} {name!r} is not a valid XML name: use letters, digits, '_', '-', '.'; "
            "start with a letter or '_'; at most 64 characters.",
            code="invalid_name",
        )
    return name


def validate_attributes(attributes: Any) -> dict[str, Any]:
    if attributes is None:
        return {}
    if not isinstance(attributes, dict):
        raise ApplicationError("attributes must be an object of name: value.", code="invalid")
    for name in attributes:
        validate_name(name, what="Attribute name")
    return dict(attributes)


def _text(value: Any) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        value = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return _INVALID_XML_CHARS.sub("\ufffd", value)


def render_tag(tag_name: str, contents: Any, attributes: dict[str, Any] | None = None) -> str:
    """`<tag a="v">contents</tag>` with everything escaped."""
    validate_name(tag_name, what="Tag name")
    attrs = "".join(
        f" {validate_name(name, what='Attribute name')}={quoteattr(_text(value))}"
        for name, value in (attributes or {}).items()
        if value is not None
    )
    return f"<{tag_name}{attrs}>{escape(_text(contents))}</{tag_name}>"
