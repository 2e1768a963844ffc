"""Web pages for knowledge bases: fetched through the outbound address guard
(tools_app.net: every address and redirect checked), robots.txt honoured (Protego), and
the links of a page on the same site, for crawls."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urldefrag, urljoin, urlsplit

from asgiref.sync import async_to_sync
from django.conf import settings
from lxml import html as lxml_html
from protego import Protego

from tools_app import net

FETCH_SECONDS = 30.0
_SKIPPED_EXTENSIONS = (
    ".png", ".jpg", ".jpeg", ".gif", ".svg", ".webp", ".ico", ".css", ".js", ".zip",
    ".gz", ".tar", ".mp3", ".mp4", ".avi", ".mov", ".woff", ".woff2", ".ttf", ".exe",
)  # fmt: skip


class CrawlError(Exception):
    """The page may not or could not be read; the message is the document's error."""


class Refused(CrawlError):
    """The address guard refused the URL (or an address it resolves to)."""


@dataclass
class Page:
    url: str
    body: bytes
    content_type: str


def _get(url: str, *, max_bytes: int) -> net.FetchResult:
    headers = {"User-Agent": settings.STUDIO_KNOWLEDGE_USER_AGENT, "Accept": "*/*"}
    try:
        return async_to_sync(net.fetch)(
            url, headers=headers, deadline_seconds=FETCH_SECONDS, max_bytes=max_bytes
        )
    except net.BlockedURL as exc:
        raise Refused(f"Refused by the address guard: {exc}") from None
    except net.FetchError as exc:
        raise CrawlError(str(exc)) from None


def robots_allows(url: str, cache: dict[str, Protego | None]) -> bool:
    """Whether the site's robots.txt lets our user agent read `url` (no robots.txt, or
    a 4xx for it: allowed; a server error: not allowed, as crawlers do)."""
    parts = urlsplit(url)
    origin = f"{parts.scheme}://{parts.netloc}"
    if origin not in cache:
        try:
            result = _get(f"{origin}/robots.txt", max_bytes=500_000)
        except Refused:
            raise  # the site itself is refused: say so, not "robots.txt forbids"
        except CrawlError:
            cache[origin] = Protego.parse("User-agent: *\nDisallow: /")
        else:
            if 200 <= result.status < 300:
                cache[origin] = Protego.parse(result.text()[0])
            elif 400 <= result.status < 500:
                cache[origin] = None
            else:
                cache[origin] = Protego.parse("User-agent: *\nDisallow: /")
    rules = cache[origin]
    return rules is None or rules.can_fetch(url, settings.STUDIO_KNOWLEDGE_USER_AGENT)


def fetch_page(url: str, robots: dict[str, Protego | None]) -> Page:
    if not robots_allows(url, robots):
        raise CrawlError(f"The site's robots.txt does not allow reading {url}.")
    result = _get(url, max_bytes=settings.STUDIO_KNOWLEDGE_MAX_PAGE_BYTES)
    if result.truncated:
        limit = settings.STUDIO_KNOWLEDGE_MAX_PAGE_BYTES
        raise CrawlError(f"The page is larger than {limit:,} bytes.")
    if not 200 <= result.status < 300:
        raise CrawlError(f"HTTP {result.status} {result.reason} for {url}.")
    return Page(url=result.url, body=result.body, content_type=result.content_type)


def same_site_links(body: bytes, base_url: str) -> list[str]:
    """Links of an HTML page to other pages of the same scheme and host, in page order,
    without fragments or duplicates."""
    try:
        tree = lxml_html.fromstring(body)
    except (ValueError, lxml_html.etree.ParserError):
        return []
    base = urlsplit(base_url)
    seen: set[str] = set()
    links = []
    for href in tree.xpath("//a/@href"):
        url = urldefrag(urljoin(base_url, str(href).strip()))[0]
        parts = urlsplit(url)
        if (parts.scheme, parts.netloc) != (base.scheme, base.netloc):
            continue
        if parts.path.lower().endswith(_SKIPPED_EXTENSIONS) or url in seen:
            continue
        seen.add(url)
        links.append(url)
    return links
