"""Without Chromium, a test run says at its start and at its end that the browser tests were skipped,
why, and how to run them (``tests/support/browsers.py``)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.support.browsers import HOW_TO_ENABLE
from tests.support.paths import ROOT


@pytest.mark.slow
def test_a_run_without_chromium_says_the_browser_tests_were_skipped_and_how_to_run_them() -> None:
    env = {**os.environ, "DEALER_CHROMIUM": "/nowhere/chromium"}
    env.pop("DEALER_REQUIRE_SERVICES", None)
    # One run shows both: its header, and its summary.
    run = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rN",
                          "tests/browser/test_ui_live.py::test_a_dropped_file_is_sent_by_the_upload_button"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stdout[-3000:]
    assert "browser tests: SKIPPED, DEALER_CHROMIUM=/nowhere/chromium is not a file; to run them, install" \
        in run.stdout, run.stdout[:2000]
    assert "1 skipped" in run.stdout
    assert "1 browser test(s) skipped: DEALER_CHROMIUM=/nowhere/chromium is not a file." in run.stdout
    assert f"To run them, {HOW_TO_ENABLE}." in run.stdout
