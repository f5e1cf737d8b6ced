"""`dealer keys add|list|revoke`, run as an operator runs them, against the service the web app serves."""

from __future__ import annotations

import hashlib
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import select

from tests.support.inline import InlineDispatcher
from worker.cli import main
from worker.config import Settings
from worker.store.database import Database
from worker.store.models import ApiKey


def dealer(settings: Settings, *arguments: str) -> Any:
    env = {"DEALER_DATA_DIR": str(settings.data_dir), "DEALER_DATABASE_URL": settings.database_url}
    return CliRunner().invoke(main, ["keys", *arguments], env=env)


def test_a_key_is_made_listed_used_and_revoked_without_a_restart(db: Database, settings: Settings) -> None:
    from webui.app import create_app

    app = create_app(replace(settings, api_keys="ops:ops-0123456789abcdef-secret"), InlineDispatcher(db, settings),
                     config={"TESTING": True}, db=db)
    client = app.test_client()
    made = dealer(settings, "add", "alice", "--role", "user")
    assert made.exit_code == 0, made.output
    token = made.stdout.strip()
    assert re.fullmatch(r"[A-Za-z0-9_-]{43}", token)  # 256 random bits, URL-safe
    assert "not shown again" in made.stderr
    with db.session(write=False) as session:
        row = session.scalars(select(ApiKey).where(ApiKey.name == "alice")).one()
        assert (row.role, row.origin, row.digest) == ("user", "command", hashlib.sha256(token.encode()).hexdigest())
    # The running web app takes it at once.
    assert client.get("/api/jobs", headers={"Authorization": f"Bearer {token}"}).status_code == 200
    listed = dealer(settings, "list")
    assert listed.exit_code == 0
    lines = listed.stdout.splitlines()
    assert lines[0].split() == ["NAME", "ROLE", "ORIGIN", "CREATED", "USED", "REVOKED"]
    by_name = {line.split()[0]: line.split() for line in lines[1:]}
    assert by_name["alice"][1:3] == ["user", "command"] and by_name["alice"][-1] == "-"
    assert by_name["ops"][1:3] == ["admin", "env"]
    assert token not in listed.output
    revoked = dealer(settings, "revoke", "alice")
    assert revoked.exit_code == 0 and "revoked" in revoked.stderr
    assert client.get("/api/jobs", headers={"Authorization": f"Bearer {token}"}).status_code == 401
    alice = next(line for line in dealer(settings, "list").stdout.splitlines() if line.startswith("alice"))
    assert re.search(r" \d{4}-\d\d-\d\d \d\d:\d\d$", alice)  # revoked, and when


def test_a_session_of_a_revoked_key_ends_at_once(db: Database, settings: Settings) -> None:
    from tests.web.test_access import csrf_of
    from webui.app import create_app

    token = dealer(settings, "add", "bob", "--role", "admin").stdout.strip()
    keyed = replace(settings, api_keys="ops:ops-0123456789abcdef-secret")  # the service stays keyed without bob
    client = create_app(keyed, InlineDispatcher(db, settings), config={"TESTING": True}, db=db).test_client()
    csrf = csrf_of(client.get("/login").get_data(as_text=True))
    assert client.post("/login", data={"key": token, "csrf_token": csrf}).status_code == 303
    assert client.get("/upload").status_code == 200
    assert dealer(settings, "revoke", "bob").exit_code == 0
    assert client.get("/upload").status_code == 302  # back to the login page


def test_bad_key_commands_say_what_is_wrong(settings: Settings) -> None:
    assert dealer(settings, "add", "carol").exit_code == 0
    again = dealer(settings, "add", "carol")
    assert again.exit_code == 2 and "there is a key named 'carol' already" in again.stderr
    bad = dealer(settings, "add", "no spaces please")
    assert bad.exit_code == 2 and "1-40 letters, digits or _.@-" in bad.stderr
    role = dealer(settings, "add", "dave", "--role", "root")
    assert role.exit_code == 2 and "root" in role.output
    missing = dealer(settings, "revoke", "nobody")
    assert missing.exit_code == 2 and "no active key named 'nobody'" in missing.stderr
    assert dealer(settings, "revoke", "carol").exit_code == 0
    assert "no active key" in dealer(settings, "revoke", "carol").stderr


# --- dealer web and dealer serve: closed unless opened ------------------------------------------------

