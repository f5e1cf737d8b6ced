"""Callbacks when work ends (``notify_url``), on SQLite and on PostgreSQL: a local receiver is called when a
job ends and when a check ends, with the body signed; again after it answered 500; never for a URL the
rules refuse, when it is given (400, naming the rule) or when its host has turned private since."""

from __future__ import annotations

import hashlib
import hmac
import io
import json
import re
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from tests.support.inline import InlineDispatcher
from tests.support.paths import judge
from tests.support.receiver import Receiver, receiving
from worker import work
from worker.checks import notify
from worker.config import Settings
from worker.store.database import Database

OUT = judge("10-20-30", "sample").with_suffix(".out").read_bytes()
SECRET = "the class's secret"


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with receiving() as found:
        yield found


@pytest.fixture
def private(settings: Settings) -> Settings:
    """Loopback callbacks allowed, a failed one due again at once (no wait for the test to sleep through)."""
    return replace(settings, notify_private=True, notify_backoff_seconds=0.0)


@pytest.fixture
def held(db: Database, private: Settings) -> InlineDispatcher:
    """Work queued until drained: a job is still running when its answer comes."""
    return InlineDispatcher(db, private, immediate=False)


def client_of(settings: Settings, dispatcher: InlineDispatcher) -> Any:
    from webui.app import create_app

    return create_app(settings, dispatcher, config={"TESTING": True}, db=dispatcher.db).test_client()


def post_job(client: Any, url: str | None, secret: str | None = None, name: str = "sample") -> Any:
    form: dict[str, Any] = {"file": (io.BytesIO(judge("10-20-30", name).read_bytes()), "judge.in"),
                            "game": "10-20-30"}
    if url is not None:
        form["notify_url"] = url
    if secret is not None:
        form["notify_secret"] = secret
    return client.post("/api/jobs", data=form, content_type="multipart/form-data")


def post_check(client: Any, job_id: int, url: str | None, data: bytes = OUT) -> Any:
    form: dict[str, Any] = {"file": (io.BytesIO(data), "mine.out")}
    if url is not None:
        form["notify_url"] = url
    return client.post(f"/api/jobs/{job_id}/checks", data=form, content_type="multipart/form-data")


def verifies(headers: dict[str, str], body: bytes, secret: str) -> bool:
    """What a receiver does with the signature."""
    expected = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(headers.get("X-Dealer-Signature", ""), expected)


def test_a_job_calls_back_when_it_ends_signed(db: Database, private: Settings, held: InlineDispatcher,
                                              receiver: Receiver) -> None:
    client = client_of(private, held)
    made = post_job(client, receiver.url, SECRET)
    assert made.status_code == 201, made.get_json()
    job = made.get_json()
    assert job["notify"] == {"url": receiver.url, "signed": True, "state": "waiting", "attempts": 0,
                             "last_status": None, "last_error": None, "next_at": None, "delivered_at": None}
    assert not receiver.calls
    held.drain()
    assert len(receiver.calls) == 1
    headers, body = receiver.calls[0]
    assert verifies(headers, body, SECRET) and not verifies(headers, body, "another secret")
    assert headers["Content-Type"] == "application/json"
    sent = json.loads(body)
    assert sent == {"kind": "job", "id": job["id"], "status": "succeeded", "error": None,
                    "counts": {"win": 1, "loss": 1, "draw": 1}, "total": 3, "done": 3, "failed_cases": 0,
                    "finished_at": sent["finished_at"], "url": f"http://localhost/jobs/{job['id']}", "attempt": 1}
    shown = client.get(f"/api/jobs/{job['id']}").get_json()["notify"]
    assert shown["state"] == "delivered" and shown["attempts"] == 1 and shown["last_status"] == 200
    assert shown["delivered_at"] is not None and shown["last_error"] is None
    held.queue.extend(held.sent)  # every message again: a callback delivered is not made twice
    held.drain()
    assert work.sweep(db, private, held)["notices"] == 0
    assert len(receiver.calls) == 1


