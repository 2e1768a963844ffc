FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 LITELLM_LOCAL_MODEL_COST_MAP=True
WORKDIR /app
# bubblewrap isolates each run of a Python code tool (the `sandbox` service).
RUN apt-get update \
    && apt-get install -y --no-install-recommends bubblewrap \
    && rm -rf /var/lib/apt/lists/*
COPY pyproject.toml README.md ./
COPY studio ./studio
COPY agents_core ./agents_core
COPY tools_app ./tools_app
COPY knowledge ./knowledge
COPY frontend ./frontend
COPY manage.py ./
RUN pip install --no-cache-dir . && useradd --system --uid 10001 studio
USER studio
EXPOSE 8000
# `serve` is Daphne with the studio's websocket message limit (Daphne's own is 1 MiB).
CMD ["python", "manage.py", "serve", "--host", "0.0.0.0", "--port", "8000"]