REFUSAL = ("dealer: error: refusing to serve {address} with no API key, open to anyone who reaches it: make a key "
           "(dealer keys add NAME), or set DEALER_OPEN=1 if it is meant to be open\n")


class Server:
    """gunicorn's place: where it was told to listen, and nothing served."""

    bound: list[tuple[str, int]] = []

    def __init__(self, settings: Settings, host: str, port: int, **options: Any) -> None:
        Server.bound.append((host, port))

    def run(self) -> None:
        pass


class Worker:
    """The Celery worker ``dealer serve`` starts, as a process that stops when told to."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.pid = 0

    def poll(self) -> int:
        return 0

    def wait(self, timeout: float | None = None) -> int:
        return 0


@pytest.fixture
def no_server(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """``dealer web`` and ``dealer serve`` with gunicorn and the worker left out; what the server was bound to."""
    import logging
    import os
    import subprocess

    import webui.server

    def leave(status: int) -> None:
        raise SystemExit(status)

    Server.bound = []
    monkeypatch.setattr(webui.server, "WebServer", Server)
    monkeypatch.setattr(subprocess, "Popen", Worker)
    monkeypatch.setattr(os, "_exit", leave)  # dealer serve leaves without Python's teardown
    monkeypatch.setattr(logging, "shutdown", lambda: None)
    return Server.bound


def start(settings: Settings, command: str, *arguments: str, **env: str) -> Any:
    given = {"DEALER_DATA_DIR": str(settings.data_dir), "DEALER_DATABASE_URL": settings.database_url,
             "DEALER_WEB_ADDRESS": None, "DEALER_OPEN": None, "DEALER_API_KEYS": None, **env}
    return CliRunner().invoke(main, [command, "--port", "8123", *arguments], env=given)


@pytest.mark.parametrize("command", ["web", "serve"])
def test_an_open_service_listens_on_this_machine_alone_by_default(settings: Settings, no_server: list[Any],
                                                                  command: str) -> None:
    started = start(settings, command)
    assert started.exit_code == 0, started.output
    assert no_server == [("127.0.0.1", 8123)]


@pytest.mark.parametrize("command", ["web", "serve"])
@pytest.mark.parametrize("how", ["--host", "DEALER_WEB_ADDRESS"])
@pytest.mark.parametrize("address", ["0.0.0.0", "::", "10.1.2.3", "dealer.example"])
def test_an_open_service_refuses_any_other_address(settings: Settings, no_server: list[Any], command: str,
                                                   how: str, address: str) -> None:
    refused = start(settings, command, *(["--host", address] if how == "--host" else []),
                    **({"DEALER_WEB_ADDRESS": address} if how != "--host" else {}))
    assert refused.exit_code == 2
    assert refused.stderr == REFUSAL.format(address=address)  # one line, both ways out
    assert no_server == []


@pytest.mark.parametrize("address", ["127.0.0.1", "127.0.0.2", "::1", "localhost"])
def test_the_loopback_addresses_need_no_key(settings: Settings, no_server: list[Any], address: str) -> None:
    assert start(settings, "web", "--host", address, DEALER_WEB_ADDRESS="0.0.0.0").exit_code == 0
    assert no_server == [(address, 8123)]  # --host wins over the variable


@pytest.mark.parametrize("command", ["web", "serve"])
def test_dealer_open_says_it_is_meant_to_be_open(settings: Settings, no_server: list[Any], command: str) -> None:
    started = start(settings, command, DEALER_WEB_ADDRESS="0.0.0.0", DEALER_OPEN="1")
    assert started.exit_code == 0, started.output
    assert no_server == [("0.0.0.0", 8123)]
    bad = start(settings, command, DEALER_OPEN="maybe")
    assert bad.exit_code == 2 and "DEALER_OPEN='maybe': expected 1/0" in bad.stderr


@pytest.mark.parametrize("command", ["web", "serve"])
def test_a_keyed_service_listens_where_it_is_told(settings: Settings, no_server: list[Any], command: str) -> None:
    assert start(settings, command, "--host", "0.0.0.0",
                 DEALER_API_KEYS="ci:ci-0123456789abcdef-secret").exit_code == 0
    assert dealer(settings, "add", "alice").exit_code == 0
    assert start(settings, command, "--host", "0.0.0.0").exit_code == 0
    assert dealer(settings, "revoke", "alice").exit_code == 0  # closed for good: no key opens it again
    assert start(settings, command, "--host", "0.0.0.0").exit_code == 0
    assert no_server == [("0.0.0.0", 8123)] * 3


def test_a_service_that_cannot_tell_whether_it_has_keys_does_not_start_open(settings: Settings,
                                                                            no_server: list[Any]) -> None:
    from worker.testing.servers import free_port

    nowhere = f"postgresql+psycopg://dealer@127.0.0.1:{free_port()}/dealer?connect_timeout=5"
    refused = start(settings, "web", "--host", "0.0.0.0", DEALER_DATABASE_URL=nowhere)
    assert refused.exit_code == 3 and no_server == []
    assert refused.stderr.startswith("dealer: error: cannot tell whether an API key was made: the database did "
                                     "not answer (OperationalError;")


# --- one database wherever a command runs ----------------------------------------------------------------

#: No data folder or database named: each command finds its own, as a shell without Dealer's variables would.
UNNAMED = {"DEALER_DATA_DIR": None, "DEALER_DATABASE_URL": None, "DEALER_API_KEYS": None,
           "DEALER_WEB_ADDRESS": None, "DEALER_OPEN": None}


@pytest.fixture
def user_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's data folder (``XDG_DATA_HOME``) in ``tmp_path``, and a checkout with no ``data/`` of its
    own: where the default data folder then is."""
    import worker.config

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "home" / "share"))
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / "pyproject.toml").write_text("")
    monkeypatch.setattr(worker.config, "PROJECT", checkout)
    return tmp_path / "home" / "share" / "dealer"


