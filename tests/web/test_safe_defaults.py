"""Safe by default: every setting of access as shipped, and what the service does with them, as two tables.

The first table is each default (the field, its variable, the shipped value, the value an operator may
set instead); the second is what the shipped service answers a request with no key and a user's key,
before a first key is made, once one is, and once every key is revoked, reads private or public.
"""

from __future__ import annotations

import io
from dataclasses import replace
from typing import Any

import pytest

from tests.support.inline import InlineDispatcher
from tests.support.paths import JUDGE_DATA
from worker.config import Settings
from worker.store.database import Database
from worker.store.keys import Keys, Role

HANDS = (JUDGE_DATA / "mahjong" / "sample.in").read_bytes()

#: field, its variable, as shipped, and what an operator may set instead (as the variable says it, as read).
DEFAULTS = [
    ("web_address", "DEALER_WEB_ADDRESS", "127.0.0.1", ("0.0.0.0", "0.0.0.0")),
    ("open", "DEALER_OPEN", False, ("1", True)),
    ("public_reads", "DEALER_PUBLIC_READS", False, ("true", True)),
    ("api_keys", "DEALER_API_KEYS", "", ("ci:ci-0123456789abcdef", "ci:ci-0123456789abcdef")),
    ("secure_cookies", "DEALER_SECURE_COOKIES", False, ("1", True)),
    ("auth_failures_allowed", "DEALER_AUTH_FAILURES_ALLOWED", 5, ("0", 0)),
]


@pytest.mark.parametrize("name, variable, shipped, changed", DEFAULTS, ids=[row[0] for row in DEFAULTS])
def test_each_default_as_shipped_and_how_to_change_it(name: str, variable: str, shipped: Any,
                                                      changed: tuple[str, Any]) -> None:
    assert getattr(Settings.from_env({}), name) == shipped
    raw, read = changed
    assert getattr(Settings.from_env({variable: raw}), name) == read


#: The shipped service (reads private unless the row says public): what a request with no key and one with a
#: user's key get when they read another's job, read their own, and upload, in each state of the keys.
#: 404: not found (as if it did not exist); 401: a key is needed; "-": no such request in that state.
BEHAVIOUR = [
    # keys                 reads     no key: read  upload   user: another's  own   upload
    ("none made yet",      "private", 200,         201,     "-",             "-",  "-"),
    ("one made",           "private", 401,         401,     404,             200,  201),
    ("one made",           "public",  200,         401,     200,             200,  201),
    ("every one revoked",  "private", 401,         401,     "-",             "-",  "-"),
    ("every one revoked",  "public",  200,         401,     "-",             "-",  "-"),
]


def upload(client: Any, token: str | None = None) -> Any:
    return client.post("/api/jobs", data={"file": (io.BytesIO(HANDS), "hands.in"), "game": "mahjong"},
                       content_type="multipart/form-data",
                       headers={"Authorization": f"Bearer {token}"} if token else {})


@pytest.mark.parametrize("keys, reads, anon_read, anon_upload, others, own, user_upload", BEHAVIOUR,
                         ids=[f"{row[0]}, {row[1]}" for row in BEHAVIOUR])
def test_what_the_shipped_service_answers(db: Database, settings: Settings, keys: str, reads: str, anon_read: int,
                                          anon_upload: int, others: Any, own: Any, user_upload: Any) -> None:
    from webui.app import create_app

    shipped = replace(settings, public_reads=reads == "public")
    client = create_app(shipped, InlineDispatcher(db, shipped), config={"TESTING": True}, db=db).test_client()
    store = Keys(db)  # as `dealer keys` makes and revokes them
    tokens = {}
    if keys != "none made yet":
        tokens = {name: store.add(name, Role.USER) for name in ("alice", "bob")}
    target = upload(client, tokens.get("bob")).get_json()["id"]  # bob's job (nobody's while open)
    if keys == "every one revoked":
        assert all(store.revoke(name) for name in tokens)
    assert client.get(f"/api/jobs/{target}").status_code == anon_read
    assert upload(client).status_code == anon_upload
    if tokens and keys == "one made":
        alice = {"Authorization": f"Bearer {tokens['alice']}"}
        mine = upload(client, tokens["alice"])
        assert mine.status_code == user_upload
        assert client.get(f"/api/jobs/{target}", headers=alice).status_code == others
        assert client.get(f"/api/jobs/{mine.get_json()['id']}", headers=alice).status_code == own
