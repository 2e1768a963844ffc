"""The REST API's JSON parser: DRF's, held to the studio's limits on untrusted JSON.

Every error names the JSON path of the first offence in the studio's error shape
(common.exceptions): `{"detail", "code", "errors": [{"path", "message"}]}`. A view whose
body carries a whole document as text (an OpenAPI spec) names that top-level field in
`long_string_fields`: its string may be as long as the body limit allows.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.conf import settings
from rest_framework.parsers import JSONParser, get_encoding

from common.exceptions import body_too_large
from common.json_input import json_loads


class StudioJSONParser(JSONParser):
    def parse(
        self,
        stream: Any,
        media_type: str | None = None,
        parser_context: Mapping[str, Any] | None = None,
    ) -> Any:
        context = parser_context or {}
        limit = settings.STUDIO_MAX_BODY_BYTES
        data = stream.read(limit + 1)
        if len(data) > limit:
            raise body_too_large(limit)
        return json_loads(
            data,
            encoding=get_encoding(context),
            long_fields=getattr(context.get("view"), "long_string_fields", ()),
            require_object=True,
        )
