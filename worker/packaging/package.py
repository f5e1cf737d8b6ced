"""A problem package written out: the folders and files of the Kattis problem package format
(its legacy version, which DOMjudge imports and ``verifyproblem`` checks), from what Dealer knows.

::

    problem.yaml                      name, source, license, limits
    problem_statement/problem.en.tex  the statement (:mod:`.statements`)
    data/sample/01.in .ans .desc      the statements' samples, one case a file, with what each shows
    data/secret/01-cover.in .ans .desc  the --cover file and its report
    data/secret/02.in .ans .desc …    a file per recipe, with its command and what its mix made
    input_validators/GAME/validate.py
    submissions/accepted/GAME.py
    submissions/wrong_answer/NAME.py  the classic mistakes (:mod:`.mistakes`)

Every ``.ans`` is Dealer's judge output for its ``.in`` (:func:`worker.solving.solve_file`).
"""

from __future__ import annotations

import io
import os
import re
import shutil
import uuid
import zipfile
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO

from worker import engines
from worker.generating import generate
from worker.generating.cover import cover_file, entries
from worker.packaging import mistakes, programs
from worker.packaging.programs import SLUGS
from worker.packaging.errors import PackageError
from worker.packaging.recipes import Recipe
from worker.packaging.rights import Rights
from worker.packaging.statements import NAMES, SOURCES, statement
from worker.solving import solve_file

#: How many of the cover file's first cases (the statements' samples) are the package's samples.
SAMPLES = {"10-20-30": 3, "accordion": 2, "mahjong": 2}
_TERMINATORS = {"10-20-30": "0", "accordion": "#", "mahjong": "0"}
#: A problem's folder is its short name, as the format wants it (verifyproblem refuses any other).
SHORT_NAME = re.compile(r"[a-z0-9]+")
SHORT_NAMES = {"10-20-30": "tentwentythirty", "accordion": "accordion", "mahjong": "mahjong"}


def files(game: str, recipes: Sequence[Recipe], rights: Rights = Rights()) -> Iterator[tuple[str, bytes]]:
    """The package's files, as (path inside the package, contents), in a fixed order."""
    game = engines.check(game)
    yield "problem.yaml", _problem_yaml(game, rights).encode()
    yield "problem_statement/problem.en.tex", statement(game).encode()
    for number, (text, purpose) in enumerate(_samples(game), 1):
        yield from _case(f"data/sample/{number:02d}", game, text, purpose)
    out = io.BytesIO()
    report = cover_file(game, out, branches=False).text()
    yield from _case("data/secret/01-cover", game, out.getvalue(),
                     f"dealer generate {game} --cover: the small file that runs every rule and catches the "
                     f"classic wrong solutions.\n\n{report}")
    for number, recipe in enumerate(recipes, 2):
        out = io.BytesIO()
        summary = generate(recipe.plan(game), out)
        yield from _case(f"data/secret/{number:02d}", game, out.getvalue(), f"{recipe.command(game)}\n\n{summary.text()}")
    yield f"input_validators/{SLUGS[game]}/validate.py", programs.validator(game).encode()
    yield f"submissions/accepted/{SLUGS[game]}.py", programs.source(game).encode()
    for mistake in mistakes.MISTAKES[game]:
        yield f"submissions/wrong_answer/{mistake.name}.py", mistake.program(game).encode()


def write(game: str, directory: Path, contents: Iterable[tuple[str, bytes]]) -> int:
    """Write the package's ``contents`` (:func:`files`) into ``directory`` (new, or empty, named by
    the problem's short name); how many files it holds. The files are written into a folder beside
    it first, which takes its place once they all are: a package that fails half-way leaves nothing."""
    if not SHORT_NAME.fullmatch(directory.name):
        raise PackageError(f"{directory}: a problem's folder is named by its short name, lower-case letters and "
                           f"digits only (such as {SHORT_NAMES[engines.check(game)]})")
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise PackageError(f"{directory}: already exists and is not an empty folder: the package needs a new one")
    making = directory.with_name(f".{directory.name}.{os.getpid()}.partial")
    making.mkdir(parents=True)
    count = 0
    try:
        for name, data in contents:
            path = making / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            count += 1
        if directory.exists():
            directory.rmdir()  # empty, as checked
        making.rename(directory)
    finally:
        shutil.rmtree(making, ignore_errors=True)
    return count


def write_zip(out: IO[bytes], contents: Iterable[tuple[str, bytes]]) -> int:
    """Write the package's ``contents`` as a zip, ``problem.yaml`` at its top, as DOMjudge imports it;
    how many files it holds."""
    count = 0
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in contents:
            archive.writestr(zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0)), data,
                             compress_type=zipfile.ZIP_DEFLATED)
            count += 1
    return count


def _case(stem: str, game: str, data: bytes, description: str) -> Iterator[tuple[str, bytes]]:
    answer = io.StringIO()
    solve_file(engines.get(game), io.BytesIO(data), answer, warnings=[])
    yield f"{stem}.in", data
    yield f"{stem}.ans", answer.getvalue().encode()
    yield f"{stem}.desc", description.rstrip("\n").encode() + b"\n"


def _samples(game: str) -> Iterator[tuple[bytes, str]]:
    """The statements' samples, each a file of its own, written as a statement shows them."""
    for entry in entries(game)[: SAMPLES[game]]:
        tokens = entry.text.split(" ")
        half = len(tokens) // 2
        lines = [tokens] if game == "mahjong" else [tokens[:half], tokens[half:]]
        text = "".join(" ".join(line) + "\n" for line in lines) + _TERMINATORS[game] + "\n"
        yield text.encode(), entry.purpose


def _problem_yaml(game: str, rights: Rights) -> str:
    # The time limit is left to the contest system: verifyproblem sets it from the accepted
    # solution's time (time_multiplier), DOMjudge from its own default or the setter's choice.
    return (
        "problem_format_version: legacy\n"
        f"name: {NAMES[game]}\n"
        f"uuid: {uuid.uuid5(uuid.NAMESPACE_URL, f'dealer:package:{game}')}\n"
        f"source: Dealer, after {SOURCES[game]}\n"
        f"{rights.yaml()}"
        "limits:\n"
        "  memory: 512\n"
        "  time_multiplier: 5\n"
        "  time_safety_margin: 2\n"
    )
