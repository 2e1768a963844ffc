"""DRF's browsable API without its one inline <style>.

DRF writes the CSS of its code highlighting into the page as a <style> element (when
Pygments is installed), which the studio's Content-Security-Policy refuses (style-src
'self'). The highlighting is only used for Markdown descriptions, and Markdown is not
installed, so the page loses nothing.
"""

from __future__ import annotations

from typing import Any

from rest_framework import renderers


class BrowsableAPIRenderer(renderers.BrowsableAPIRenderer):
    def get_context(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context(*args, **kwargs)
        context["code_style"] = None
        return context
