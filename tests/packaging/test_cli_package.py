"""``dealer package`` as a setter runs it: a folder and a zip of the same files, laid out as DOMjudge
imports a problem and as the Kattis format wants; the secret files are their recipes' (the command
in each ``.desc`` makes the same bytes again) with the engines' answers; a package made twice is the
same bytes; what cannot be made is refused in one line with exit status 2, before anything is written."""

from __future__ import annotations

import io
import re
import shlex
import zipfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from worker import engines
from worker.cli import main
from worker.generating import generate, plan
from worker.generating.cover import cover_text
from worker.packaging.mistakes import MISTAKES
from worker.packaging.package import SHORT_NAMES
from worker.packaging.programs import SLUGS
from worker.solving import solve_file

#: What a problem archive holds at its top, as DOMjudge's import documents it (the Kattis format's
#: folders; DOMjudge also reads a domjudge-problem.ini, which this package needs not).
TOP = {"problem.yaml", "problem_statement", "data", "input_validators", "submissions"}
#: The folders of submissions DOMjudge imports with their expected verdicts.
VERDICTS = {"accepted", "wrong_answer", "time_limit_exceeded", "run_time_error"}
_NAME = re.compile(r"[a-zA-Z0-9_][a-zA-Z0-9_.-]{0,254}")


def package(*arguments: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["package", *arguments])
    return result.exit_code, result.stderr


def tree(folder: Path) -> dict[str, bytes]:
    return {path.relative_to(folder).as_posix(): path.read_bytes() for path in folder.rglob("*") if path.is_file()}


def answers(game: str, data: bytes) -> bytes:
    out = io.StringIO()
    solve_file(engines.get(game), io.BytesIO(data), out, warnings=[])
    return out.getvalue().encode()


@pytest.mark.parametrize("game", engines.names())
def test_the_folder_and_the_zip_hold_the_same_package_as_domjudge_imports_it(game: str, tmp_path: Path) -> None:
    folder, archive = tmp_path / SHORT_NAMES[game], tmp_path / "package.zip"
    status, said = package(game, str(folder), "--zip", str(archive))
    files = tree(folder)
    assert status == 0 and said == f"dealer: {game}: {len(files)} files in {folder} and {archive}, with 2 secret test files\n"
    with zipfile.ZipFile(archive) as opened:
        assert {info.filename: opened.read(info) for info in opened.infolist()} == files
    assert {name.split("/")[0] for name in files} == TOP
    assert all(_NAME.fullmatch(part) for name in files for part in name.split("/"))
    tests = {name.removesuffix(".in") for name in files if name.endswith(".in")}
    assert {name.rsplit("/", 1)[0] for name in tests} == {"data/sample", "data/secret"}
    for stem in tests:
        assert files[f"{stem}.ans"] == answers(game, files[f"{stem}.in"]) and f"{stem}.desc" in files
    assert files["data/secret/01-cover.in"] == cover_text(game)
    assert {name.split("/")[1] for name in files if name.startswith("submissions/")} <= VERDICTS
    assert {name for name in files if name.startswith("submissions/")} == {
        f"submissions/accepted/{SLUGS[game]}.py", *(f"submissions/wrong_answer/{m.name}.py" for m in MISTAKES[game])}
    assert files[f"input_validators/{SLUGS[game]}/validate.py"].count(f'\nGAME = "{game}"\n'.encode()) == 1
    assert re.search(r"^name: .+$", files["problem.yaml"].decode(), re.MULTILINE)
    assert b"\\section*{Input}" in files["problem_statement/problem.en.tex"]


def test_each_recipe_is_a_secret_file_whose_desc_makes_it_again(tmp_path: Path) -> None:
    recipes = ("--cases 7 --seed 3 --layout sorted,crlf", "--cases 9 --mix=ready=1,not-ready=1 --no-honours")
    folder = tmp_path / "mahjong"
    status, said = package("mahjong", str(folder), *(word for r in recipes for word in ("--recipe", r)))
    assert status == 0 and said.endswith("with 3 secret test files\n")
    for number, cases in ((2, 7), (3, 9)):
        desc = (folder / f"data/secret/{number:02d}.desc").read_text()
        command = shlex.split(desc.splitlines()[0])
        assert command[:3] == ["dealer", "generate", "mahjong"] and "--seed" in command  # a seed left out is chosen
        options = dict(zip(command[3::2], command[4::2], strict=False))
        made = io.BytesIO()
        generate(plan("mahjong", int(options["--cases"]), int(options["--seed"]), options.get("--mix"),
                      options.get("--layout"), "--no-honours" not in command), made)
        assert int(options["--cases"]) == cases and (folder / f"data/secret/{number:02d}.in").read_bytes() == made.getvalue()
    assert "ready: 5\n  not-ready: 4" in (folder / "data/secret/03.desc").read_text()


