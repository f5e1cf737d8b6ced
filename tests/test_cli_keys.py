"""`dealer keys add|list|revoke`, run as an operator runs them, against the service the web app serves."""

from __future__ import annotations

import hashlib
import re
from dataclasses import replace
from typing import Any

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


def test_a_key_is_made_listed_used_and_revoked_without_a_restart(settings: Settings) -> None:
    from webui.app import create_app

    app = create_app(replace(settings, api_keys="ops:ops-0123456789abcdef-secret"), InlineDispatcher(settings),
                     config={"TESTING": True})
    client = app.test_client()
    made = dealer(settings, "add", "alice", "--role", "user")
    assert made.exit_code == 0, made.output
    token = made.stdout.strip()
    assert re.fullmatch(r"[A-Za-z0-9_-]{43}", token)  # 256 random bits, URL-safe
    assert "not shown again" in made.stderr
    with Database.of(settings).session(write=False) as session:
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


def test_a_session_of_a_revoked_key_ends_at_once(settings: Settings) -> None:
    from tests.web.test_access import csrf_of
    from webui.app import create_app

    token = dealer(settings, "add", "bob", "--role", "admin").stdout.strip()
    keyed = replace(settings, api_keys="ops:ops-0123456789abcdef-secret")  # the service stays keyed without bob
    client = create_app(keyed, InlineDispatcher(settings), config={"TESTING": True}).test_client()
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
