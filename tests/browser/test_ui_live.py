"""The pages as their users live in them, in Chromium against one embedded service: a big upload
watched from the upload page, the dashboard, the job page and the workers view (its progress, the time
left, a stall, the end: each as the API gives it), the dashboard's filters and actions on selected jobs,
long errors, the history, a phone, the drop-then-submit flow, the messages of a bad file, and every
page through axe-core with a screenshot at both widths.

The tests share the service and run in order: the first one uploads the big file later ones look at.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import signal
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import SCREENSHOTS
from tests.support.paths import JUDGE_DATA, failing
from worker.testing.waiting import until
from webui import live as live_streams
from worker.jobs.queries import STALLED_AFTER
from worker.testing.data import random_judge_file
from worker.testing.live import LiveService, arriving, held_still, live_service

pytestmark = [pytest.mark.browser, pytest.mark.slow]

FINISHED = ("succeeded", "failed", "cancelled")

#: axe-core as the app serves it (webui/static/vendor): never from a CDN.
AXE = "/static/vendor/axe-core/axe.min.js"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}
#: Decks of the big upload (7 MB): a second or more of reading and of solving on a quiet machine (on two
#: processes, in pure Python: see ``live``), for the test to catch each and hold it still.
BIG_DECKS = 60_000
#: Ids of what this module made, by name.
JOBS: dict[str, int] = {}

#: Reports, on every page of a tab, any figure that is negative or not a number as the page changes,
#: and what the upload's and the job's progress say (to ``window.dealerSeen``, given by the test); and
#: counts the page's own requests in flight (``window.dealerFetching``: see :func:`settled`).
WATCH_NUMBERS = r"""
(() => {
  window.dealerFetching = 0;
  const fetched = window.fetch;
  // Done once the answer is read (a page reads every answer: util.api), a task later: what the page
  // draws from it, and any request that asks for next, come first.
  const done = () => setTimeout(() => { window.dealerFetching -= 1; }, 0);
  window.fetch = (...args) => {
    window.dealerFetching += 1;
    return fetched(...args).then((response) => {
      if (response.status === 204) { done(); return response; }  // nothing to read
      for (const read of ["json", "text", "blob", "arrayBuffer"]) {
        const original = response[read].bind(response);
        response[read] = () => original().finally(done);
      }
      return response;
    }, (error) => { done(); throw error; });
  };
  const BAD = /(?<![\w.\-–])[-−]\s?\d|\bNaN\b|Infinity|undefined/;
  let last = "";
  const look = () => {
    const text = document.body ? document.body.innerText : "";
    const found = text.match(BAD);
    if (found) window.dealerSeen("bad", text.slice(Math.max(0, found.index - 60), found.index + 40));
    const shown = [".upload-progress:not([hidden]) .progress-text", "#job-progress [data-f=pct]"]
      .map((selector) => document.querySelector(selector)).filter(Boolean).map((el) => el.innerText).join(" | ");
    if (shown && shown !== last) { last = shown; window.dealerSeen("progress", shown); }
  };
  new MutationObserver(look).observe(document, { subtree: true, childList: true, characterData: true });
})();
"""


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveService]:
    # These tests watch jobs while they run: on the pure-Python engines a job of tens of thousands of
    # decks lasts seconds, long enough to be caught at each stage and held there, where the native core
    # would finish it before it is seen. The big upload's worker is held still for longer than the
    # shipped stall_seconds: the recovery that would then send its chunks again (tests/faults test it)
    # would only double the work left.
    with live_service("embedded", tmp_path_factory.mktemp("browser-live"), DEALER_PURE_PYTHON="1",
                      DEALER_STALL_SECONDS="600") as service:
        yield service


@pytest.fixture(scope="module")
def big_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return random_judge_file(tmp_path_factory.mktemp("big") / "big-decks.in", "10-20-30", BIG_DECKS, 13)


def tab(browser: Any, live: LiveService, viewport: dict[str, int] = DESKTOP) -> Any:
    """A tab that fails the test on any script error (see the page fixture) and watches its numbers.

    It asks for reduced motion, as a user may: these tabs follow running jobs for a minute at a time, and
    the headless shell composes the pages' endless animations in software at 60 frames a second (what
    moves is what tests/web/test_pages.py allows, and no test here looks at motion). This module's
    Chromium took 21.3 and 21.8 CPU-seconds so, 32.1 and 33.0 without, runs taken in turn."""
    context = browser.new_context(base_url=live.url, viewport=viewport, reduced_motion="reduce")
    context.set_default_timeout(30_000)
    seen: dict[str, list[str]] = {"bad": [], "progress": []}
    context.expose_function("dealerSeen", lambda kind, text: seen[kind].append(text))
    context.add_init_script(WATCH_NUMBERS)
    page = context.new_page()
    page.seen = seen
    page.errors = []
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    page.on("console", lambda message: page.errors.append(message.text)
            if message.type == "error" and not message.text.startswith("Failed to load resource") else None)
    return page


def close(page: Any) -> None:
    errors = [e for e in page.errors if not any(allowed in e for allowed in getattr(page, "errors_allowed", ()))]
    page.context.close()
    assert not errors, f"the page reported errors: {errors}"


def no_nonsense(page: Any) -> None:
    bad = page.seen["bad"]
    assert not bad, f"a negative or not-a-number figure was shown: {bad[:3]}"


def seconds_left(text: str) -> float | None:
    """The time left in a job's progress text (``… · 1 min 5 s left``), in seconds."""
    found = re.search(r"(?:(\d+) min )?([\d.]+) s left", text)
    return None if found is None else int(found[1] or 0) * 60 + float(found[2])