def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> Path:
    """A new empty working directory."""
    folder = tmp_path / name
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder


def test_a_key_made_from_any_directory_is_the_one_serve_finds(tmp_path: Path, user_data: Path,
                                                             monkeypatch: pytest.MonkeyPatch,
                                                             no_server: list[Any]) -> None:
    first = elsewhere(tmp_path, monkeypatch, "first")
    made = CliRunner().invoke(main, ["keys", "add", "teacher", "--role", "admin"], env=UNNAMED)
    assert made.exit_code == 0, made.output
    assert list(first.iterdir()) == []  # nothing made where the command ran
    assert (user_data / "dealer.db").is_file()
    second = elsewhere(tmp_path, monkeypatch, "second")
    assert Settings.from_env({}).data_dir == user_data  # the same default from both
    listed = CliRunner().invoke(main, ["keys", "list"], env=UNNAMED)
    assert [line.split()[0] for line in listed.stdout.splitlines()[1:]] == ["teacher"]
    # Serving everyone is refused without a key: serve, from a third directory, found the teacher's.
    third = elsewhere(tmp_path, monkeypatch, "third")
    served = CliRunner().invoke(main, ["serve", "--host", "0.0.0.0", "--port", "8123"], env=UNNAMED)
    assert served.exit_code == 0, served.output
    assert no_server == [("0.0.0.0", 8123)]
    upgraded = CliRunner().invoke(main, ["db", "upgrade"], env=UNNAMED)
    assert upgraded.exit_code == 0, upgraded.output
    assert [list(folder.iterdir()) for folder in (second, third)] == [[], []]


def test_a_checkouts_earlier_database_is_kept(tmp_path: Path, user_data: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    import worker.config

    earlier = worker.config.PROJECT / "data"
    assert CliRunner().invoke(main, ["keys", "add", "alice"],
                              env={**UNNAMED, "DEALER_DATA_DIR": str(earlier)}).exit_code == 0
    elsewhere(tmp_path, monkeypatch, "anywhere")
    listed = CliRunner().invoke(main, ["keys", "list"], env=UNNAMED)
    assert [line.split()[0] for line in listed.stdout.splitlines()[1:]] == ["alice"]
    assert not user_data.exists()


def test_a_data_folder_that_cannot_be_made_is_named_in_one_line(tmp_path: Path, user_data: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "share").write_text("a file where the user's data folder would be")
    here = elsewhere(tmp_path, monkeypatch, "here")
    for command in (["keys", "add", "alice"], ["keys", "list"], ["db", "upgrade"]):
        refused = CliRunner().invoke(main, command, env=UNNAMED)
        assert refused.exit_code == 2, command
        assert refused.stderr == (f"dealer: error: cannot make the data folder {user_data}: Not a directory; "
                                  "name another with DEALER_DATA_DIR (or --data-dir)\n")
    assert list(here.iterdir()) == []
