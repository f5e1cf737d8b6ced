"""One source for settings: every ``DEALER_*`` variable the service reads is in the guide, and the guide
names none that nothing reads.

What the service reads: every field of ``worker.config.Settings`` (``Settings.from_env``), and every
variable read anywhere else in ``worker/`` and ``webui/`` (the command line's ``envvar=`` options, an
``os.environ`` look-up) or by ``docker-compose.yml``. The guide may also name what the tests, the
benchmarks and the compose test read (``tests/``, ``bench/``, ``docker/``). The changelog is history:
it may name what no longer exists.
"""

from __future__ import annotations

import functools
import re
from dataclasses import fields
from pathlib import Path

import pytest

from tests.docs.hooks import hook
from tests.support.paths import ROOT
from worker.config import Settings

NAME = r"(DEALER_[A-Z0-9_]+)"
#: How code reads a variable: an option's ``envvar``, ``os.environ``/``getenv``, a module's constant
#: naming one (``PURE_PYTHON = "DEALER_PURE_PYTHON"``), a shell or compose ``${…}``.
READS = [re.compile(pattern, re.MULTILINE) for pattern in (
    rf"envvar=[\"']{NAME}[\"']",
    rf"environ(?:\.get\(|\[)\s*[\"']{NAME}[\"']",
    rf"getenv\(\s*[\"']{NAME}[\"']",
    rf"^[A-Z_]+ = [\"']{NAME}[\"']$",
    rf"\$\{{?{NAME}",
)]


def read_in(paths: list[Path]) -> set[str]:
    found: set[str] = set()
    for path in paths:
        text = path.read_text(errors="replace")
        for pattern in READS:
            found.update(pattern.findall(text))
    return found


def files(*places: str) -> list[Path]:
    found: list[Path] = []
    for place in places:
        path = ROOT / place
        found += [p for p in path.rglob("*") if p.is_file() and p.suffix in ("", ".py", ".sh", ".yml")
                  and "__pycache__" not in p.parts] if path.is_dir() else [path]
    return found


@functools.cache
def service_reads() -> frozenset[str]:
    # Read once a run: the parametrized test below asks for each of the guide's names.
    return frozenset({f"DEALER_{item.name.upper()}" for item in fields(Settings)} | read_in(
        files("worker", "webui", "docker-compose.yml")))


@functools.cache
def harness_reads() -> frozenset[str]:
    return frozenset(read_in(files("tests", "bench", "docker")))


@functools.cache
def guide_names() -> frozenset[str]:
    pages = [p for p in (ROOT / "docs").rglob("*.md") if p.name != "changelog.md"]
    pages.append(ROOT / "ARCHITECTURE.md")
    text = "\n".join(p.read_text() for p in pages)
    text += hook("settings").table() + hook("cli").reference()
    return frozenset(re.findall(NAME, text))


def test_the_readers_are_found() -> None:
    read = service_reads()
    assert {"DEALER_URL", "DEALER_API_KEY", "DEALER_PURE_PYTHON", "DEALER_CHUNK_SECONDS",
            "DEALER_SOLVE_RUN_SECONDS", "DEALER_WEB_PORT"} <= read
    assert {"DEALER_CHROMIUM", "DEALER_REQUIRE_SERVICES"} <= harness_reads()


def test_every_setting_the_service_reads_is_in_the_guide() -> None:
    assert service_reads() - guide_names() == set()


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(guide_names()))
def test_the_guide_names_only_what_the_code_reads(name: str) -> None:
    assert name in service_reads() | harness_reads(), f"the guide names {name}, which nothing reads"


def test_every_setting_has_its_comment() -> None:
    table = hook("settings").table()
    for item in fields(Settings):
        row = next(line for line in table.splitlines() if line.startswith(f"| `DEALER_{item.name.upper()}`"))
        assert len(row.rsplit("|", 2)[1].strip()) > 10, row