@contextlib.contextmanager
def held(live: LiveService, job_id: int, when: Callable[[dict[str, Any]], bool],
         what: str) -> Iterator[dict[str, Any]]:
    """The service's worker held still (SIGSTOP, its processes too) as soon as the API's figures of the
    job meet ``when``, and let go after the block; yields the job as the API gives it then, which stays
    so while held (but for its rate, which ages, and ``stalled``)."""
    worker = live.workers[0]

    def look() -> tuple[dict[str, Any], bool]:
        """The job, and whether the worker is held with it as wanted (it may move on between two looks)."""
        job = live.client.job(job_id)
        if when(job):
            os.killpg(worker.pid, signal.SIGSTOP)
            job = live.client.job(job_id)
            if when(job):
                return job, True
            os.killpg(worker.pid, signal.SIGCONT)
        return job, False

    job, stopped = until(look, lambda seen: seen[1] or seen[0]["status"] in FINISHED, what, timeout=180, every=0.02)
    assert stopped, f"never saw {what}: {job}"
    try:
        yield job
    finally:
        os.killpg(worker.pid, signal.SIGCONT)


def busy_on(live: LiveService, job_id: int) -> bool:
    """Whether the workers view (the API's) has a process solving a chunk of the job."""
    return any(process["job_id"] == job_id for worker in live.get("/api/workers")["workers"]
               for process in worker["busy"])


def settled(page: Any) -> None:
    """Wait until the page has loaded and drawn what its requests brought (none is in flight)."""
    page.wait_for_load_state("load")
    page.wait_for_function("() => window.dealerFetching === 0")


def axe_problems(page: Any) -> list[str]:
    """The serious and critical accessibility violations axe-core finds on the page."""
    if not page.evaluate("!!window.axe"):
        page.add_script_tag(url=AXE)
    return page.evaluate("""async () => {
        const result = await axe.run(document, { resultTypes: ["violations"] });
        return result.violations.filter((v) => ["serious", "critical"].includes(v.impact))
          .map((v) => `${v.id} (${v.impact}): ${v.help}: ${v.nodes.slice(0, 3).map((n) => n.target.join(" ")).join(", ")}`);
    }""")


