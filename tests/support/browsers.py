"""Where the browser tests find Chromium, and a word in pytest's header and summary on whether they run.

``make test`` runs them when Chromium is found: ``DEALER_CHROMIUM`` names it, else the first of
:data:`NAMES` on the PATH: Chromium's headless shell first (Debian's ``chromium-headless-shell``, the
build Playwright itself runs headless), which took a third less CPU over tests/browser than the whole
browser in its headless mode (177 CPU-seconds against 258, one process, its threads sampled in /proc),
then the whole browser. Without one they are skipped (failed where ``DEALER_REQUIRE_SERVICES`` is set),
and the run says so at its start and its end, with how to enable them.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

#: What the header and the summary say when the browser tests cannot run.
HOW_TO_ENABLE = ("install Chromium (apt-get install chromium-headless-shell, or chromium) or set "
                 "DEALER_CHROMIUM=/path/to/chromium")
#: The programs looked for on the PATH, the lightest first.
NAMES = ("chromium-headless-shell", "chromium", "chromium-browser", "google-chrome")


def chromium() -> Path | None:
    """The Chromium the browser tests drive, or ``None`` when there is none."""
    named = os.environ.get("DEALER_CHROMIUM")
    if named:
        return Path(named) if Path(named).is_file() else None
    found = next((shutil.which(name) for name in NAMES if shutil.which(name)), None)
    return Path(found) if found else None


def missing_reason() -> str:
    named = os.environ.get("DEALER_CHROMIUM")
    if named:
        return f"DEALER_CHROMIUM={named} is not a file"
    return "no Chromium on the PATH (" + ", ".join(NAMES) + ")"


def pytest_report_header(config: Any) -> str:
    found = chromium()
    if found is not None:
        return f"browser tests: Chromium at {found}"
    return f"browser tests: SKIPPED, {missing_reason()}; to run them, {HOW_TO_ENABLE}"


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: Any) -> None:
    skipped = [report for report in terminalreporter.stats.get("skipped", [])
               if "browser" in getattr(report, "keywords", {})]
    if skipped and chromium() is None:
        terminalreporter.write_sep("=", "browser tests skipped", yellow=True)
        terminalreporter.write_line(f"{len(skipped)} browser test(s) skipped: {missing_reason()}.")
        terminalreporter.write_line(f"To run them, {HOW_TO_ENABLE}.")
