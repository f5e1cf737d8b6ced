"""Hostile file names, security headers, no inline script or style, no debug mode, and history
filters that look like SQL injection."""

from __future__ import annotations

import io
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from markupsafe import escape
from sqlalchemy import func, select

from tests.support.http import post_file as upload
from tests.support.jobs import stored_uploads
from tests.support.paths import JUDGE_DATA, ROOT, judge
from tests.web.conftest import Reading
from worker.store.database import Database
from worker.store.models import Chunk, Job

SCRIPT_NAME = "<script>alert('x')</script><img src=x onerror=alert(1)>.in"
HANDS = (JUDGE_DATA / "mahjong" / "sample.in").read_bytes()


def files_under(root: Path) -> set[Path]:
    return {path for path in root.rglob("*") if path.is_file()}


# --- hostile file names --------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["../../etc/passwd", "/etc/passwd", "..%2F..%2Fetc%2Fpasswd",
                                  "../../../../tmp/dealer-owned.in", "uploads/../../x.in"])
def test_a_path_in_a_file_name_is_only_a_name(client: Any, settings: Any, tmp_path: Path, name: str) -> None:
    before = files_under(tmp_path)
    response = upload(client, HANDS, "mahjong", name)
    assert response.status_code == 201
    job = client.get(f"/api/jobs/{response.get_json()['id']}").get_json()
    assert job["status"] == "succeeded" and job["filename"] == name
    new = files_under(tmp_path) - before
    # Only the database's own files: the upload went into it, under no name of the client's.
    assert all(path.is_relative_to(settings.data_dir) and path.name.startswith("dealer.db") for path in new), new
    assert not Path("/tmp/dealer-owned.in").exists()
    html = client.get(f"/jobs/{job['id']}").get_data(as_text=True)
    assert str(escape(name)) in html
    assert str(escape(name)) in client.get("/").get_data(as_text=True)


def test_a_script_in_a_file_name_renders_inertly(client: Any) -> None:
    job_id = upload(client, HANDS, "mahjong", SCRIPT_NAME).get_json()["id"]
    case_id = client.get(f"/api/jobs/{job_id}/cases").get_json()["items"][0]["id"]
    assert client.get(f"/api/jobs/{job_id}").get_json()["filename"] == SCRIPT_NAME  # kept as given
    for path in ("/", f"/jobs/{job_id}", f"/cases/{case_id}", f"/jobs/{job_id}/cases/1",
                 f"/history?job_id={job_id}", "/?page=1"):
        html = client.get(path).get_data(as_text=True)
        assert "<script>alert" not in html and "<img src=x" not in html, path
        scripts = ScriptsAndStyles.of(html)
        assert all(src for src, kind in scripts.scripts if kind != "application/json"), path
    dashboard = client.get("/").get_data(as_text=True)
    assert str(escape(SCRIPT_NAME)) in dashboard  # shown as text: &lt;script&gt;…
    job_page = client.get(f"/jobs/{job_id}").get_data(as_text=True)
    assert str(escape(SCRIPT_NAME)) in job_page
    # The page's JSON for its scripts cannot close its <script> element early.
    data = re.search(r'<script type="application/json" id="job-data">(.*?)</script>', job_page, re.S)
    assert data and "<" not in data.group(1)
    assert json.loads(data.group(1))["job"]["filename"] == SCRIPT_NAME


def test_the_scripts_build_rows_as_text_not_html() -> None:
    """The dashboard, job and history rows are filled with textContent and DOM nodes, never markup."""
    sources = {path.name: path.read_text() for path in (ROOT / "webui" / "static" / "js").rglob("*.js")}
    assert sources
    for name, text in sources.items():
        for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"):
            assert sink not in text, f"{name} uses {sink}"
        assert not re.search(r"setAttribute\(\s*[\"']style", text), name
        assert not re.search(r"style:\s*[\"'`]", text), f"{name} sets a style attribute as a string"
    assert "name.textContent = job.filename" in sources["dashboard.js"]


# --- headers, inline code, debug mode ------------------------------------------------------------

HEADERS = {
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
                               "font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; "
                               "form-action 'self'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
}