def test_a_big_upload_is_watched_through_its_life_read_solved_stalled_and_done(
        browser: Any, live: LiveService, big_file: Path) -> None:
    """The upload's progress, the split's (bytes read), the time left while it solves, "stalled" when
    nothing moves, and the end, each checked against the API's own figures at that moment: the
    worker is held still (SIGSTOP) at each point looked at, so that nothing depends on how fast the
    machine is (the time left's arithmetic is tests/pipeline/test_time_left.py's)."""
    dashboard = tab(browser, live)
    dashboard.goto("/")
    workers = tab(browser, live)
    workers.goto("/workers")
    upload = tab(browser, live)
    asked: list[str] = []
    upload.on("request", lambda request: asked.append(request.url))
    upload.goto("/upload")
    # Slow the upload down to about 2.5 s, so that its progress shows as it would over a network.
    cdp = upload.context.new_cdp_session(upload)
    cdp.send("Network.enable")
    cdp.send("Network.emulateNetworkConditions", {"offline": False, "latency": 0, "downloadThroughput": -1,
                                                   "uploadThroughput": big_file.stat().st_size / 2.5})
    upload.set_input_files("#file", str(big_file))
    # The worker held still while the file arrives, so that the job is split and solved once it has come:
    # the stages below are looked at one after the other (a split follows a file as it arrives too, which
    # tests/web/test_arriving.py tests).
    with held_still(live), upload.expect_response(
            lambda r: r.url.endswith("/api/jobs") and r.request.method == "POST", timeout=120_000) as answer:
        upload.click("#upload-button")
    job_id = int(answer.value.json()["id"])
    JOBS["big"] = job_id
    sent = [text for text in upload.seen["progress"] if " of " in text]
    whole = f"{big_file.stat().st_size / 2**20:.1f} MiB"
    assert any(re.search(rf"[\d.]+ MiB of {whole} · [\d.]+ (MiB|KiB)/s", text) for text in sent), sent

    # While the file is read and no case is answered yet, the upload page's one bar says how much of it is
    # read (a share of its bytes); once a case is answered it opens the job page (upload.js, whenRead). Held
    # as the split starts, the job may or may not have an answer yet, depending on the machine: the page
    # must then show the one or the other, the API's figures at that moment.
    with held(live, job_id, lambda job: job["status"] == "splitting" and job["bytes_read"] > 0,
              "the file being read") as job:
        if job["done"] + job["failed_cases"] == 0:
            read = math.floor(job["bytes_read"] / job["size"] * 100)  # as the pages round it
            until(lambda: upload.inner_text("#upload-progress .pct"), lambda shown: shown == f"{read}% read",
                  f"the page to show the API's {read}% read")
        else:
            upload.wait_for_url(f"**/jobs/{job_id}", timeout=60_000)
    # The dashboard's bar of the job is one measure, its figure and its value the share of the cases answered
    # (of those the file is expected to hold); the share of the file read is named as such in its one
    # sentence, which says "read" once.
    with held(live, job_id, lambda job: job["status"] == "splitting" and job["bytes_read"] > 0 and job["done"] > 0,
              "the file being read, a case answered") as job:
        read = math.floor(job["bytes_read"] / job["size"] * 100)
        row = dashboard.locator(f'tr[data-job="{job_id}"] [data-f=progress]')
        handled = job["done"] + job["failed_cases"]
        figures = f"{handled:,} / about {job['expected']:,} · file {read}% read"
        words = until(lambda: row.locator("[data-f=progress-text]").inner_text(),
                      lambda shown: shown.startswith(figures), f"the dashboard to show the API's {figures!r}")
        assert words.count("read") == 1, words
        share = math.floor(job["progress"] * 100)
        assert row.locator("[data-f=pct]").inner_text() == f"{share}%"
        assert float(row.locator("[data-f=bar]").get_attribute("aria-valuenow")) == math.floor(job["progress"] * 1000) / 10
    upload.wait_for_url(f"**/jobs/{job_id}", timeout=120_000)
    page = upload  # the job page now, in the same tab

    # While it solves, the figures are the API's; with nothing stored, the rate stays the one the last chunk
    # gave and the time left counts down from the work left over it (never climbing: see
    # tests/pipeline/test_time_left.py); then, with nothing stored for a while, it says "stalled" and guesses
    # no time left; the workers view shows the process that holds a chunk, and its heartbeat ageing.
    # Held while the API still expects a few seconds of work: the page counts down from there, and two
    # different times left can show before the count reaches nothing.
    with held(live, job_id, lambda job: job["status"] == "solving" and (job["eta_seconds"] or 0) >= 3
              and busy_on(live, job_id), "the job solving with seconds to go, a process on it") as job:
        handled = f"{job['done'] + job['failed_cases']:,} / {job['total']:,} · {math.floor(job['rate'] + 0.5):,} cases/s · "
        lefts: list[float] = []

        def time_left() -> list[float]:
            text = page.inner_text("#job-progress [data-f=progress-text]")
            figures = re.fullmatch(r"([\d,]+) / ([\d,]+) · [\d,]+ cases/s · (.+) left", text)
            if text.startswith(handled) and figures and (left := seconds_left(figures[3] + " left")) is not None:
                if not lefts or lefts[-1] != left:
                    lefts.append(left)
            return lefts

        until(time_left, lambda seen: len(seen) >= 2, f"the page to show the API's {handled!r} and a time left "
              "that moves")
        assert lefts == sorted(lefts, reverse=True), f"the time left climbed while nothing was stored: {lefts}"
        # The page shows the time left to the second (past a minute).
        assert lefts[0] <= (job["total"] - job["done"] - job["failed_cases"]) / job["rate"] + 1, (lefts, job)
        workers.wait_for_selector(f'[data-f=busy] a[href="/jobs/{job_id}"]', timeout=30_000)
        card = workers.locator(".worker").first
        assert int(card.locator("[data-f=concurrency]").inner_text()) == 2
        assert re.fullmatch(r"[\d.]+ s ago|stopped", card.locator("[data-f=age]").inner_text())
        text = until(lambda: page.inner_text("#job-progress [data-f=progress-text]"),
                     lambda shown: "stalled" in shown, "the page to say the job stalled",
                     timeout=STALLED_AFTER.total_seconds() + 60)
        assert "left" not in text and live.client.job(job_id)["stalled"], text
        until(lambda: (card.locator("[data-f=age]").inner_text(),
                       card.locator("[data-f=alive]").inner_text()),
              lambda seen: seen[1].lower() == "gone" or re.match(r"(\d+(\.\d+)?) s ago", seen[0])
              and float(seen[0].split()[0]) >= 8,
              "the workers view to show the heartbeat ageing")

    page.wait_for_selector("#job[data-status=succeeded]", timeout=180_000)
    dashboard.wait_for_selector(f'tr[data-job="{job_id}"][data-status=succeeded]', timeout=30_000)
    no_nonsense(page)
    no_nonsense(dashboard)
    no_nonsense(workers)
    # The job page followed its event stream, and did not poll.
    assert any(f"/events/jobs/{job_id}" in url for url in asked), "the job page opened no event stream"
    assert not [url for url in asked if url.endswith(f"/api/jobs/{job_id}/timings")], "the job page polled"
    chart = page.locator("#chart-throughput svg")
    assert "peak" in chart.get_attribute("aria-label") and page.locator("#chart-throughput polyline").count() == 1
    workers.wait_for_function("() => document.querySelector('[data-w=minute]').textContent !== '0'")
    assert workers.locator("#chart-total polyline").count() == 1 and workers.locator(".worker polyline").count() == 1
    assert "peak" in workers.locator("#chart-total svg").get_attribute("aria-label")
    close(dashboard)
    close(workers)
    close(page)


