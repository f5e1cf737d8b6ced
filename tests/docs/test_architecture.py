"""ARCHITECTURE.md stays a map a reader can follow: every module of ``worker/`` and ``webui/`` is named
there, and no line runs on (a table cell of a paragraph is what it must not become again)."""

from __future__ import annotations

import re

from tests.support.paths import ROOT

MAP = ROOT / "ARCHITECTURE.md"
#: Folders whose modules are not the map's to list: migrations are numbered, and the packaged
#: programs are files a package ships, not modules of Dealer.
UNLISTED = {"migrations", "programs"}
LONGEST_LINE = 400


def _named() -> set[str]:
    text = re.sub(r"```.*?```", "", MAP.read_text(), flags=re.DOTALL)  # diagrams hold no names
    return {part for code in re.findall(r"`([^`\n]+)`", text) for part in re.split(r"[ ,/.]+", code)}


def test_every_module_is_on_the_map() -> None:
    named = _named()
    modules = [path for folder in ("worker", "webui") for path in (ROOT / folder).rglob("*.py")
               if path.name != "__init__.py" and not UNLISTED & set(path.parts)]
    assert modules
    assert [str(path.relative_to(ROOT)) for path in modules if path.stem not in named] == []


def test_no_line_runs_on() -> None:
    long = [(number, len(line)) for number, line in enumerate(MAP.read_text().splitlines(), 1)
            if len(line) > LONGEST_LINE]
    assert long == []
