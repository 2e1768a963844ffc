# Agent Studio's image: the wheel built from the checkout, installed with the locked runtime
# dependencies (hashes checked) into a virtualenv; every process of docker-compose.yml runs
# from it (docs/operations.md, "The image").

# --- Stage 1: the wheel (what `make wheel` builds) --------------------------------------
FROM python:3.11-slim AS wheel
WORKDIR /src
COPY pyproject.toml README.md ./
COPY studio ./studio
COPY common ./common
COPY agents_core ./agents_core
COPY tools_app ./tools_app
COPY knowledge ./knowledge
COPY providers ./providers
COPY traces ./traces
COPY evals ./evals
COPY frontend ./frontend
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /dist .

# --- Stage 2: the runtime ---------------------------------------------------------------
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    LITELLM_LOCAL_MODEL_COST_MAP=True \
    VIRTUAL_ENV=/opt/studio \
    PATH=/opt/studio/bin:$PATH \
    DJANGO_SETTINGS_MODULE=studio.settings \
    STUDIO_DATA_DIR=/var/lib/studio \
    STATIC_ROOT=/opt/studio/static
# bubblewrap isolates each run of a Python code tool (the `sandbox` service).
RUN apt-get update \
    && apt-get install -y --no-install-recommends bubblewrap \
    && rm -rf /var/lib/apt/lists/*
# The locked dependencies first (their layer stays cached while only the code changes),
# every one checked against its hash; then the wheel alone.
COPY requirements/runtime.txt /tmp/runtime.txt
RUN python -m venv /opt/studio \
    && pip install --no-cache-dir --require-hashes -r /tmp/runtime.txt \
    && rm /tmp/runtime.txt
COPY --from=wheel /dist/ /tmp/dist/
RUN pip install --no-cache-dir --no-deps /tmp/dist/agent_studio-*.whl \
    && rm -rf /tmp/dist \
    && pip check
# Static files collected once, at build time, into STATIC_ROOT: a front proxy or CDN can
# serve them from there (STUDIO_SERVE_STATIC=0); the web process serves the same files
# itself otherwise. collectstatic reads the settings but opens no database: the secret
# and the database URL below exist for this step only.
RUN SECRET_KEY=collectstatic-at-build-time DATABASE_URL=postgres://build@localhost/none \
    studio collectstatic --noinput --verbosity 0
RUN useradd --system --uid 10001 --home-dir /var/lib/studio studio \
    && install -d -o studio -g studio /var/lib/studio
USER studio
WORKDIR /var/lib/studio
EXPOSE 8000
# The web process's health (docs/operations.md, "Health check"): 503 when the database,
# Redis or the sandbox service does not answer. The other processes of the set override it.
HEALTHCHECK --interval=30s --timeout=10s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=8)"]
# `serve` is Daphne with the studio's websocket message limit (Daphne's own is 1 MiB).
CMD ["studio", "serve", "--host", "0.0.0.0", "--port", "8000"]
