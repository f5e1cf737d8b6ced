"""Word when work ends, in a real browser against a real web + worker: the job page's title says the
job's status and follows it live, and "Notify me" asks for the browser's permission on a click and
notifies once when the page sees the job end. The worker is held still (SIGSTOP) while the page opens,
so that the job is still queued then, whatever the machine's pace."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.paths import JUDGE_DATA
from worker.testing.waiting import until
from worker.testing.live import LiveService, held_still

pytestmark = [pytest.mark.browser, pytest.mark.slow]

INPUT = JUDGE_DATA / "10-20-30" / "random-2000.in"

#: The browser's Notification, recorded: permission asked for (and given), each notification made.
RECORDED_NOTIFICATIONS = """
window.__asked = 0;
window.__notes = [];
window.Notification = class {
  static permission = "default";
  static requestPermission() { window.__asked += 1; window.Notification.permission = "granted";
                               return Promise.resolve("granted"); }
  constructor(title, options) { window.__notes.push([title, options.body, options.tag]); }
};
"""


def test_the_job_page_title_follows_the_job_and_notify_me_notifies_once(page: Any, live: LiveService) -> None:
    from playwright.sync_api import expect

    page.add_init_script(RECORDED_NOTIFICATIONS)
    with held_still(live):
        job = live.client.submit(str(INPUT), "10-20-30")
        page.goto(f"/jobs/{job['id']}")
        assert page.title() == f"… queued 0% · job {job['id']} · Dealer"
        button = page.locator("#notify-me")
        assert button.is_visible() and button.get_attribute("aria-pressed") == "false"
        button.click()
        page.wait_for_selector("#notify-me[aria-pressed=true]")
        assert page.evaluate("window.__asked") == 1 and page.evaluate("window.__notes") == []
    # (The page's policy allows no script made from a string: Playwright's checks, not wait_for_function.)
    expect(page).to_have_title(f"✓ succeeded · job {job['id']} · Dealer", timeout=120_000)
    assert until(lambda: page.evaluate("window.__notes"), bool, "the notification") == [
        [f"Job {job['id']}: ✓ succeeded", "random-2000.in · 2,000 decks solved", f"dealer-job-{job['id']}"]]
    assert button.is_hidden()
