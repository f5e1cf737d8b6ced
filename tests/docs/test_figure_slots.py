"""No figure slot of the guide is empty: every ``<!-- figure NAME: COMMAND -->`` has the
``docs/figures/NAME.md`` its benchmark wrote, and that file says it was written by the slot's command
(read from the files; no benchmark runs here)."""

from __future__ import annotations

import re
import shlex

import pytest

from tests.docs.hooks import hook
from tests.support.paths import ROOT

FIGURES = ROOT / "docs" / "figures"
#: What wrote a figure: ``bench/figures.py``'s header, or the table ``bench/slow_clients.py`` writes.
WRITTEN_BY = re.compile(r"\A<!-- Written by `(?P<header>[^`]+)`|^\| command \| `(?P<table>[^`]+)` \|", re.M)


def slots() -> list[tuple[str, str, str]]:
    marker = hook("figures").MARKER
    return [(page.relative_to(ROOT).as_posix(), match["name"], match["command"])
            for page in sorted((ROOT / "docs").rglob("*.md")) if FIGURES not in page.parents
            for match in marker.finditer(page.read_text())]


def benchmark(command: str) -> list[str]:
    """A slot's command as the benchmark sees it: ``make TARGET`` is the Makefile's ``python -m bench…``
    line; ``--record`` only asks a benchmark to write its figure, so it is no part of what ran."""
    words = shlex.split(command)
    if words[:1] == ["make"]:
        recipe = re.search(rf"^{re.escape(words[1])}:.*\n\t\$\(BIN\)/(python -m bench\.\S+.*)$",
                           (ROOT / "Makefile").read_text(), re.M)
        assert recipe, f"the Makefile has no benchmark target {words[1]!r}"
        words = shlex.split(recipe[1])
    return [word for word in words if word != "--record"]


def test_every_slot_is_one_the_build_fills() -> None:
    # A slot the hook's pattern misses is left an HTML comment: the page shows nothing, not even a note.
    written = [(page.relative_to(ROOT).as_posix(), line) for page in sorted((ROOT / "docs").rglob("*.md"))
               for line in page.read_text().splitlines() if "<!-- figure " in line]
    assert [(page, line) for page, line in written if not hook("figures").MARKER.search(line)] == []
    assert len(slots()) == len(written) >= 10


@pytest.mark.parametrize(("page", "name", "command"), slots(), ids=lambda value: str(value))
def test_a_slot_has_the_figure_its_command_wrote(page: str, name: str, command: str) -> None:
    figure = FIGURES / f"{name}.md"
    assert figure.is_file(), f"{page} shows {figure.relative_to(ROOT)}, which `{command}` writes: run it"
    found = WRITTEN_BY.search(figure.read_text())
    assert found, f"{figure.relative_to(ROOT)} does not say what wrote it"
    ran = benchmark(found["header"] or found["table"])
    # A run may name more options than the slot (its sizes, say): the slot's come first, as written.
    assert ran[:len(benchmark(command))] == benchmark(command), (
        f"{page} asks `{command}` for {name}, but {figure.relative_to(ROOT)} was written by `{' '.join(ran)}`")


def test_every_figure_is_shown_by_a_page() -> None:
    shown = {name for _, name, _ in slots()}
    assert {path.stem for path in FIGURES.glob("*.md")} <= shown