def test_when_no_stream_is_to_be_had_the_pages_poll(browser: Any, live: LiveService) -> None:
    host, port = live.url.removeprefix("http://").split(":")
    page = tab(browser, live)
    page.errors_allowed = ("EventSource",)
    page.goto("/history")  # a page with no stream: the browser's cookie, if it is given one, is known now
    cookie = "; ".join(f"{c['name']}={c['value']}" for c in page.context.cookies())
    held: list[socket.socket] = []

    def hold_a_stream() -> bool:
        """One more stream of this browser's client (its address and login): its share taken, one at a time."""
        connection = socket.create_connection((host, int(port)))
        connection.sendall(f"GET /events/dashboard HTTP/1.1\r\nHost: x\r\nCookie: {cookie}\r\n\r\n".encode())
        if connection.recv(64).startswith(b"HTTP/1.1 200"):  # the stream's headers: it is counted now
            held.append(connection)
            return True
        connection.close()  # refused: a stream of an earlier test's page still counts, for a while at most
        return False

    try:
        for _ in range(live.settings.live_streams_per_client):
            until(hold_a_stream, bool, "a stream of the client's share", timeout=live_streams.STREAM_SECONDS + 60,
                  every=0.2)
        polled: list[str] = []
        page.on("request", lambda request: polled.append(request.url) if "/api/jobs?" in request.url else None)
        page.goto("/")
        job_id = live.submit(JUDGE_DATA / "mahjong" / "sample.in", "mahjong")["id"]
        # The job may wait behind others on a busy machine: the page has until the API says it ended, and a
        # few of its polls after that.
        live.wait(job_id)
        page.wait_for_selector(f'tr[data-job="{job_id}"][data-status=succeeded]', timeout=60_000)
        assert polled, "the dashboard neither streamed nor polled"
    finally:
        for connection in held:
            connection.close()
    close(page)


