"""``/docs`` in Chromium: the interactive reference shows every operation of the OpenAPI document with
its parameters, loads nothing from another host, and its "Try it out" writes with the page's login
(the session cookie and the CSRF token the other pages send)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.browser.test_ui_live import axe_problems
from tests.support.paths import JUDGE_DATA
from worker.client import Client, ClientError
from worker.testing.live import LiveService, live_service

pytestmark = [pytest.mark.browser, pytest.mark.slow]

KEY = "api-reference-key-0123456789abcdef"
METHODS = ("get", "post", "patch", "delete")


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveService]:
    """A service with a key, whose reads stay public so that its readiness (``/api/overview``) answers."""
    with live_service("embedded", tmp_path_factory.mktemp("api-reference"), DEALER_API_KEYS=f"tester:{KEY}",
                      DEALER_PUBLIC_READS="true") as service:
        yield service


@pytest.fixture
def requested(page: Any) -> list[str]:
    """Every URL the tab asks for."""
    seen: list[str] = []
    page.on("request", lambda request: seen.append(request.url))
    return seen


def keyed(live: LiveService) -> Client:
    client = Client(live.url)
    client.headers["Authorization"] = f"Bearer {KEY}"
    return client


def operations(live: LiveService) -> list[tuple[str, dict[str, Any], list[dict[str, Any]]]]:
    """Each operation's Swagger UI id, the operation, and its parameters (the path's and its own)."""
    document = live.get("/api/openapi.json")
    found = []
    for path, item in document["paths"].items():
        for method in METHODS:
            if method in item:
                operation = item[method]
                block = f"operations-{operation['tags'][0]}-{operation['operationId']}"
                found.append((block, operation, item.get("parameters", []) + operation.get("parameters", [])))
    return found


def test_every_operation_shows_its_parameters_and_nothing_comes_from_another_host(
        page: Any, live: LiveService, requested: list[str]) -> None:
    page.goto("/docs")
    page.wait_for_selector(".opblock")
    found = operations(live)
    assert page.locator(".opblock").count() == len(found)
    # Every operation opened at once, in one script, so that Swagger UI draws them in one pass: it resolves an
    # opened operation's references over the whole document and draws the page again each time, and opened
    # one by one they cost the tab 27 CPU-seconds against 15.
    page.evaluate("() => document.querySelectorAll('.opblock-summary-control')"
                  ".forEach(control => control.click())")
    rows, parts = [], []
    for block, operation, parameters in found:
        rows += [f'#{block} .opblock-body tr[data-param-name="{parameter["name"]}"][data-param-in="{parameter["in"]}"]'
                 for parameter in parameters]
        parts += [f'#{block} .opblock-body .responses-table tr.response[data-code="{status}"]'
                  for status in operation["responses"]]
        if "requestBody" in operation:
            parts.append(f"#{block} .opblock-body .opblock-section-request-body")
    # One wait for the whole page and one read of its rows, not a round trip to the browser for each
    # (~200 parameters and responses): what is missing (each selector names its operation) is named when
    # the wait runs out. The pass is one long task of the tab's, over 20 s on a busy machine.
    try:
        page.wait_for_function("parts => parts.every(part => document.querySelector(part))", arg=rows + parts,
                               timeout=120_000)
    except PlaywrightTimeout:
        missing = page.evaluate("parts => parts.filter(part => !document.querySelector(part))", rows + parts)
        pytest.fail(f"not shown: {missing}")
    texts = iter(page.evaluate("rows => rows.map(row => document.querySelector(row).innerText)", rows))
    for _, operation, parameters in found:
        for parameter in parameters:
            # Descriptions are CommonMark: a `code` span shows without its backticks.
            words = " ".join(parameter["description"].replace("`", "").split()[:4])
            assert words in " ".join(next(texts).split()), (operation["operationId"], parameter["name"])
    host = urlsplit(live.url).netloc
    assert {urlsplit(url).netloc for url in requested if urlsplit(url).scheme in ("http", "https")} == {host}
    assert not [url for url in requested if not url.startswith(("http:", "https:", "data:", "blob:"))]


def test_try_it_out_writes_with_the_pages_login(page: Any, live: LiveService, requested: list[str]) -> None:
    client = keyed(live)
    job = live.wait(client.submit(str(JUDGE_DATA / "mahjong" / "sample.in"))["id"])
    assert job["status"] == "succeeded"
    page.goto("/login")
    page.fill("#key", KEY)
    page.click("#login-button")
    page.wait_for_selector("#logout")
    page.goto("/docs")
    block = page.locator("#operations-jobs-deleteJob")
    block.locator(".opblock-summary-control").click()
    block.locator("button.try-out__btn").click()
    block.locator('tr[data-param-name="job_id"] input').fill(str(job["id"]))
    block.locator("button.execute").click()
    status = block.locator(".live-responses-table tr.response .response-col_status").first
    status.wait_for()
    answered = block.locator(".live-responses-table").inner_text()
    assert re.fullmatch(r"20[04]", status.inner_text().strip()), answered
    with pytest.raises(ClientError, match="404"):
        client.job(job["id"])
    assert {urlsplit(url).netloc for url in requested if urlsplit(url).scheme in ("http", "https")} == \
        {urlsplit(live.url).netloc}


@pytest.mark.parametrize("width", [1280, 390])
def test_the_reference_passes_axe_and_fits_a_phone(page: Any, live: LiveService, screenshot: Any,
                                                   width: int) -> None:
    """/docs as the other pages' own tests check them (test_ui_live.py, test_newcomer.py), at both widths."""
    page.set_viewport_size({"width": width, "height": 900})
    page.goto("/docs")
    page.wait_for_selector(".opblock")
    assert axe_problems(page) == []
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    screenshot(page, f"api-{width}")


def test_the_authentication_sentence_shows_whole(page: Any) -> None:
    page.goto("/docs")
    page.wait_for_selector(".opblock")
    about = " ".join(page.locator(".information-container .description").inner_text().split())
    assert "sent as Authorization: Bearer <key>; reads too" in about


def test_try_it_out_presets_no_game_and_an_accordion_file_is_taken(page: Any, live: LiveService) -> None:
    page.goto("/login")
    page.fill("#key", KEY)
    page.click("#login-button")
    page.wait_for_selector("#logout")
    page.goto("/docs")
    block = page.locator("#operations-jobs-createJob")
    block.locator(".opblock-summary-control").click()
    block.locator("button.try-out__btn").click()
    game = block.locator('[data-property-name="game"] select')
    game.wait_for()
    # Left out, the game is recognised from the file: no choice is made for the reader.
    assert game.input_value() == ""
    block.locator('[data-property-name="file"] input[type="file"]').set_input_files(
        str(JUDGE_DATA / "accordion" / "sample.in"))
    block.locator("button.execute").click()
    status = block.locator(".live-responses-table tr.response .response-col_status").first
    status.wait_for()
    answered = block.locator(".live-responses-table").inner_text()
    assert status.inner_text().strip() == "201", answered
    made = re.search(r'"id": (\d+)', answered)
    assert made is not None, answered
    assert keyed(live).job(int(made.group(1)))["game"] == "accordion"
