# Agent Studio: `make run` starts the embedded studio, `make test` runs every test.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PORT ?= 8000
HOST ?= 127.0.0.1
# The locked versions, with hashes: requirements/dev.txt holds every extra (tests, benches,
# lint, the CPU embedding model), requirements/runtime.txt what a deployment installs.
LOCK ?= requirements/dev.txt
PIP_COMPILE := $(VENV)/bin/pip-compile --quiet --generate-hashes --strip-extras --allow-unsafe \
	--no-emit-index-url --no-emit-find-links

.PHONY: run test bench lint migrations-check install lock wheel

$(VENV)/.installed: pyproject.toml $(LOCK)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade 'pip>=25'
	$(PY) -m pip install --quiet --require-hashes --no-deps -r $(LOCK)
	$(PY) -m pip install --quiet --no-deps -e .
	touch $@

install: $(VENV)/.installed

## Refresh the locks from pyproject.toml's ranges (UPGRADE=1: newest allowed versions).
## dev.txt first; runtime.txt starts from its pins, so both name the same versions.
lock: install
	$(PIP_COMPILE) --all-extras $(if $(UPGRADE),--upgrade) -o requirements/dev.txt pyproject.toml
	cp requirements/dev.txt requirements/runtime.txt
	$(PIP_COMPILE) -o requirements/runtime.txt pyproject.toml

## The wheel a deployment installs (dist/agent_studio-*.whl), with every app's templates
## and static files.
wheel: install
	rm -rf dist build
	$(PY) -m pip wheel --quiet --no-deps --wheel-dir dist .

## Start the embedded studio (its own PostgreSQL in .studio/pgdata, in-memory layer,
## in-process Celery, offline model).
run: install
	STUDIO_EMBEDDED=1 $(PY) manage.py runstudio --host $(HOST) --port $(PORT)

## Run the whole suite on TEST_WORKERS pytest-xdist processes, each with its own test
## database and Redis db (docs/testing.md): PostgreSQL at DATABASE_URL (unset: the
## embedded server, data in .studio/test-pgdata) and Redis on 127.0.0.1 (see README).
TEST_WORKERS ?= auto
test: install
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder $(PYTEST_ARGS)

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