def test_dashboard_filters_stay_in_the_url_and_act_on_the_selected_jobs(browser: Any, live: LiveService,
                                                                        tmp_path: Path) -> None:
    sample = (JUDGE_DATA / "10-20-30" / "sample.in").read_bytes()
    for name in ("pick-one.in", "pick-two.in"):
        (tmp_path / name).write_bytes(sample)
        live.wait(live.submit(tmp_path / name, "10-20-30")["id"])
    page = tab(browser, live)
    page.on("dialog", lambda dialog: dialog.accept())
    page.goto("/")
    page.select_option("#jf-status", "succeeded")
    page.wait_for_url(re.compile(r"status=succeeded"))
    page.fill("#jf-filename", "pick-")
    page.press("#jf-filename", "Enter")
    page.wait_for_url(re.compile(r"status=succeeded.*filename=pick-|filename=pick-.*status=succeeded"))
    rows = page.locator("tr[data-job]")
    assert rows.count() == 2 and page.input_value("#jf-filename") == "pick-"
    page.reload()  # the URL alone brings the filters back
    assert page.input_value("#jf-status") == "succeeded" and rows.count() == 2
    # From the keyboard: select every job on the page, then rerun them.
    page.focus("#pick-all")
    page.keyboard.press("Space")
    assert page.inner_text("#bulk-count") == "2 jobs selected"
    page.focus("[data-bulk=rerun]")
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.querySelector('#bulk-status').textContent.startsWith('Rerun 2 of 2')")
    page.wait_for_function("() => document.querySelectorAll('tr[data-job][data-status=succeeded]').length === 4",
                           timeout=30_000)
    page.click("#pick-all")
    page.click("[data-bulk=delete]")
    page.wait_for_function("() => document.querySelector('#bulk-status').textContent.startsWith('Deleted 4 of 4')")
    page.wait_for_selector("#jobs-empty:not([hidden])")
    assert "No job matches these filters" in page.inner_text("#jobs-empty")
    # Cancel a running job from the list.
    path = random_judge_file(tmp_path / "to-cancel.in", "10-20-30", 100_000, 19)
    job_id = live.submit(path, "10-20-30")["id"]
    page.goto("/?filename=to-cancel")
    page.check(f'tr[data-job="{job_id}"] [data-f=pick]')
    page.click("[data-bulk=cancel]")
    page.wait_for_selector(f'tr[data-job="{job_id}"][data-status=cancelled]', timeout=20_000)
    no_nonsense(page)
    close(page)


def test_a_long_error_is_cut_in_the_list_and_shown_whole_on_demand(browser: Any, live: LiveService,
                                                                  tmp_path: Path) -> None:
    bad = tmp_path / "a-file-whose-error-is-long.in"
    data, line = failing("mahjong")  # a bad line past the file's start: a failed job (a bad start is refused)
    bad.write_bytes(data)
    job = live.wait(live.submit(bad, "mahjong")["id"])
    assert job["status"] == "failed" and job["error"].startswith(f'line {line}, column 1: unknown tile "X" (tiles are')
    JOBS["failed"] = job["id"]
    page = tab(browser, live)
    page.goto("/")
    row = page.locator(f'tr[data-job="{job["id"]}"]')
    created = row.locator(".col-time").bounding_box()
    assert created["x"] + created["width"] <= 1280 - 24, "the Created column is cut off"
    text = row.locator("[data-f=progress-text]")
    assert text.get_attribute("title") == job["error"]
    line = row.locator(".progress-text")
    assert line.evaluate("el => el.scrollWidth > el.clientWidth"), "the error is not cut"
    one_line = line.bounding_box()["height"]
    row.locator("[data-f=more]").focus()
    page.keyboard.press("Enter")
    assert row.locator("[data-f=more]").get_attribute("aria-expanded") == "true"
    assert line.bounding_box()["height"] > 2 * one_line
    close(page)


