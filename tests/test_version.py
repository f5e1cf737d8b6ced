"""The version is set in one place (``pyproject.toml``): the command says it, and the changelog's newest
release is it."""

from __future__ import annotations

import re
import tomllib

from click.testing import CliRunner

from tests.support.paths import ROOT
from worker.cli import main


def test_the_command_and_the_changelog_say_the_version_pyproject_sets() -> None:
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert re.fullmatch(r"\d+\.\d+\.\d+", version), "a semantic version"
    printed = CliRunner().invoke(main, ["--version"]).output
    assert printed.split()[-1] == version, f"dealer --version said {printed!r}: run make install"
    releases = re.findall(r"(?m)^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$", (ROOT / "CHANGELOG.md").read_text())
    assert releases and releases[0] == version
