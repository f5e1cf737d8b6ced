"""MkDocs hook: the benchmarks' figures, included where a page asks for them.

A page writes ``<!-- figure NAME: COMMAND -->``; the build puts ``docs/figures/NAME.md`` there, the
file the benchmark wrote with its output and what produced it (``bench/figures.py``). Where no run
has written it yet in this checkout, the page says so and names the command that writes it, so that
a fresh clone's guide builds and no figure is ever typed by hand.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

MARKER = re.compile(r"<!-- figure (?P<name>[a-z0-9_]+): (?P<command>[^>]+?) -->")


def included(markdown: str, figures: Path) -> str:
    def figure(match: re.Match[str]) -> str:
        found = figures / f"{match['name']}.md"
        if found.is_file():
            return found.read_text()
        return (f"!!! note \"Not measured in this checkout\"\n    `{match['command']}` measures this "
                f"and writes `docs/figures/{match['name']}.md`, which this page then shows.\n")

    return MARKER.sub(figure, markdown)


def on_page_markdown(markdown: str, page: Any, config: Any, **_: Any) -> str:
    return included(markdown, Path(config["docs_dir"]) / "figures")