#: Faults the polling tab's job is given where the API lists none of its own (a service that names only the
#: first fault in ``error``): the page must draw whatever the job view carries.
GIVEN_FAULTS = [{"line": 4, "column": 9, "message": 'line 4, column 9: "X" is not a card value (1-10)',
                 "context": [{"line": 3, "text": "1 2 3 4"}, {"line": 4, "text": "5 6 7 8 X 9"}]}]


def with_faults(page: Any, job_id: int) -> None:
    """Have ``page`` poll (its event stream refused) and see the job with faults once it has failed, as
    :data:`GIVEN_FAULTS` unless the API gives its own."""
    page.route("**/events/jobs/*", lambda route: route.fulfill(status=429, content_type="application/json",
                                                                body='{"error": "poll"}'))

    def answer(route: Any) -> None:
        response = route.fetch()
        job = response.json()
        if job["status"] == "failed" and not job.get("faults"):
            job |= {"faults": GIVEN_FAULTS, "fault_count": 6, "partial_output": f"/api/jobs/{job_id}/output?partial=1"}
        route.fulfill(response=response, json=job)

    page.route(f"**/api/jobs/{job_id}", answer)


def test_a_job_that_fails_while_watched_shows_its_failure_and_nothing_from_before(
        browser: Any, live: LiveService, tmp_path: Path) -> None:
    """Its bad line is the file's last: the split sends the cases it has read on to be solved as it reads, so
    the page shows a slowest case, work waiting and a form for an output to check before the split meets it
    (the file's end held back until then: sent at once, it may be read whole before a page could look)."""
    # Of another seed than the big file: one that starts as a job solved before is made a job once whole.
    lines = random_judge_file(tmp_path / "decks.in", "10-20-30", BIG_DECKS, 14).read_bytes().splitlines(keepends=True)
    bad = tmp_path / "fails-late.in"
    bad.write_bytes(b"".join(lines[:-1]) + b"X\n" + lines[-1])
    pages = []
    with arriving(live, bad, "10-20-30") as job_id, \
            held(live, job_id, lambda job: job["status"] == "splitting" and job["done"] > 0, "cases solved while read"):
        streamed, polled = tab(browser, live), tab(browser, live)
        with_faults(polled, job_id)
        for page in (streamed, polled):
            page.goto(f"/jobs/{job_id}")
            page.locator("[data-t=slowest] a").wait_for()
            page.wait_for_function("() => / waiting/.test(document.querySelector('#service-pill').textContent)")
            assert page.locator("#check-form").is_visible() and page.locator("#checks-closed").is_hidden()
            pages.append(page)
    job = live.wait(job_id)
    assert job["status"] == "failed" and f"line {len(lines)}, column 1" in job["error"], job
    for page in pages:
        page.locator("#job-error").wait_for()
        settled(page)
        # No reload: the page it was.
        assert page.evaluate("performance.getEntriesByType('navigation').length") == 1
        assert page.inner_text("#job-error [data-f=error]") == job["error"]
        timings = live.get(f"/api/jobs/{job_id}/timings")
        slowest = page.locator("[data-t=slowest]")
        if timings["slowest_case"] is None:
            assert slowest.inner_text() == "–"
        else:  # cases kept: the slowest of them, one that is there
            href = slowest.locator("a").get_attribute("href")
            assert href == f"/jobs/{job_id}/cases/{timings['slowest_case']['index']}"
            assert page.request.get(href).ok
        waiting = live.get("/api/overview")["queued_cases"]
        pill = page.inner_text("#service-pill")
        assert (f"{waiting:,} waiting" in pill) if waiting else ("waiting" not in pill), pill
        assert page.locator("#check-form").is_hidden() and page.locator("#checks-closed").is_visible()
        assert page.locator("#download-output").is_hidden()
        for empty in ("#results-table", "#chart-distribution", "#chart-throughput"):
            text = page.inner_text(empty)
            assert "yet" not in text, (empty, text)
        if page.locator("#results-table tbody tr[data-case]").count() == 0:
            assert page.inner_text("#results-table tbody") == "No case was solved before the job failed."
    # Its faults, each with its lines, how many more, and the partial output: as the job view gives them.
    given = polled.request.get(f"/api/jobs/{job_id}").json().get("faults") or GIVEN_FAULTS
    first = polled.locator("#job-faults .fault").first
    assert first.locator(".fault-where").inner_text() == given[0]["message"]
    assert first.locator(".snippet .caret").count() == (1 if given[0]["column"] else 0)
    if given is GIVEN_FAULTS:
        assert first.locator(".snippet mark.bad").inner_text() == "X"
        assert polled.inner_text("#job-faults-more") == "and 5 more faults"
        assert polled.locator("#partial-output a").get_attribute("href") == f"/api/jobs/{job_id}/output?partial=1"
    # The dashboard offers the whole error only where its line cuts it, at either width: this one's, and (to
    # the polling tab) a short one.
    short = "a short error"

    def shortened(route: Any) -> None:
        response = route.fetch()
        listing = response.json()
        for item in listing["items"]:
            if item["id"] == job_id:
                item["error"] = short
        route.fulfill(response=response, json=listing)

    polled.route("**/events/dashboard*", lambda route: route.fulfill(status=429, content_type="application/json",
                                                                      body='{"error": "poll"}'))
    polled.route("**/api/jobs?*", shortened)
    for size in (DESKTOP, PHONE):
        for page in pages:
            page.set_viewport_size(size)
            page.goto("/")
            row = page.locator(f'tr[data-job="{job_id}"]')
            if page is polled:
                page.wait_for_function("(row) => row.querySelector('[data-f=progress-text]').textContent === "
                                       f"'{short}'", arg=row.element_handle())
            settled(page)
            cut = row.locator(".progress-text").evaluate("el => el.scrollWidth > el.clientWidth")
            assert cut == (page is streamed), (size, row.inner_text())
            assert row.locator("[data-f=more]").is_visible() == cut, (size, cut)
    for page in pages:
        no_nonsense(page)
        close(page)


