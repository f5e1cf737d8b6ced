"""The pages with API keys configured and reads private (as shipped), in Chromium: a visitor led to the
login page, logging in, then uploading, rerunning and deleting from the pages (their fetch and XHR calls
carry the CSRF token), under the Content-Security-Policy; and a file name with markup in it shown as text."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser.test_ui_live import DESKTOP, PHONE, axe_problems
from tests.support.paths import JUDGE_DATA
from worker.client import Client
from worker.testing.live import LiveService, live_service

pytestmark = [pytest.mark.browser, pytest.mark.slow]

KEY = "browser-test-key-0123456789abcdef"


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveService]:
    """One embedded service with a key for this module (the other browser tests run without keys)."""
    with live_service("embedded", tmp_path_factory.mktemp("browser-keys"),
                      DEALER_API_KEYS=f"tester:{KEY}") as service:
        yield service


def keyed_client(live: LiveService) -> Client:
    client = Client(live.url)
    client.headers["Authorization"] = f"Bearer {KEY}"
    return client


def log_in(page: Any, key: str = KEY) -> None:
    page.goto("/")  # reads are private: the login page, whose header has the way in too
    page.click("#login-link")
    page.wait_for_url(re.compile(r"/login\?next="))
    page.fill("#key", key)
    page.click("#login-button")


def test_without_logging_in_every_page_leads_to_the_login(page: Any, live: LiveService) -> None:
    response = page.goto("/")
    page.wait_for_url(re.compile(r"/login\?next=(%2F|/)$"))
    headers = response.headers
    assert "script-src 'self'" in headers["content-security-policy"] and headers["x-frame-options"] == "DENY"
    assert page.locator("#login-link").is_visible()
    assert page.locator("#quick-upload").count() == 0
    pill = page.locator("#service-pill")
    assert pill.get_attribute("data-state") == "locked" and pill.inner_text().strip() == "Log in to see the service"
    for size in (DESKTOP, PHONE):  # the pill keeps its name where its text is out of sight
        page.set_viewport_size(size)
        assert axe_problems(page) == [], size
    page.goto("/upload")
    page.wait_for_url(re.compile(r"/login\?next=(%2F|/)upload$"))
    assert page.locator("#key").get_attribute("type") == "password"


def test_a_wrong_key_is_refused_on_the_login_page(page: Any, live: LiveService, screenshot: Any) -> None:
    log_in(page, "not-the-key-0123456789")
    alert = page.locator("#login-error")
    alert.wait_for(state="visible")
    assert alert.inner_text().strip() == "That key is not valid."
    assert "/login" in page.url
    screenshot(page, "login-refused")


def test_log_in_upload_rerun_delete_and_log_out(page: Any, live: LiveService, screenshot: Any) -> None:
    log_in(page)
    page.wait_for_selector("#logout")
    assert page.locator("#account").inner_text().startswith("tester")
    # The dashboard's drop zone: an XHR upload that sends the CSRF token.
    page.set_input_files("#quick-file", str(JUDGE_DATA / "mahjong" / "sample.in"))
    page.wait_for_selector("#quick-status a")
    href = page.get_attribute("#quick-status a", "href")
    job_id = int(href.rsplit("/", 1)[1])
    assert keyed_client(live).wait(job_id)["status"] == "succeeded"
    screenshot(page, "logged-in-dashboard")
    # The job page's buttons: fetch() calls that send it too.
    page.goto(f"/jobs/{job_id}")
    page.wait_for_selector("#job[data-status=succeeded]")
    page.click("#rerun")
    page.wait_for_url(lambda url: re.search(r"/jobs/\d+$", url) is not None and not url.endswith(f"/{job_id}"))
    rerun_id = int(page.url.rsplit("/", 1)[1])
    assert rerun_id != job_id
    page.wait_for_selector("#job[data-status=succeeded]", timeout=60_000)
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#delete")
    page.wait_for_url(re.compile(r"/$"))
    assert page.locator(f'tr[data-job="{rerun_id}"]').count() == 0
    # A request with a forged token is refused, even from the page itself.
    status = page.evaluate(f"""async () => (await fetch('/api/jobs/{job_id}/rerun',
        {{method: 'POST', headers: {{'X-CSRF-Token': 'forged'}}}})).status""")
    assert status == 403
    page.click("#logout")
    page.wait_for_selector("#login-link")
    status = page.evaluate(f"""async () => (await fetch('/api/jobs/{job_id}/rerun', {{method: 'POST',
        headers: {{'X-CSRF-Token': document.querySelector('meta[name=csrf-token]').content}}}})).status""")
    assert status == 401


def test_markup_in_a_file_name_is_shown_as_text(page: Any, live: LiveService, tmp_path: Path) -> None:
    name = "<img src=x onerror=window.__xss=1>.in"
    path = tmp_path / name
    path.write_bytes((JUDGE_DATA / "10-20-30" / "sample.in").read_bytes())
    job = keyed_client(live).submit(str(path), "10-20-30")
    keyed_client(live).wait(job["id"])
    log_in(page)
    page.wait_for_selector("#logout")
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    for url in ("/", f"/jobs/{job['id']}", f"/history?job_id={job['id']}"):
        page.goto(url)
        page.wait_for_load_state("networkidle")
        assert page.evaluate("window.__xss") is None, url
        assert page.locator("img[src=x]").count() == 0, url
    page.goto("/")
    page.wait_for_selector(f'tr[data-job="{job["id"]}"]')
    assert page.locator(f'tr[data-job="{job["id"]}"] .fname').inner_text() == name
    page.goto(f"/jobs/{job['id']}")
    assert page.locator("h1 .fname").inner_text() == name
    assert not dialogs


def test_dealer_submit_sends_dealer_api_key(live: LiveService) -> None:
    import os
    import subprocess

    from worker.testing.live import DEALER

    env = {k: v for k, v in os.environ.items() if k != "DEALER_API_KEY"}
    hands = str(JUDGE_DATA / "mahjong" / "sample.in")
    refused = subprocess.run([*DEALER, "submit", hands, "--url", live.url], env=env, capture_output=True,
                             text=True, timeout=60)
    assert refused.returncode == 3  # the service refuses (worker/exits.py)
    assert "401 this needs an API key" in refused.stderr and "(set DEALER_API_KEY to your key)" in refused.stderr
    wrong = subprocess.run([*DEALER, "submit", hands, "--url", live.url], env={**env, "DEALER_API_KEY": "x" * 20},
                           capture_output=True, text=True, timeout=60)
    assert wrong.returncode == 3 and "the API key is not valid" in wrong.stderr and "x" * 20 not in wrong.stderr
    done = subprocess.run([*DEALER, "submit", hands, "--url", live.url, "--wait"],
                          env={**env, "DEALER_API_KEY": KEY}, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == (JUDGE_DATA / "mahjong" / "sample.out").read_text()