def test_a_check_calls_back_when_it_ends(db: Database, private: Settings, receiver: Receiver) -> None:
    client = client_of(private, InlineDispatcher(db, private))
    made = post_job(client, None).get_json()
    job = client.get(f"/api/jobs/{made['id']}").get_json()
    assert job["status"] == "succeeded" and job["notify"] is None
    made = post_check(client, job["id"], receiver.url, OUT.replace(b"Loss: 82", b"Loss: 28"))
    assert made.status_code == 201, made.get_json()
    check = made.get_json()
    assert [body["kind"] for body in receiver.bodies()] == ["check"]
    assert receiver.bodies()[0] == {
        "kind": "check", "id": check["id"], "job_id": job["id"], "status": "done", "error": None,
        "verdict": "wrong_answer", "counts": {"accepted": 2, "presentation_error": 0, "wrong_answer": 1,
                                              "missing": 0, "extra": 0},
        "finished_at": receiver.bodies()[0]["finished_at"], "url": f"http://localhost/checks/{check['id']}",
        "attempt": 1}
    assert "X-Dealer-Signature" not in receiver.calls[0][0]
    assert check["notify"]["state"] == "delivered" and check["notify"]["signed"] is False


def test_a_job_made_with_a_check_calls_back_for_each(private: Settings, held: InlineDispatcher,
                                                    receiver: Receiver) -> None:
    client = client_of(private, held)
    job = post_job(client, receiver.url).get_json()
    check = post_check(client, job["id"], receiver.url + "&check=1").get_json()
    assert check["status"] == "pending" and check["notify"]["state"] == "waiting"
    held.drain()
    assert sorted((body["kind"], body["id"]) for body in receiver.bodies()) == [
        ("check", check["id"]), ("job", job["id"])]


def test_a_callback_answered_500_is_sent_again(db: Database, private: Settings, held: InlineDispatcher,
                                               receiver: Receiver) -> None:
    client = client_of(private, held)
    receiver.answers = [500]
    job = post_job(client, receiver.url, SECRET).get_json()
    held.drain()
    shown = client.get(f"/api/jobs/{job['id']}").get_json()["notify"]
    assert shown["state"] == "due" and shown["attempts"] == 1 and shown["last_status"] == 500
    assert shown["last_error"] == "answered 500" and shown["next_at"] is not None
    assert work.sweep(db, private, held)["notices"] == 1  # the retry's time has come (no wait in these settings)
    held.drain()
    assert [body["attempt"] for body in receiver.bodies()] == [1, 2]
    assert all(verifies(headers, body, SECRET) for headers, body in receiver.calls)
    shown = client.get(f"/api/jobs/{job['id']}").get_json()["notify"]
    assert shown["state"] == "delivered" and shown["attempts"] == 2 and shown["last_status"] == 200


def test_a_callback_is_given_up_when_its_retries_are_spent(db: Database, private: Settings, receiver: Receiver) -> None:
    settings = replace(private, notify_retry_seconds=0.0)
    client = client_of(settings, InlineDispatcher(db, settings))
    receiver.answers = [503]
    job = post_job(client, receiver.url).get_json()
    assert job["notify"]["state"] == "failed" and job["notify"]["last_status"] == 503
    assert work.sweep(db, settings, InlineDispatcher(db, settings))["notices"] == 0
    assert len(receiver.calls) == 1


def test_a_cancelled_job_and_its_check_call_back(db: Database, private: Settings, held: InlineDispatcher,
                                                 receiver: Receiver) -> None:
    client = client_of(private, held)
    job = post_job(client, receiver.url).get_json()
    check = post_check(client, job["id"], receiver.url).get_json()
    held.queue.clear()  # the job's split never comes; the cancel's end is what is told
    assert client.post(f"/api/jobs/{job['id']}/cancel").status_code == 200
    assert sorted(held.queue) == [("notify_check", check["id"]), ("notify_job", job["id"])]
    held.queue.clear()  # those sends lost: the sweep sends them again
    assert work.sweep(db, private, held)["notices"] == 2
    held.drain()
    assert sorted((body["kind"], body["status"]) for body in receiver.bodies()) == [
        ("check", "failed"), ("job", "cancelled")]