def test_history_is_newest_first_compact_and_fits(browser: Any, live: LiveService) -> None:
    page = tab(browser, live)
    page.goto("/history")
    first = page.locator("#results-table tbody tr[data-case]").first
    first.wait_for()
    newest = max(j["id"] for j in live.get("/api/jobs?per_page=100")["items"] if j["done"])
    assert first.locator("td.col-job_id").inner_text() == f"#{newest}"
    solved = first.locator("td.col-solved_at time")
    assert len(solved.inner_text()) <= 12 and solved.evaluate("el => el.getClientRects().length") == 1
    scroller = page.locator(".table-scroll")
    assert scroller.evaluate("el => el.scrollWidth <= el.clientWidth"), "the history table is clipped at 1280 px"
    close(page)


def test_on_a_phone_results_are_cards_with_the_judge_output_and_outcome(browser: Any, live: LiveService) -> None:
    job = live.wait(live.submit(JUDGE_DATA / "mahjong" / "sample.in", "mahjong")["id"])
    page = tab(browser, live, PHONE)
    for url in (f"/jobs/{job['id']}", f"/history?game=mahjong&job_id={job['id']}"):
        page.goto(url)
        page.locator("#results-table tbody tr[data-case]").first.wait_for()
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"], f"{url} scrolls sideways"
        for cell in ("td.col-line", "td.col-outcome"):
            box = page.locator(f"#results-table tbody tr[data-case] {cell}").first.bounding_box()
            assert box and box["width"] > 0 and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], (url, cell)
        badges = page.locator("#results-table .badge.outcome").all_inner_texts()
        assert "Not ready" in badges and not any("-" in text for text in badges), badges
    close(page)


