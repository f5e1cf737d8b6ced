"""Access with API keys (DEALER_API_KEYS): bearer tokens for the API, a login for the pages, CSRF
tokens on every state-changing request from the pages, and keys never shown or stored."""

from __future__ import annotations

import hashlib
import io
import logging
import re
import stat
from dataclasses import replace
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from sqlalchemy import select

from tests.support.inline import InlineDispatcher
from tests.support.jobs import stored_uploads
from tests.support.paths import JUDGE_DATA
from webui import auth
from worker.config import Settings
from worker.store.database import Database
from worker.store.keys import Identity, Keys
from worker.store.models import ApiKey, Job

CI = "ci-0123456789abcdef-secret"
ALICE = "alice-0123456789abcdef-secret"
KEYS = f"ci:{CI}, alice:{ALICE}"
HANDS = (JUDGE_DATA / "mahjong" / "sample.in").read_bytes()


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def keyed_app(db: Database, settings: Settings, dispatcher: Any = None, **more: Any) -> Any:
    from webui.app import create_app

    settings = replace(settings, api_keys=KEYS, **more)
    return create_app(settings, dispatcher or InlineDispatcher(db, settings), config={"TESTING": True}, db=db)


@pytest.fixture
def app(db: Database, settings: Settings, dispatcher: Any) -> Any:  # every test here runs with keys configured
    return keyed_app(db, settings, dispatcher)


def upload(client: Any, headers: dict[str, str] | None = None, data: bytes = HANDS, **kwargs: Any) -> Any:
    form = {"file": (io.BytesIO(data), "hands.in"), "game": "mahjong"}
    return client.post("/api/jobs", data=form, content_type="multipart/form-data", headers=headers or {},
                       **kwargs)


def job_count(db: Database) -> int:
    with db.session(write=False) as session:
        return len(session.scalars(select(Job.id)).all())


def csrf_of(html: str) -> str:
    match = re.search(r'<meta name="csrf-token" content="([^"]+)">', html)
    assert match, "no CSRF token on the page"
    return match.group(1)


def login(client: Any, key: str = ALICE, next_page: str = "/") -> Any:
    token = csrf_of(client.get("/login").get_data(as_text=True))
    return client.post("/login", data={"key": key, "csrf_token": token, "next": next_page})


def login_target(response: Any) -> str:
    """Where a redirect to the login page will go back to once logged in."""
    parts = urlsplit(response.headers["Location"])
    assert parts.path == "/login"
    return parse_qs(parts.query)["next"][0]


def logged_in_token(client: Any) -> str:
    """Log in as alice; the CSRF token the pages now carry."""
    assert login(client).status_code == 303
    return csrf_of(client.get("/").get_data(as_text=True))


# --- keys ----------------------------------------------------------------------------------------


def test_keys_are_read_from_the_environment_and_checked(db: Database, settings: Settings) -> None:
    settings = replace(settings, **vars(Settings.from_env({"DEALER_API_KEYS": KEYS, "DEALER_PUBLIC_READS": "false",
                                                         "DEALER_SECRET_KEY": "s" * 40})) | {
        "database_url": settings.database_url, "data_dir": settings.data_dir})
    assert settings.api_keys == KEYS and settings.public_reads is False
    assert CI not in repr(settings) and "s" * 40 not in repr(settings)  # nor in anything that logs settings
    ring = auth.KeyRing.parse(settings.api_keys)
    assert [(seed.name, seed.role) for seed in ring.seeds] == [("ci", "admin"), ("alice", "admin")]
    assert CI not in repr(ring.seeds)
    store = Keys(db)
    store.seed(ring.seeds)
    assert store.check(CI) == Identity("ci", "admin") and store.check(ALICE) == Identity("alice", "admin")
    assert store.check(CI + "x") is None and store.check("") is None and store.check(CI.upper()) is None


