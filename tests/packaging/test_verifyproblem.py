"""Kattis' own ``verifyproblem`` on the packages ``dealer package`` writes, for each game: by default,
and with two recipes of the setter's. It must find no error in the config, the data, the validators
or the submissions: the accepted solution AC on every file, every wrong solution WA on one at least.

The tests install problemtools themselves (:mod:`.problemtools`); where it cannot be, they skip, and
fail under ``DEALER_REQUIRE_SERVICES`` (CI). The six packages are verified at once: verifyproblem
mostly waits on the programs it runs.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.packaging import problemtools
from tests.support.plugin import missing
from worker import engines
from worker.cli import main
from worker.packaging.mistakes import MISTAKES
from worker.packaging.package import SHORT_NAMES
from worker.packaging.programs import SLUGS

pytestmark = pytest.mark.slow

#: A setter's two recipes a game: a plain layout and a mix in a layout that reads harder.
RECIPES = {
    "10-20-30": ("--cases 10 --seed 5 --layout per-line=13,crlf",
                 "--cases 10 --seed 6 --mix win=1,draw=1 --layout ragged,no-terminator"),
    "accordion": ("--cases 10 --seed 5 --layout flow,no-final-newline",
                  "--cases 10 --seed 6 --mix 1=1,6+=1 --layout ragged"),
    "mahjong": ("--cases 30 --seed 5 --no-honours --layout crlf",
                "--cases 30 --seed 6 --mix 0=1,3+=1 --layout ragged"),
}
KINDS = ("default", "recipes")
CASES = [(game, kind) for game in engines.names() for kind in KINDS]


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], problemtools.Verdict]:
    try:
        problemtools.install()
    except problemtools.Unavailable as error:
        missing(f"problemtools: {error}")
    root = tmp_path_factory.mktemp("packages")
    packages = []
    for game, kind in CASES:
        folder = root / kind / SHORT_NAMES[game]
        arguments = [word for recipe in RECIPES[game] for word in ("--recipe", recipe)] if kind == "recipes" else []
        result = CliRunner().invoke(main, ["package", game, str(folder), *arguments])
        assert result.exit_code == 0, result.output
        packages.append(folder)
    return dict(zip(CASES, problemtools.verify(packages, root / "config"), strict=True))


@pytest.mark.parametrize(("game", "kind"), CASES)
def test_verifyproblem_finds_no_error(verdicts: dict[tuple[str, str], problemtools.Verdict], game: str,
                                      kind: str) -> None:
    verdict = verdicts[game, kind]
    assert verdict.errors == 0, verdict.output
    expected = {f"accepted/{SLUGS[game]}.py": "AC"}
    expected |= {f"wrong_answer/{mistake.name}.py": "WA" for mistake in MISTAKES[game]}
    assert verdict.results == expected, verdict.output


def test_verifyproblem_finds_no_error_in_the_statement(tmp_path: Path) -> None:
    absent = [tool for tool in problemtools.STATEMENT_TOOLS if shutil.which(tool) is None]
    if absent:
        missing(f"the statement part needs {', '.join(absent)}: {problemtools.STATEMENT_PACKAGES}")
    try:
        problemtools.install()
    except problemtools.Unavailable as error:
        missing(f"problemtools: {error}")
    packages = []
    for game in engines.names():
        packages.append(tmp_path / SHORT_NAMES[game])
        assert CliRunner().invoke(main, ["package", game, str(packages[-1])]).exit_code == 0
    for verdict in problemtools.verify(packages, tmp_path / "config", ("statement",)):
        assert verdict.errors == 0, verdict.output