def test_a_package_made_twice_is_the_same_bytes(tmp_path: Path) -> None:
    for name in ("one.zip", "two.zip"):
        assert package("accordion", "--zip", str(tmp_path / name), "--recipe", "--cases 3 --seed 1")[0] == 0
    assert (tmp_path / "one.zip").read_bytes() == (tmp_path / "two.zip").read_bytes()


@pytest.mark.parametrize(("arguments", "message"), [
    (("10-20-30", "{tmp}/10-20-30"), ("{tmp}/10-20-30: a problem's folder is named by its short name, "
                                      "lower-case letters and digits only (such as tentwentythirty)")),
    (("10-20-30", "{tmp}/full"), "{tmp}/full: already exists and is not an empty folder: the package needs a new one"),
    (("10-20-30", "{tmp}/x", "--recipe", "--cases 5 --mix tie=1"),
     '--recipe: mix: 10-20-30 has no outcome "tie" (expected win, loss, draw)'),
    (("10-20-30", "{tmp}/x", "--recipe", "--seed 5"), ("--recipe: recipe: '--seed 5': say how many cases the "
                                                      "file holds (--cases N)")),
    (("accordion", "{tmp}/x", "--recipe", "--cases 5 --jobs 2"),
     ('--recipe: recipe: "--jobs" is no option of dealer generate\'s here (--cases, --seed, --mix, --layout, '
      "--no-honours)")),
    (("accordion", "{tmp}/x", "--recipe", "--cases five"), '--recipe: cases: "five" is not a whole number'),
    (("accordion",), "say where the package goes: a folder DIR, --zip FILE, or both"),
    (("accordion", "{tmp}/x", "--license", "public domain", "--rights-owner", "Ada"),
     "rights owner: a package under 'public domain' names none"),
    (("accordion", "--zip", "{tmp}/no/such/folder.zip"), "{tmp}/no/such/folder.zip: No such file or directory"),
])
def test_what_cannot_be_made_is_refused_in_one_line_and_nothing_is_written(arguments: tuple[str, ...], message: str,
                                                                          tmp_path: Path) -> None:
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "mine.txt").write_text("kept")
    status, said = package(*(argument.format(tmp=tmp_path) for argument in arguments))
    assert (status, said) == (2, f"dealer: error: {message.format(tmp=tmp_path)}\n")
    assert sorted(path.name for path in tmp_path.rglob("*")) == ["full", "mine.txt"]


@pytest.mark.parametrize(("arguments", "rights"), [
    ((), 'license: cc by\nrights_owner: "the Dealer authors"\n'),
    (("--license", "cc0", "--rights-owner", "Ada's course"), 'license: cc0\nrights_owner: "Ada\'s course"\n'),
    (("--license", "public domain"), "license: public domain\nlimits:"),
])
def test_problem_yaml_names_the_rights_asked(arguments: tuple[str, ...], rights: str, tmp_path: Path) -> None:
    assert package("mahjong", str(tmp_path / "mahjong"), *arguments)[0] == 0
    assert rights in (tmp_path / "mahjong" / "problem.yaml").read_text()


def test_the_license_is_one_of_the_formats(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["package", "mahjong", str(tmp_path / "mahjong"), "--license", "gpl"])
    assert result.exit_code == 2 and "'gpl' is not one of 'cc by', 'cc by-sa'" in result.output


def test_a_package_that_fails_half_way_leaves_nothing(tmp_path: Path) -> None:
    from worker.packaging import package as packaging

    def contents() -> Any:
        yield "problem.yaml", b"name: Accordian Patience\n"
        raise OSError(28, "No space left on device")

    (tmp_path / "accordion").mkdir()
    with pytest.raises(OSError, match="No space left"):
        packaging.write("accordion", tmp_path / "accordion", contents())
    assert [path.name for path in tmp_path.rglob("*")] == ["accordion"]
