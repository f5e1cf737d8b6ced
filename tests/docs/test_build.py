"""The guide builds strictly (every link and anchor holds), loads nothing from another site, and says
what the code says: the command-line page is the commands' own help, figures come from the files the
benchmarks write, and the README stays a front page."""

from __future__ import annotations

import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.docs.hooks import hook
from tests.support.paths import ROOT


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    built = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
                           cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stdout + built.stderr
    return out


class _Loads(HTMLParser):
    """What a page makes the browser fetch: scripts, styles, icons, images, frames."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        given = dict(attrs)
        if tag in ("script", "img", "iframe", "source", "video", "audio") and given.get("src"):
            self.found.append(given["src"] or "")
        if tag == "link" and given.get("href") and (given.get("rel") or "") != "canonical":
            self.found.append(given["href"] or "")


@pytest.mark.slow
def test_the_guide_builds_strictly(site: Path) -> None:
    pages = {path.relative_to(site).as_posix() for path in site.rglob("index.html")}
    for page in ("index.html", "cli/index.html", "production/index.html", "security/index.html",
                 "performance/index.html", "api/index.html", "internals/architecture/index.html"):
        assert page in pages


@pytest.mark.slow
def test_no_page_loads_anything_from_another_site(site: Path) -> None:
    for page in site.rglob("*.html"):
        parser = _Loads()
        parser.feed(page.read_text())
        remote = [url for url in parser.found if urlsplit(url).netloc]
        assert remote == [], f"{page.relative_to(site)} loads {remote}"
        assert "fonts.googleapis" not in page.read_text()


def test_the_command_line_page_is_every_commands_help(site: Path) -> None:
    from worker.cli import main

    cli = hook("cli")
    page = (site / "cli" / "index.html").read_text()
    found = list(cli.commands(main))[1:]
    assert len(found) >= 12
    for path, command, context in found:
        assert f'id="{cli._anchor(path)}"' in page, path
        usage = command.get_usage(context)
        assert usage.replace("<", "&lt;").replace(">", "&gt;") in page, path


def test_the_settings_table_is_every_setting(site: Path) -> None:
    from dataclasses import fields

    from worker.config import Settings

    page = (site / "production" / "index.html").read_text()
    for item in fields(Settings):
        assert f"<code>DEALER_{item.name.upper()}</code>" in page


def test_the_api_page_lists_every_operation(site: Path) -> None:
    from webui.openapi import document

    page = (site / "api" / "index.html").read_text()
    for path, item in document()["paths"].items():
        for method in item.keys() & {"get", "post", "patch", "delete"}:
            assert f"<code>{method.upper()} {path}</code>" in page


def test_a_figure_is_the_file_its_benchmark_wrote_or_says_how_to_make_it(tmp_path: Path) -> None:
    figures = hook("figures")
    page = "before\n<!-- figure engines: make bench -->\nafter"
    missing = figures.included(page, tmp_path)
    assert "Not measured in this checkout" in missing and "`make bench`" in missing
    assert "docs/figures/engines.md" in missing
    (tmp_path / "engines.md").write_text("- **Command**: `python -m bench.engines`\n")
    assert figures.included(page, tmp_path) == "before\n- **Command**: `python -m bench.engines`\n\nafter"


def test_every_figure_the_pages_ask_for_is_written_by_a_benchmark() -> None:
    figures = hook("figures")
    asked = {match["name"] for page in (ROOT / "docs").rglob("*.md") for match in
             figures.MARKER.finditer(page.read_text())}
    recorded = {match for bench in (ROOT / "bench").glob("*.py")
                for match in re.findall(r'figures\.record\("([a-z0-9_]+)"', bench.read_text())}
    # bench/slow_clients.py writes its own (issue 32's branch): the page asks for it all the same.
    assert asked - recorded <= {"slow_clients"}
    assert recorded <= asked, "a benchmark writes a figure that no page shows"


def test_the_readme_is_a_front_page() -> None:
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 250
    assert not re.search(r"\b20\d\d-\d\d-\d\d\b", readme), "dated lines belong in CHANGELOG.md"
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", readme):
        if not urlsplit(target).scheme:
            assert (ROOT / target).exists(), f"README.md links to {target}, which does not exist"