def test_every_answer_carries_the_security_headers(client: Any) -> None:
    job_id = upload(client, HANDS, "mahjong").get_json()["id"]
    for method, path in [("get", "/"), ("get", "/upload"), ("get", f"/jobs/{job_id}"), ("get", "/history"),
                         ("get", "/docs"), ("get", "/api/jobs"), ("get", f"/api/jobs/{job_id}/output"),
                         ("get", "/static/dealer.css"), ("get", "/static/js/app.js"), ("get", "/healthz"),
                         ("get", "/metrics"), ("get", "/nowhere"), ("get", "/api/jobs/999"),
                         ("post", "/api/jobs"), ("get", "/login")]:
        response = getattr(client, method)(path)
        # /docs alone lets Swagger UI's icons (data: images) through.
        docs = HEADERS["Content-Security-Policy"].replace("img-src 'self';", "img-src 'self' data:;")
        expected = {**HEADERS, "Content-Security-Policy": docs} if path == "/docs" else HEADERS
        for header, value in expected.items():
            assert response.headers.get(header) == value, (path, header)


@pytest.mark.slow
@pytest.mark.parametrize(("base_url", "sent"), [
    ("http://localhost", True), ("http://127.0.0.1:8000", True), ("http://[::1]:8000", True),
    ("https://192.168.1.20", True), ("https://dealer.example", True),
    ("http://192.168.1.20:8000", False), ("http://dealer.example", False)])
def test_the_opener_policy_is_sent_only_where_a_browser_honours_it(reading: Reading, base_url: str,
                                                                    sent: bool) -> None:
    """Cross-Origin-Opener-Policy is honoured on a trustworthy origin alone (HTTPS, this machine): over plain
    HTTP on a LAN address the browser ignores it and logs an error on every page, so it is not sent."""
    client = reading.app.test_client()
    for path in ("/", "/docs", "/api/jobs", "/static/dealer.css"):
        response = client.get(path, base_url=base_url)
        assert response.headers.get("Cross-Origin-Opener-Policy") == ("same-origin" if sent else None), path
        assert response.headers["X-Frame-Options"] == "DENY"  # the others, everywhere


def test_a_proxy_that_says_https_is_trusted_for_the_opener_policy(db: Database, settings: Any, dispatcher: Any) -> None:
    from dataclasses import replace

    from webui.app import create_app

    app = create_app(replace(settings, proxy_hops=1), dispatcher, config={"TESTING": True}, db=db)
    client = app.test_client()
    forwarded = {"X-Forwarded-For": "192.168.1.7", "X-Forwarded-Host": "192.168.1.20"}
    over_https = client.get("/", headers={**forwarded, "X-Forwarded-Proto": "https"}, base_url="http://10.0.0.2")
    assert over_https.headers.get("Cross-Origin-Opener-Policy") == "same-origin"
    over_http = client.get("/", headers={**forwarded, "X-Forwarded-Proto": "http"}, base_url="http://10.0.0.2")
    assert "Cross-Origin-Opener-Policy" not in over_http.headers


class ScriptsAndStyles(HTMLParser):
    """What a Content-Security-Policy of 'self' would block: inline scripts, styles and handlers."""

    def __init__(self) -> None:
        super().__init__()
        self.scripts: list[tuple[str | None, str | None]] = []
        self.inline: list[str] = []

    @classmethod
    def of(cls, html: str) -> ScriptsAndStyles:
        parser = cls()
        parser.feed(html)
        return parser

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "script":
            self.scripts.append((values.get("src"), values.get("type")))
        if tag == "style":
            self.inline.append("<style>")
        for name, _ in attrs:
            if name == "style" or name.startswith("on"):
                self.inline.append(f"<{tag} {name}=…>")
            if name in ("href", "src", "action") and (values[name] or "").strip().lower().startswith("javascript:"):
                self.inline.append(f"<{tag} {name}=javascript:…>")


