"""The studio's URL routes, read from the URL configuration, for tests that must cover
every route of a kind without keeping a list by hand."""

from __future__ import annotations

from collections.abc import Iterator

from django.urls import URLPattern, URLResolver, get_resolver


def all_routes() -> Iterator[tuple[str, URLPattern]]:
    """(route, pattern) for every URL pattern, the route with its prefixes joined."""

    def walk(patterns: list, prefix: str = "") -> Iterator[tuple[str, URLPattern]]:
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                yield from walk(pattern.url_patterns, prefix + str(pattern.pattern))
            else:
                yield prefix + str(pattern.pattern), pattern

    return walk(get_resolver().url_patterns)