@pytest.mark.parametrize("raw, message", [
    ("tinykey", "DEALER_API_KEYS: key number 1 is shorter than 16 characters"),
    ("ci:tinykey", "DEALER_API_KEYS: key 'ci' is shorter than 16 characters"),
    (f"bad name:{CI}", "DEALER_API_KEYS: key number 1 has a name that is not 1-40 letters"),
    (f"ci:{CI},ci:{ALICE}", "DEALER_API_KEYS: two keys are named 'ci'"),
    ("ci:0123456789abcdef ghij", "DEALER_API_KEYS: key 'ci' must be printable ASCII without spaces"),
])
def test_a_bad_key_list_is_refused_without_showing_the_key(raw: str, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        auth.KeyRing.parse(raw)
    assert str(caught.value).startswith(message)
    secret = raw.rpartition(":")[2].split(",")[0]
    assert secret not in str(caught.value)


def test_a_key_is_found_by_its_digest_alone(db: Database, settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    """A token is never compared with a stored one: its SHA-256 is looked up, whichever key it is (if any)."""
    store = Keys(db)
    store.seed(auth.KeyRing.parse(KEYS).seeds)
    with db.session(write=False) as session:
        stored = {row.name: row.digest for row in session.scalars(select(ApiKey))}
    assert stored == {"ci": hashlib.sha256(CI.encode()).hexdigest(), "alice": hashlib.sha256(ALICE.encode()).hexdigest()}
    monkeypatch.setattr(auth.hmac, "compare_digest", lambda a, b: pytest.fail("a token was compared"))
    assert [store.check(token) for token in (CI, "a-wrong-key-of-some-length")] == [Identity("ci", "admin"), None]


def test_a_bare_key_is_named_by_a_short_fingerprint() -> None:
    ring = auth.KeyRing.parse("0123456789abcdef0123")
    (seed,) = ring.seeds
    assert re.fullmatch(r"key-[0-9a-f]{6}", seed.name) and seed.role == "admin"
    assert "0123456789abcdef0123" not in seed.name


def test_a_key_of_the_variable_is_a_user_when_it_says_so() -> None:
    ring = auth.KeyRing.parse(f"bob:{ALICE}:user, ci:{CI}:admin")
    assert [(seed.name, seed.role, seed.digest) for seed in ring.seeds] == [
        ("bob", "user", hashlib.sha256(ALICE.encode()).hexdigest()), ("ci", "admin", hashlib.sha256(CI.encode()).hexdigest())]


# --- the API: bearer tokens ----------------------------------------------------------------------


def test_every_write_without_a_key_is_refused(client: Any, db: Database, settings: Settings) -> None:
    job = upload(client, bearer(CI)).get_json()
    before = job_count(db)
    for method, path, kwargs in [
        ("post", "/api/jobs", {"data": {"file": (io.BytesIO(HANDS), "x.in")}, "content_type": "multipart/form-data"}),
        ("post", f"/api/jobs/{job['id']}/cancel", {}),
        ("post", f"/api/jobs/{job['id']}/rerun", {}),
        ("delete", f"/api/jobs/{job['id']}", {}),
    ]:
        response = getattr(client, method)(path, **kwargs)
        assert response.status_code == 401, path
        assert response.get_json() == {"error": "this needs an API key: send the header 'Authorization: Bearer "
                                                "<key>', or log in on the pages"}
        assert response.headers["WWW-Authenticate"] == 'Bearer realm="dealer"'
    assert job_count(db) == before
    assert client.get(f"/api/jobs/{job['id']}", headers=bearer(CI)).get_json()["status"] == "succeeded"
    assert stored_uploads(db) == []  # the refused upload was not kept (and the job's, once split)


@pytest.mark.parametrize("header", [f"Bearer {CI}x", "Bearer wrong-key-0123456789", f"Bearer {CI[:-1]}",
                                    f"bearer {ALICE.upper()}"])
def test_a_wrong_key_is_refused(client: Any, db: Database, settings: Settings, header: str) -> None:
    response = upload(client, {"Authorization": header})
    assert response.status_code == 401
    assert response.get_json() == {"error": "the API key is not valid"}
    assert response.headers["WWW-Authenticate"] == 'Bearer realm="dealer", error="invalid_token"'
    assert job_count(db) == 0


@pytest.mark.parametrize("header", [f"Basic {CI}", "Bearer", "Bearer ", CI, "Token abc"])
def test_a_malformed_authorization_header_is_refused(client: Any, header: str) -> None:
    response = upload(client, {"Authorization": header})
    assert response.status_code == 401
    assert "Bearer <key>" in response.get_json()["error"] or response.get_json()["error"] == \
        "the API key is not valid"


def test_writes_with_a_valid_key_work_without_csrf(client: Any, db: Database, settings: Settings) -> None:
    created = upload(client, bearer(CI))
    assert created.status_code == 201
    job_id = created.get_json()["id"]
    again = client.post(f"/api/jobs/{job_id}/rerun", headers=bearer(ALICE))
    assert again.status_code == 201
    assert client.delete(f"/api/jobs/{job_id}", headers=bearer(CI)).status_code == 204
    with db.session(write=False) as session:
        clients = {row.id: row.client for row in session.scalars(select(Job).where(Job.deleted_at.is_(None)))}
    assert clients == {again.get_json()["id"]: "key:alice"}  # the key's name, never the key


def test_public_reads_open_every_read_to_everyone(db: Database, settings: Settings, dispatcher: Any) -> None:
    client = keyed_app(db, settings, dispatcher, public_reads=True).test_client()
    job_id = upload(client, bearer(CI)).get_json()["id"]
    for path in ("/api/jobs", f"/api/jobs/{job_id}", f"/api/jobs/{job_id}/output", "/api/results",
                 "/", f"/jobs/{job_id}", "/history", "/docs"):
        assert client.get(path).status_code == 200, path


def test_reads_need_a_key_by_default(client: Any) -> None:
    job_id = upload(client, bearer(CI)).get_json()["id"]
    for path in ("/api/jobs", f"/api/jobs/{job_id}", f"/api/jobs/{job_id}/output", "/api/results",
                 "/api/overview", "/metrics", f"/api/cases/{job_id * 10**9 + 1}"):
        response = client.get(path)
        assert response.status_code == 401, path
        assert response.headers["WWW-Authenticate"] == 'Bearer realm="dealer"'
        assert client.get(path, headers=bearer(ALICE)).status_code == 200, path
    for page in ("/", f"/jobs/{job_id}", "/history?game=mahjong"):
        response = client.get(page)
        assert response.status_code == 302, page
        assert login_target(response) == page
    # What must stay reachable: logging in, the assets, the load balancer's check, the API's description.
    for path in ("/login", "/static/dealer.css", "/api/openapi.json", "/docs"):
        assert client.get(path).status_code == 200, path
    assert client.get("/healthz").status_code in (200, 503)  # 503: no worker in these tests
    assert logged_in_token(client)
    assert client.get(f"/jobs/{job_id}").status_code == 200


# --- the pages: login, session, CSRF -------------------------------------------------------------


def test_the_pages_offer_a_login_and_hide_what_needs_one(db: Database, settings: Settings, dispatcher: Any) -> None:
    client = keyed_app(db, settings, dispatcher, public_reads=True).test_client()
    job_id = upload(client, bearer(CI)).get_json()["id"]
    dashboard = client.get("/").get_data(as_text=True)
    assert 'id="login-link"' in dashboard and 'id="quick-upload"' not in dashboard
    job_page = client.get(f"/jobs/{job_id}").get_data(as_text=True)
    assert 'id="cancel"' not in job_page and 'id="login-to-act"' in job_page
    response = client.get("/upload")
    assert response.status_code == 302 and login_target(response) == "/upload"
    form = client.get("/login").get_data(as_text=True)
    assert 'type="password"' in form and 'name="csrf_token"' in form and 'name="next"' in form


def test_with_reads_private_every_page_leads_to_the_login(client: Any) -> None:
    """Where reads are private a visitor lands on the login page: its header still has the way in (to the
    page asked for) and a service indicator that says why it shows nothing, and polls nothing."""
    job_id = upload(client, bearer(CI)).get_json()["id"]
    landed = client.get(f"/jobs/{job_id}", follow_redirects=True)
    assert landed.request.path == "/login"
    html = landed.get_data(as_text=True)
    assert f'id="login-link" href="/login?next=/jobs/{job_id}"' in html
    assert re.search(r'id="service-pill"[^>]*data-state="locked"', html)
    assert '<span class="service-text">Log in to see the service</span>' in html
    assert client.get("/api/overview").status_code == 401
    logged_in_token(client)
    html = client.get("/").get_data(as_text=True)
    assert 'id="login-link"' not in html and '<span class="service-text">Checking workers…</span>' in html


def test_logging_in_with_a_key(client: Any) -> None:
    response = login(client, ALICE, "/upload")
    assert response.status_code == 303 and response.headers["Location"] == "/upload"
    cookie = response.headers["Set-Cookie"]
    assert cookie.startswith("dealer_session=") and "HttpOnly" in cookie and "SameSite=Lax" in cookie
    dashboard = client.get("/").get_data(as_text=True)
    assert "alice" in dashboard and 'id="logout"' in dashboard and 'id="quick-upload"' in dashboard
    assert client.get("/upload").status_code == 200


def test_a_wrong_key_does_not_log_in(client: Any) -> None:
    response = login(client, "not-the-key-0123456789")
    assert response.status_code == 401
    assert "That key is not valid" in response.get_data(as_text=True)
    assert "not-the-key-0123456789" not in response.get_data(as_text=True)
    assert 'id="login-link"' in client.get("/login").get_data(as_text=True)
    assert client.get("/upload").status_code == 302


def test_logging_in_needs_the_forms_csrf_token(client: Any) -> None:
    client.get("/login")
    for data in ({"key": ALICE}, {"key": ALICE, "csrf_token": "forged"}):
        response = client.post("/login", data=data)
        assert response.status_code == 403
        assert "security token (CSRF) is missing or wrong" in response.get_data(as_text=True)
    assert client.get("/upload").status_code == 302


def test_after_logging_in_goes_only_to_this_site(app: Any) -> None:
    for target in ("//evil.example/", "https://evil.example/", "/\\evil.example", "javascript:alert(1)"):
        response = login(app.test_client(), ALICE, target)
        assert response.status_code == 303 and response.headers["Location"] == "/", target


def test_page_writes_need_the_csrf_token(client: Any, db: Database, settings: Settings) -> None:
    token = logged_in_token(client)
    # The scripts' fetch() calls send it as a header...
    assert upload(client).status_code == 403
    forged = upload(client, {"X-CSRF-Token": "forged-" + token[7:]})
    assert forged.status_code == 403
    assert forged.get_json() == {"error": "the page's security token (CSRF) is missing or wrong: reload the "
                                          "page and try again"}
    assert job_count(db) == 0
    created = upload(client, {"X-CSRF-Token": token})
    assert created.status_code == 201
    job_id = created.get_json()["id"]
    for method, path in (("post", f"/api/jobs/{job_id}/rerun"), ("delete", f"/api/jobs/{job_id}")):
        assert getattr(client, method)(path).status_code == 403
        assert getattr(client, method)(path, headers={"X-CSRF-Token": "forged"}).status_code == 403
    assert client.post(f"/api/jobs/{job_id}/rerun", headers={"X-CSRF-Token": token}).status_code == 201
    assert client.delete(f"/api/jobs/{job_id}", headers={"X-CSRF-Token": token}).status_code == 204
    # ...and the upload form without JavaScript as a field.
    form = {"file": (io.BytesIO(HANDS), "hands.in"), "csrf_token": "forged"}
    assert client.post("/upload", data=form, content_type="multipart/form-data").status_code == 403
    form = {"file": (io.BytesIO(HANDS), "hands.in"), "csrf_token": token}
    response = client.post("/upload", data=form, content_type="multipart/form-data")
    assert response.status_code == 303 and re.fullmatch(r"/jobs/\d+", response.headers["Location"])
    with db.session(write=False) as session:
        assert set(session.scalars(select(Job.client))) == {"key:alice"}


def test_cancel_from_the_page_needs_the_csrf_token(db: Database, settings: Settings) -> None:
    dispatcher = InlineDispatcher(db, settings, immediate=False)  # the job stays queued
    client = keyed_app(db, settings, dispatcher).test_client()
    token = logged_in_token(client)
    job_id = upload(client, {"X-CSRF-Token": token}).get_json()["id"]
    assert client.post(f"/api/jobs/{job_id}/cancel").status_code == 403
    assert client.post(f"/api/jobs/{job_id}/cancel", headers={"X-CSRF-Token": token + "x"}).status_code == 403
    assert client.get(f"/api/jobs/{job_id}").get_json()["status"] == "queued"
    response = client.post(f"/api/jobs/{job_id}/cancel", headers={"X-CSRF-Token": token})
    assert response.status_code == 200 and response.get_json()["status"] == "cancelled"


def test_the_token_belongs_to_its_session(db: Database, settings: Settings, dispatcher: Any) -> None:
    app = keyed_app(db, settings, dispatcher)
    alice, mallory = app.test_client(), app.test_client()
    alice_token = logged_in_token(alice)
    logged_in_token(mallory)
    assert upload(mallory, {"X-CSRF-Token": alice_token}).status_code == 403


def test_logging_out(client: Any) -> None:
    token = logged_in_token(client)
    assert client.post("/logout").status_code == 403  # a forged logout is refused too
    assert client.post("/logout", data={"csrf_token": token}).status_code == 303
    assert upload(client, {"X-CSRF-Token": token}).status_code == 401
    assert client.get("/upload").status_code == 302


def test_a_session_ends_when_its_key_is_removed(db: Database, settings: Settings, dispatcher: Any) -> None:
    client = keyed_app(db, settings, dispatcher).test_client()
    token = logged_in_token(client)
    cookie = client.get_cookie("dealer_session")
    assert cookie is not None
    from webui.app import create_app

    without_alice = create_app(replace(settings, api_keys=f"ci:{CI}"), dispatcher, config={"TESTING": True}, db=db)
    other = without_alice.test_client()
    other.set_cookie("dealer_session", cookie.value)
    assert upload(other, {"X-CSRF-Token": token}).status_code == 401
    alice_rotated = create_app(replace(settings, api_keys=f"alice:{ALICE}-rotated"), dispatcher,
                               config={"TESTING": True}, db=db).test_client()
    alice_rotated.set_cookie("dealer_session", cookie.value)
    assert upload(alice_rotated, {"X-CSRF-Token": token}).status_code == 401


def test_cross_site_writes_are_refused(client: Any) -> None:
    token = logged_in_token(client)
    response = upload(client, {"X-CSRF-Token": token, "Sec-Fetch-Site": "cross-site"})
    assert response.status_code == 403 and "cross-site" in response.get_json()["error"]
    assert upload(client, {"X-CSRF-Token": token, "Sec-Fetch-Site": "same-origin"}).status_code == 201


def test_the_open_service_refuses_cross_site_writes(db: Database, settings: Settings, dispatcher: Any) -> None:
    """Without keys the service is open, but not to a browser tricked by another site."""
    from webui.app import create_app

    open_client = create_app(settings, dispatcher, config={"TESTING": True}, db=db).test_client()
    assert upload(open_client, {"Sec-Fetch-Site": "cross-site"}).status_code == 403
    assert upload(open_client, {"Sec-Fetch-Site": "same-origin"}).status_code == 201
    assert upload(open_client).status_code == 201  # scripts send no such header


EVIL = "http://evil.example"


@pytest.mark.parametrize("keyed", [False, True], ids=["open", "keys"])
def test_a_cross_origin_form_over_plain_http_is_refused(db: Database, settings: Settings, dispatcher: Any, keyed: bool) -> None:
    """Over plain HTTP to a LAN address a browser sends no Sec-Fetch-Site: its Origin, else its Referer,
    tells another site's form from the service's own pages."""
    from webui.app import create_app

    app = (keyed_app(db, settings, dispatcher) if keyed
           else create_app(settings, dispatcher, config={"TESTING": True}, db=db))
    client = app.test_client()
    token = {"X-CSRF-Token": logged_in_token(client)} if keyed else {}
    before = job_count(db)
    for sent in ({"Origin": EVIL}, {"Referer": f"{EVIL}/page"}, {"Origin": "null"},
                 {"Origin": "http://localhost.evil.example"}, {"Origin": "http://localhost:8080"}):
        response = upload(client, {**token, **sent})
        assert response.status_code == 403 and "another site" in response.get_json()["error"], sent
    job = upload(client, {**token}).get_json()["id"]
    for action in ("cancel", "rerun"):
        assert client.post(f"/api/jobs/{job}/{action}", headers={**token, "Origin": EVIL}).status_code == 403
    assert job_count(db) == before + 1
    # The service's own pages (the test client's host is localhost), scripts and keys go on working.
    for sent in ({"Origin": "http://localhost"}, {"Origin": "http://LOCALHOST:80"},
                 {"Referer": "http://localhost/upload"}, {}):
        assert upload(client, {**token, **sent}).status_code == 201, sent
    script = app.test_client()  # no session: a key, or nothing in open mode
    assert upload(script, {**bearer(CI), "Origin": EVIL} if keyed else {}).status_code == 201
    assert script.post(f"/api/jobs/{job}/rerun", headers=bearer(CI) if keyed else {}).status_code == 201


def test_behind_a_proxy_the_origin_is_compared_with_the_forwarded_host(db: Database, settings: Settings, dispatcher: Any) -> None:
    from webui.app import create_app

    client = create_app(replace(settings, proxy_hops=1), dispatcher, config={"TESTING": True}, db=db).test_client()
    proxied = {"X-Forwarded-Host": "dealer.example", "X-Forwarded-Proto": "https"}
    assert upload(client, {**proxied, "Origin": "https://dealer.example"}).status_code == 201
    assert upload(client, {**proxied, "Origin": "http://localhost"}).status_code == 403
    assert upload(client, {**proxied, "Origin": EVIL}).status_code == 403


# --- the session's secret ------------------------------------------------------------------------


def test_the_session_secret_is_made_once_and_kept_private(db: Database, settings: Settings, dispatcher: Any) -> None:
    first = keyed_app(db, settings, dispatcher)
    path = settings.data_dir / "secret_key"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert keyed_app(db, settings, dispatcher).secret_key == first.secret_key == path.read_text().strip()
    assert len(first.secret_key) >= 32
    given = keyed_app(db, settings, dispatcher, secret_key="x" * 48)
    assert given.secret_key == "x" * 48


def test_without_keys_no_secret_is_made_and_no_cookie_is_set(db: Database, settings: Settings, dispatcher: Any) -> None:
    from webui.app import create_app

    client = create_app(settings, dispatcher, config={"TESTING": True}, db=db).test_client()
    response = client.get("/")
    assert "Set-Cookie" not in response.headers and 'name="csrf-token"' not in response.get_data(as_text=True)
    assert not (settings.data_dir / "secret_key").exists()


# --- keys are never shown, stored or logged ------------------------------------------------------


def test_keys_never_appear_in_answers_rows_or_logs(client: Any, db: Database, settings: Settings,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    seen: list[str] = []
    job = upload(client, bearer(CI))
    seen.append(job.get_data(as_text=True))
    seen.append(upload(client, bearer(CI + "-wrong")).get_data(as_text=True))
    seen.append(upload(client, {"Authorization": f"Basic {CI}"}).get_data(as_text=True))
    seen.append(client.get("/api/jobs", headers=bearer(CI)).get_data(as_text=True))
    seen.append(login(client, CI + "-wrong").get_data(as_text=True))
    seen.append(login(client, CI).get_data(as_text=True))
    seen.append(client.get("/").get_data(as_text=True))
    seen.append(client.get(f"/jobs/{job.get_json()['id']}").get_data(as_text=True))
    with db.session(write=False) as session:
        seen.extend(repr(vars(row)) for row in session.scalars(select(Job)))
    seen.append(caplog.text)
    seen.append(client.get_cookie("dealer_session").value)
    for text in seen:
        assert CI not in text and CI[:12] not in text


def test_the_client_of_a_job_is_its_key_for_the_job_limit(db: Database, settings: Settings) -> None:
    dispatcher = InlineDispatcher(db, settings, immediate=False)
    client = keyed_app(db, settings, dispatcher, max_active_jobs_per_client=1).test_client()
    assert upload(client, bearer(CI)).status_code == 201
    assert upload(client, bearer(CI), environ_base={"REMOTE_ADDR": "10.0.0.9"}).status_code == 429  # same key
    assert upload(client, bearer(ALICE)).status_code == 201  # same address, another key


def test_the_api_document_describes_the_keys(client: Any) -> None:
    doc = client.get("/api/openapi.json").get_json()
    schemes = doc["components"]["securitySchemes"]
    assert schemes["bearerAuth"] == {"type": "http", "scheme": "bearer", "description": schemes["bearerAuth"][
        "description"]}
    for path, item in doc["paths"].items():
        for method, operation in item.items():
            if method == "parameters":
                continue
            if method in ("post", "patch", "delete"):
                assert {"bearerAuth": []} in operation["security"] and {} not in operation["security"], path
                assert {"401", "403"} <= set(operation["responses"]), (path, method)
            elif path not in ("/healthz", "/api/openapi.json"):
                assert {} in operation["security"] and "401" in operation["responses"], path
    assert "429" in doc["paths"]["/api/jobs"]["post"]["responses"]
    assert "429" in doc["paths"]["/api/jobs/{job_id}/rerun"]["post"]["responses"]


# --- guessing is throttled -------------------------------------------------------------------


def test_wrong_bearer_keys_are_throttled_after_a_handful(client: Any, settings: Settings) -> None:
    statuses = [client.get("/api/jobs", headers=bearer(f"guess-{n:04d}-0123456789abcdef")).status_code
                for n in range(settings.auth_failures_allowed + 3)]
    assert statuses[:settings.auth_failures_allowed + 1] == [401] * (settings.auth_failures_allowed + 1)
    refused = client.get("/api/jobs", headers=bearer("guess-last-0123456789abcdef"))
    assert refused.status_code == 429 and int(refused.headers["Retry-After"]) >= 1
    assert "too many wrong keys" in refused.get_json()["error"]
    # A right key is checked first and always passes, from the blocked address too.
    assert client.get("/api/jobs", headers=bearer(CI)).status_code == 200
    assert client.get("/api/jobs", headers=bearer(CI), environ_base={"REMOTE_ADDR": "192.0.2.7"}).status_code == 200
    # A wrong key from another address is counted on its own.
    other = client.get("/api/jobs", headers=bearer("guess-else-0123456789abcdef"),
                       environ_base={"REMOTE_ADDR": "192.0.2.7"})
    assert other.status_code == 401


def test_guesses_sharing_a_keys_prefix_do_not_lock_its_owner_out(client: Any, settings: Settings) -> None:
    for n in range(settings.auth_failures_allowed + 3):
        client.get("/api/jobs", headers=bearer(f"{CI[:12]}-wrong-{n}"), environ_base={"REMOTE_ADDR": f"198.51.100.{n}"})
    assert client.get("/api/jobs", headers=bearer(CI), environ_base={"REMOTE_ADDR": "203.0.113.9"}).status_code == 200
    assert client.get("/api/jobs", headers=bearer(f"{CI[:12]}-wrong-x"),
                      environ_base={"REMOTE_ADDR": "203.0.113.9"}).status_code == 401


def test_a_classroom_behind_one_address_keeps_working_while_one_guesses(db: Database, settings: Settings, dispatcher: Any) -> None:
    """30 clients on one address: one sends wrong keys as fast as it can, the 29 others never see a 429."""
    from webui.app import create_app

    students = {f"student{n:02d}": f"student{n:02d}-key-0123456789abcdef" for n in range(29)}
    seeded = ",".join(f"{name}:{token}:user" for name, token in students.items())
    app = create_app(replace(settings, api_keys=f"ci:{CI},{seeded}"), dispatcher, config={"TESTING": True}, db=db)
    classroom = {"environ_base": {"REMOTE_ADDR": "10.1.2.3"}}
    guesser = app.test_client()
    clients = {name: app.test_client() for name in students}
    guessed: list[int] = []
    answered: list[int] = []
    for round_ in range(4):
        for name, token in students.items():
            guessed += [guesser.get("/api/jobs", headers=bearer(f"guess-{round_}-{name}-{k}-0123456789abcdef"),
                                    **classroom).status_code for k in range(3)]
            answered.append(clients[name].get("/api/jobs", headers=bearer(token), **classroom).status_code)
    assert set(answered) == {200} and len(answered) == 4 * 29
    # The guesser is slowed: past its handful of tries, most of its wrong keys are answered 429 (each
    # further 401 doubles the wait, so only a few more can come while a round takes seconds, not hours).
    assert guessed[:settings.auth_failures_allowed + 1] == [401] * (settings.auth_failures_allowed + 1)
    assert set(guessed) == {401, 429} and guessed.count(429) > guessed.count(401)
    # The guesser's own right key, were it to find one, is not refused either.
    assert guesser.get("/api/jobs", headers=bearer(students["student00"]), **classroom).status_code == 200
    # Nor are the classroom's logins on the pages.
    browser = app.test_client()
    assert login(browser, students["student03"]).status_code == 303


def test_good_keys_are_never_throttled(client: Any) -> None:
    assert {client.get("/api/jobs", headers=bearer(CI)).status_code for _ in range(30)} == {200}


def test_wrong_logins_are_throttled(client: Any, settings: Settings) -> None:
    statuses = [login(client, key=f"wrong-{n}-0123456789abcdef").status_code
                for n in range(settings.auth_failures_allowed + 2)]
    assert statuses[-1] == 429 and set(statuses[:-1]) == {401}
    page = login(client, key="wrong-again-0123456789abcdef")
    assert page.status_code == 429 and "Too many wrong keys" in page.get_data(as_text=True)
    assert "Retry-After" in page.headers
    assert login(client).status_code == 303  # the right key logs in all the same


def test_a_wait_ends_and_grows_with_each_further_failure(db: Database, settings: Settings) -> None:
    from worker.store.throttle import Throttle

    throttle = Throttle(db, allowed=1, longest=4)
    waits = [throttle.failed(["addr:192.0.2.50"]) for _ in range(6)]
    assert waits == [0.0, 1.0, 2.0, 4.0, 4.0, 4.0]
    assert 0 < throttle.wait(["addr:192.0.2.50"]) <= 4.0
    assert throttle.wait(["addr:192.0.2.51"]) == 0.0
    assert Throttle(db, allowed=0).failed(["addr:192.0.2.52"]) == 0.0  # 0 turns it off


def test_jobs_per_minute_are_limited_per_key(db: Database, settings: Settings) -> None:
    client = keyed_app(db, settings, max_jobs_per_minute_per_client=2).test_client()
    assert [upload(client, bearer(CI)).status_code for _ in range(2)] == [201, 201]
    refused = upload(client, bearer(CI))
    assert refused.status_code == 429 and 1 <= int(refused.headers["Retry-After"]) <= 60
    assert "in the last minute" in refused.get_json()["error"]
    assert upload(client, bearer(ALICE)).status_code == 201  # another key has its own minute
    assert job_count(db) == 3


# --- sessions are kept by the server ---------------------------------------------------------


def test_logging_out_ends_every_copy_of_the_session(app: Any, db: Database, settings: Settings) -> None:
    browser = app.test_client()
    token = logged_in_token(browser)
    copy = app.test_client()
    copy.set_cookie("dealer_session", browser.get_cookie("dealer_session").value)
    copy_token = csrf_of(copy.get("/").get_data(as_text=True))
    assert copy_token == token
    browser.post("/logout", data={"csrf_token": token})
    refused = upload(copy, {"X-CSRF-Token": copy_token})
    assert refused.status_code == 401
    assert job_count(db) == 0


def test_a_session_ends_after_its_lifetime(db: Database, settings: Settings, dispatcher: Any) -> None:
    from datetime import timedelta

    from sqlalchemy import update

    from worker.store.models import WebSession, utcnow

    client = keyed_app(db, settings, dispatcher, session_hours=0.5).test_client()
    token = logged_in_token(client)
    with db.session(write=False) as session:
        row = session.scalars(select(WebSession)).one()
        assert timedelta(minutes=29) < row.expires_at - row.created_at <= timedelta(minutes=30)
    with db.session() as session:
        session.execute(update(WebSession).values(expires_at=utcnow() - timedelta(seconds=1)))
    assert upload(client, {"X-CSRF-Token": token}).status_code == 401