def test_no_page_has_inline_script_or_style(reading: Reading) -> None:
    client, job = reading.app.test_client(), reading.jobs["10-20-30"]
    case_id = client.get(f"/api/jobs/{job['id']}/cases").get_json()["items"][0]["id"]
    for path in ("/", "/upload", f"/jobs/{job['id']}", f"/cases/{case_id}", "/history", "/docs", "/nowhere",
                 "/?page=x"):
        page = ScriptsAndStyles.of(client.get(path).get_data(as_text=True))
        assert page.inline == [], (path, page.inline)
        assert page.scripts and all(src or kind == "application/json" for src, kind in page.scripts), path


def test_debug_mode_is_off_unless_flask_debug_says_so(db: Database, settings: Any, dispatcher: Any,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from webui.app import create_app

    monkeypatch.delenv("FLASK_DEBUG", raising=False)
    assert create_app(settings, dispatcher, db=db).debug is False
    assert create_app(settings, dispatcher, config={"DEBUG": True}, db=db).debug is False
    monkeypatch.setenv("FLASK_DEBUG", "1")
    assert create_app(settings, dispatcher, db=db).debug is True


def test_an_unexpected_error_shows_no_traceback(db: Database, settings: Any, dispatcher: Any,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from webui.app import create_app
    from worker.jobs.queries import JobQueries

    monkeypatch.delenv("FLASK_DEBUG", raising=False)
    client = create_app(settings, dispatcher, db=db).test_client()  # not TESTING: errors are answered, not raised

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("secret internals")

    monkeypatch.setattr(JobQueries, "jobs", broken)
    for path in ("/api/jobs", "/"):
        response = client.get(path)
        body = response.get_data(as_text=True)
        assert response.status_code == 500 and "secret internals" not in body and "Traceback" not in body


# --- history filters that look like SQL injection ------------------------------------------------

INJECTIONS = ["' OR '1'='1", "1 OR 1=1", "1; DROP TABLE cases; --", "win' --", "\" OR \"\"=\"", "1)) UNION SELECT "
              "password FROM users --", "%27%20OR%201%3D1", "'; DELETE FROM jobs; --", "\x00", "ready\x00"]


@pytest.mark.slow
@pytest.mark.parametrize("value", INJECTIONS)
def test_injection_looking_filters_are_refused_or_find_nothing(reading: Reading, value: str) -> None:
    client, db, job_id = reading.app.test_client(), reading.db, reading.jobs["mahjong"]["id"]
    with db.session(write=False) as session:
        before = (session.scalar(select(func.count()).select_from(Chunk)),
                  session.scalar(select(func.count()).select_from(Job)))
    for name in ("game", "outcome", "number_min", "number_max", "job_id", "since", "until", "sort", "page",
                 "per_page", "input"):
        for path in ("/api/results", f"/api/jobs/{job_id}/cases", "/api/results/export"):
            params = {name: value}
            if name == "input":
                params["game"] = "mahjong"
            response = client.get(path, query_string=params)
            assert response.status_code in (200, 400), (path, name, response.status_code)
            if response.status_code == 400:
                assert response.is_json and response.get_json()["error"], (path, name)
            elif path != "/api/results/export" and name not in ("page", "per_page", "sort"):
                assert response.get_json()["total"] == 0, (path, name)
        page = client.get("/history", query_string={name: value})
        assert page.status_code == 200, name  # the page only echoes them; its script asks the API
    for name in ("status", "game", "page", "per_page"):
        response = client.get("/api/jobs", query_string={name: value})
        assert response.status_code in (200, 400), (name, response.status_code)
    with db.session(write=False) as session:
        after = (session.scalar(select(func.count()).select_from(Chunk)),
                 session.scalar(select(func.count()).select_from(Job)))
    assert after == before


def test_history_page_echoes_filters_as_text(client: Any) -> None:
    value = '"><script>alert(1)</script>'
    html = client.get("/history", query_string={"input": value, "number_min": value}).get_data(as_text=True)
    assert "<script>alert(1)" not in html
    assert str(escape(value)) in html


def test_upload_form_file_is_not_kept_when_refused(client: Any, db: Database, settings: Any) -> None:
    response = client.post("/api/jobs", data={"file": (io.BytesIO(b"\x1f\x8b\x08\x00" + b"x" * 100), "a.gz")},
                           content_type="multipart/form-data")
    assert response.status_code == 400
    assert stored_uploads(db) == []
    assert judge("mahjong", "sample").exists()


# --- numbers too large for a column ----------------------------------------------------------------

TOO_BIG = ("2147483648", "99999999999999999999999")
ID_PATHS = [("GET", "/api/jobs/{big}"), ("DELETE", "/api/jobs/{big}"), ("POST", "/api/jobs/{big}/cancel"),
            ("POST", "/api/jobs/{big}/rerun"), ("GET", "/api/jobs/{big}/output"), ("GET", "/api/jobs/{big}/cases"),
            ("GET", "/api/jobs/{big}/cases/1"), ("GET", "/api/jobs/1/cases/{big}"),
            ("GET", "/api/jobs/{big}/distribution"), ("GET", "/api/jobs/{big}/timings"),
            ("GET", "/api/cases/{big}{big}"), ("GET", "/jobs/{big}"), ("GET", "/jobs/1/cases/{big}"),
            ("GET", "/cases/{big}{big}")]
NUMBER_QUERIES = ["/api/jobs?page={big}", "/api/jobs?per_page={big}", "/api/results?page={big}",
                  "/api/results?number_min={big}", "/api/results?number_max={big}", "/api/results?job_id={big}",
                  "/api/jobs/1/cases?number_min={big}", "/api/jobs/1/cases?after={big}:1",
                  "/api/jobs/1/cases?before=1:{big}", "/api/results/export?job_id={big}",
                  "/api/results/export?number_max={big}"]


def test_an_id_that_cannot_exist_is_not_found(reading: Reading) -> None:
    client = reading.app.test_client()
    for method, path in [*ID_PATHS, ("GET", "/api/jobs/0"), ("DELETE", "/api/jobs/0")]:
        for big in TOO_BIG:
            url = path.format(big=big)
            response = client.open(url, method=method, headers={"Accept": "application/json"})
            assert response.status_code == 404, (method, url, response.get_data(as_text=True)[:200])
            assert "error" in response.get_json()


def test_a_number_too_large_is_a_bad_request_naming_it(reading: Reading) -> None:
    client = reading.app.test_client()
    for query in NUMBER_QUERIES:
        for big in TOO_BIG:
            url = query.format(big=big)
            response = client.get(url)
            assert response.status_code == 400, (url, response.get_data(as_text=True)[:200])
            name = query.split("?")[1].split("=")[0]
            error = response.get_json()["error"]
            assert name in error or "cursor" in error, (url, error)


def test_a_page_number_too_large_for_the_pages_is_refused_too(client: Any) -> None:
    response = client.get("/?page=99999999999", headers={"Accept": "text/html"})
    assert response.status_code == 400 and "Page must be at most" in response.get_data(as_text=True)


@pytest.mark.parametrize("query", ["/api/results?until=", "/api/jobs?status=", "/api/jobs/1/cases?sort=",
                                   "/api/jobs/1/output?partial=", "/api/results/export?format="])
def test_an_empty_parameter_is_refused(reading: Reading, query: str) -> None:
    response = reading.app.test_client().get(query)
    assert response.status_code == 400
    assert response.get_json()["error"].endswith("is empty: leave it out or give it a value")


def test_an_error_inside_a_streamed_answer_ends_it_and_is_logged(client: Any, app: Any, three_jobs: Any,
                                                                 monkeypatch: pytest.MonkeyPatch,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    from webui.context import dealer

    with app.app_context():  # outside a request the queries see nothing: the app's own see all
        real = dealer().cases.iter_results

    def failing(flt: Any) -> Any:
        batches = real(flt)
        yield next(batches)
        raise RuntimeError("the database went away half-way")

    monkeypatch.setattr(type(real.__self__), "iter_results", lambda self, flt: failing(flt))
    response = client.get("/api/results/export?format=csv")
    assert response.status_code == 200
    lines = response.get_data(as_text=True).splitlines()
    assert lines[0].startswith("id,job_id,index") and len(lines) > 1
    assert any("cut short" in record.getMessage() for record in caplog.records)
