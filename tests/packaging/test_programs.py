"""The programs a package ships, without problemtools: each imports nothing but Python's standard
library; the input validators accept every file ``dealer generate`` makes, in every layout, and every
file of the judge data, and refuse every file of the bad-input corpus that Dealer's readers refuse,
at the line and column the readers name; the accepted solutions give Dealer's answers; each wrong
solution differs from them on the ``--cover`` file."""

from __future__ import annotations

import ast
import io
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import ROOT, judge_files
from worker import engines
from worker.engines.reading import InputError
from worker.generating import generate, plan
from worker.generating.cover import cover_text
from worker.packaging import programs
from worker.packaging.mistakes import MISTAKES

GAMES = engines.names()
CORPUS = ROOT / "tests" / "badinput" / "corpus"
#: Layouts of every item a game takes, alone and together.
LAYOUTS = {
    "decks": ("per-line=1", "per-line=13", "per-line=52", "per-line=7,flow", "ragged", "crlf", "no-terminator",
              "no-final-newline", "ragged,crlf,no-terminator,no-final-newline", "per-line=5,flow,crlf,no-terminator"),
    "mahjong": ("sorted", "ragged", "crlf", "no-terminator", "no-final-newline",
                "sorted,ragged,crlf,no-terminator,no-final-newline"),
}
_WHERE = re.compile(r"line (\d+), column (\d+): ")


def run(program: str, data: bytes, tmp_path: Path, name: str = "program.py") -> subprocess.CompletedProcess[bytes]:
    """``program`` run as a package runs it: a file of its own, in isolated mode (``-I``: no site packages)."""
    path = tmp_path / name
    path.write_text(program)
    return subprocess.run([sys.executable, "-I", str(path)], input=data, capture_output=True, timeout=300, check=False)


def validate(game: str, data: bytes, tmp_path: Path) -> tuple[int, str]:
    done = run(programs.validator(game), data, tmp_path, "validate.py")
    return done.returncode, done.stderr.decode()


def answers(game: str, data: bytes) -> bytes:
    from worker.solving import solve_file

    out = io.StringIO()
    solve_file(engines.get(game), io.BytesIO(data), out, warnings=[])
    return out.getvalue().encode()


@pytest.mark.parametrize("game", GAMES)
def test_the_programs_import_only_the_standard_library(game: str) -> None:
    sources = [programs.source(game), programs.validator(game), *(m.program(game) for m in MISTAKES[game])]
    for source in sources:
        tree = ast.parse(source)
        names = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
        names |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
        assert names and {name.split(".")[0] for name in names} <= sys.stdlib_module_names, names


@pytest.mark.slow
@pytest.mark.parametrize("game", GAMES)
def test_the_validator_accepts_every_layout_dealer_generate_makes(game: str, tmp_path: Path) -> None:
    files = [cover_text(game)]
    for number, layout in enumerate(LAYOUTS["mahjong" if game == "mahjong" else "decks"]):
        made = io.BytesIO()
        generate(plan(game, 40, number, layout=layout, honours=number % 2 == 0 or game != "mahjong"), made)
        files.append(made.getvalue())
    files += [path.read_bytes() for path in judge_files(game)]
    for data in files:
        assert validate(game, data, tmp_path) == (42, ""), data[:200]


def _corpus(game: str) -> list[Path]:
    return sorted((CORPUS / game).glob("*.in"))


@pytest.mark.parametrize(("game", "name"), [(game, path.name) for game in GAMES for path in _corpus(game)])
def test_the_validator_refuses_what_dealers_reader_refuses_where_it_does(game: str, name: str,
                                                                       tmp_path: Path) -> None:
    data = (CORPUS / game / name).read_bytes()
    warnings: list = []
    try:
        for _ in engines.get(game).parse(io.BytesIO(data), warnings):
            pass
    except InputError as error:
        status, said = validate(game, data, tmp_path)
        assert status == 43 and _WHERE.match(said), said
        assert (int(_WHERE.match(said)[1]), int(_WHERE.match(said)[2])) == (error.line, error.column), (said, error)
        return
    status, said = validate(game, data, tmp_path)
    if any("text after the terminating" in str(warning) for warning in warnings):
        # Stricter than the reader, which ignores it with a warning: a test file holds nothing after its end.
        assert status == 43 and "text after the terminating" in said, said
    else:
        assert (status, said) == (42, ""), warnings


@pytest.mark.parametrize("name", sorted(path.name for path in (CORPUS / "any").iterdir()))
def test_no_validator_takes_a_file_that_is_no_judge_file(name: str, tmp_path: Path) -> None:
    data = (CORPUS / "any" / name).read_bytes()
    for game in GAMES:
        status, said = validate(game, data, tmp_path)
        assert status == 43 and _WHERE.match(said), (game, said)


@pytest.mark.slow
@pytest.mark.parametrize("game", GAMES)
def test_the_accepted_solution_gives_dealers_answers(game: str, tmp_path: Path) -> None:
    # The judge data less its 2,000 random cases: 300 made here stand for them, in a fifth of the time.
    files = [cover_text(game), *(path.read_bytes() for path in judge_files(game) if "random" not in path.name)]
    made = io.BytesIO()
    generate(plan(game, 300, 11), made)
    files.append(made.getvalue())
    for data in files:
        done = run(programs.source(game), data, tmp_path)
        assert (done.returncode, done.stderr) == (0, b"")
        assert done.stdout == answers(game, data)


@pytest.mark.parametrize(("game", "mistake"), [(game, m) for game in GAMES for m in MISTAKES[game]],
                         ids=lambda value: getattr(value, "name", value))
def test_each_wrong_solution_is_caught_by_the_cover_file(game: str, mistake, tmp_path: Path) -> None:
    data = cover_text(game)
    done = run(mistake.program(game), data, tmp_path)
    assert done.returncode == 0 and done.stdout != answers(game, data), done.stderr
    assert f"Its mistake: {mistake.what}." in mistake.program(game)