def test_a_dropped_file_is_sent_by_the_upload_button(browser: Any, live: LiveService) -> None:
    page = tab(browser, live)
    page.goto("/upload")
    page.evaluate("""(text) => {
        const transfer = new DataTransfer();
        transfer.items.add(new File([text], "dropped.in", { type: "text/plain" }));
        const zone = document.querySelector("#dropzone");
        for (const type of ["dragenter", "dragover", "drop"]) {
            zone.dispatchEvent(new DragEvent(type, { dataTransfer: transfer, bubbles: true, cancelable: true }));
        }
    }""", (JUDGE_DATA / "accordion" / "sample.in").read_text())
    assert page.inner_text("#chosen").startswith("dropped.in")
    assert page.evaluate("document.querySelector('#file').files.length") == 1
    page.click("#upload-button")
    page.wait_for_url(re.compile(r"/jobs/\d+$"), timeout=30_000)
    assert page.locator(".job-title .fname").inner_text() == "dropped.in"
    close(page)


def test_a_bad_file_names_its_line_the_closest_game_and_speaks_english(browser: Any, live: LiveService,
                                                                      tmp_path: Path) -> None:
    page = tab(browser, live)
    unknown = tmp_path / "unknown.in"
    unknown.write_text("1 2 3 4 5 6 7 8 9 10 J\n")
    page.goto("/upload")
    page.set_input_files("#file", str(unknown))
    page.click("#upload-button")
    page.wait_for_selector("#upload-error:not([hidden])")
    message = page.inner_text("#upload-error-text")
    assert "read as a 10-20-30 file (the closest), line 1, column 22" in message, message
    assert page.locator("#upload-snippet .caret").count() == 1
    page.goto("/upload")
    page.set_input_files("#file", str(JUDGE_DATA / "accordion" / "sample.in"))
    page.select_option("#game", "10-20-30")
    page.click("#upload-button")
    page.wait_for_selector("#upload-error:not([hidden])", timeout=30_000)
    assert "(this looks like an accordion file, not a 10-20-30 file)" in page.inner_text("#upload-error-text")
    close(page)


def test_a_failed_upload_ends_on_one_kind_of_page(browser: Any, live: LiveService, tmp_path: Path) -> None:
    """A refusal as the file arrives stays on the upload page (the previous test); a job made and failed later
    is shown on its job page, with its failure."""
    data, line = failing("accordion")
    bad = tmp_path / "fails-after-its-start.in"
    bad.write_bytes(data)
    page = tab(browser, live)
    page.goto("/upload")
    page.set_input_files("#file", str(bad))
    page.click("#upload-button")
    page.wait_for_url(re.compile(r"/jobs/\d+$"), timeout=60_000)
    page.locator("#job-error").wait_for()
    assert page.inner_text("#job-error [data-f=error]").startswith(f"line {line}, column 1: ")
    close(page)


def _pages(live: LiveService) -> dict[str, str]:
    if "big" not in JOBS:  # this test run alone
        JOBS["big"] = live.wait(live.submit(JUDGE_DATA / "10-20-30" / "random-2000.in", "10-20-30")["id"])["id"]
    big = JOBS["big"]
    # /docs, at both widths, is tests/browser/test_api_reference.py's (Swagger UI's load alone costs more than
    # any other page's load, axe and shot together).
    return {"dashboard": "/", "upload": "/upload", "job": f"/jobs/{big}", "failed-job": f"/jobs/{JOBS.get('failed', big)}",
            "case": f"/jobs/{big}/cases/1", "history": "/history", "workers": "/workers", "error": "/jobs/999999"}


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1280", "390"])
def test_every_page_passes_axe_and_is_shot(browser: Any, live: LiveService, viewport: dict[str, int]) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page = tab(browser, live, viewport)
    problems = {}
    for name, url in _pages(live).items():
        page.goto(url)
        settled(page)  # the charts and tables are drawn from their first answers
        found = axe_problems(page)
        if found:
            problems[name] = found
        assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"], f"{name} scrolls sideways"
        page.evaluate("window.scrollTo(0, 0)")
        page.screenshot(path=str(SCREENSHOTS / f"{name}-{viewport['width']}.png"), full_page=True)
    no_nonsense(page)
    close(page)
    if problems:
        pytest.fail("accessibility problems:\n" + "\n".join(f"{name}: {p}" for name, found in problems.items()
                                                           for p in found))