@pytest.mark.slow
@pytest.mark.parametrize(("url", "rule"), [
    ("http://127.0.0.1:9/hook", "127.0.0.1 is a loopback address"),
    ("http://localhost:9/hook", "is a loopback address"),
    ("http://[::1]/hook", "::1 is a loopback address"),
    ("http://10.1.2.3/hook", "10.1.2.3 is a private address"),
    ("https://192.168.0.10/hook", "192.168.0.10 is a private address"),
    ("http://[::ffff:172.16.0.1]/hook", "is a private address"),
    ("http://169.254.169.254/latest/meta-data", "169.254.169.254 is a link-local address"),
    ("http://0.0.0.0/", "0.0.0.0 is an unspecified address"),
    ("ftp://example.org/hook", "ftp scheme"),
    ("example.org/hook", "no scheme"),
])
def test_a_url_the_rules_refuse_is_a_400_naming_the_rule(db: Database, settings: Settings, url: str, rule: str) -> None:
    client = client_of(settings, InlineDispatcher(db, settings))
    refused = post_job(client, url)
    assert refused.status_code == 400
    message = refused.get_json()["error"]
    assert rule in message and notify.RULE in message, message
    assert client.get("/api/jobs").get_json()["total"] == 0  # nothing made
    job = post_job(client, None).get_json()
    refused = post_check(client, job["id"], url)
    assert refused.status_code == 400 and rule in refused.get_json()["error"]
    assert client.get(f"/api/jobs/{job['id']}/checks").get_json() == []


def test_a_secret_alone_or_too_long_is_refused(db: Database, settings: Settings) -> None:
    client = client_of(settings, InlineDispatcher(db, settings))
    refused = post_job(client, None, SECRET)
    assert refused.status_code == 400 and "notify_secret is given without a notify_url" in refused.get_json()["error"]
    refused = post_job(client, "http://127.0.0.1/", "s" * 257)
    assert refused.status_code == 400 and "notify_secret is over 256 characters" in refused.get_json()["error"]
    refused = post_job(client, "http://example.org/" + "a" * 2048)
    assert refused.status_code == 400 and "notify_url is over 2048 characters" in refused.get_json()["error"]


def test_a_host_turned_private_since_is_not_connected_to(db: Database, settings: Settings, monkeypatch: pytest.MonkeyPatch,
                                                         receiver: Receiver) -> None:
    """DNS rebinding: the name resolved to a public address when given, to a private one when called."""
    held = InlineDispatcher(db, settings, immediate=False)
    client = client_of(settings, held)
    answers = {"hooks.example.org": ["93.184.216.34"]}
    monkeypatch.setattr(notify, "resolve", lambda host, port: answers[host])
    job = post_job(client, "http://hooks.example.org/hook").get_json()
    assert job["notify"]["state"] == "waiting"
    answers["hooks.example.org"] = ["93.184.216.34", "127.0.0.1"]
    held.drain()
    shown = client.get(f"/api/jobs/{job['id']}").get_json()["notify"]
    assert shown["state"] == "due" and shown["attempts"] == 1 and shown["last_status"] is None
    assert "hooks.example.org (127.0.0.1) is a loopback address" in shown["last_error"]
    assert not receiver.calls


def test_the_connection_goes_to_the_address_checked(db: Database, private: Settings, monkeypatch: pytest.MonkeyPatch,
                                                    receiver: Receiver) -> None:
    """The name is resolved once: the request goes to the address found, under the name (its Host header)."""
    port = receiver.url.split(":")[2].split("/")[0]
    monkeypatch.setattr(notify, "resolve", lambda host, port: ["127.0.0.1"])
    client = client_of(private, InlineDispatcher(db, private))
    post_job(client, f"http://hooks.example.org:{port}/hook")
    assert [headers["Host"] for headers, _ in receiver.calls] == [f"hooks.example.org:{port}"]


def test_the_pages_say_the_status_in_their_title(db: Database, settings: Settings) -> None:
    """As rendered first (their scripts keep it so while the page is open: tests/browser/test_notify_title.py)."""
    held = InlineDispatcher(db, settings, immediate=False)
    client = client_of(settings, held)
    job = post_job(client, None).get_json()
    check = post_check(client, job["id"], None, OUT.replace(b"Loss: 82", b"Loss: 28")).get_json()
    title = re.compile(r"<title>(.*?)</title>")
    page = client.get(f"/jobs/{job['id']}").get_data(as_text=True)
    assert title.search(page).group(1) == f"… queued 0% · job {job['id']} · Dealer"
    assert 'id="notify-me"' in page
    assert title.search(client.get(f"/checks/{check['id']}").get_data(as_text=True)).group(1) == (
        f"… pending · check {check['id']} · Dealer")
    held.drain()
    assert title.search(client.get(f"/jobs/{job['id']}").get_data(as_text=True)).group(1) == (
        f"✓ succeeded · job {job['id']} · Dealer")
    page = client.get(f"/checks/{check['id']}").get_data(as_text=True)
    assert title.search(page).group(1) == f"✗ wrong answer · check {check['id']} · Dealer"
    assert 'id="notify-me"' not in page  # nothing left to wait for
