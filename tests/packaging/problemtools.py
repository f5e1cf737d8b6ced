"""Kattis' ``verifyproblem`` (problemtools, from PyPI), installed by the tests themselves into a
venv of its own beside the project's (``.venv/problemtools``), and run on problem packages.

problemtools runs Python submissions with PyPy (``pypy3``) by default; it is told instead, by a
languages override (``$XDG_CONFIG_HOME/problemtools/languages.yaml``, the place problemtools reads
one from), to run them with its venv's CPython, isolated (``-I``: no site packages, so that a
program that imported Dealer would fail). It compiles its default output validator with ``g++``.
"""

from __future__ import annotations

import fcntl
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from tests.support.paths import ROOT

VENV = ROOT / ".venv" / "problemtools"
VERIFYPROBLEM = VENV / "bin" / "verifyproblem"
#: The problemtools this was written against (its legacy-format checks and its report's wording).
REQUIREMENT = "problemtools>=1.20260907,<2"
#: What a package is checked on by default; the statement apart, as its tools are a large install.
PARTS = ("config", "data", "validators", "submissions")
#: What the statement part runs: problem2pdf's lualatex and gs, plasTeX's kpsewhich, problem2html's tidy.
STATEMENT_TOOLS = ("lualatex", "kpsewhich", "gs", "tidy")
#: Debian's packages that give them, as problemtools' README lists them (pandoc is only for Markdown
#: statements, dvisvgm for pictures; a package has neither). `.ci/run` installs these.
STATEMENT_PACKAGES = ("apt-get install --no-install-recommends ghostscript texlive-fonts-recommended "
                      "texlive-latex-extra texlive-luatex texlive-plain-generic tidy")


class Unavailable(Exception):
    """problemtools cannot be installed or run here: why."""


def install() -> Path:
    """``verifyproblem``, installed first if it is not (one installer at a time: a lock file)."""
    if shutil.which("g++") is None:
        raise Unavailable("verifyproblem compiles its default output validator with g++, which is not installed")
    VENV.parent.mkdir(exist_ok=True)
    with open(VENV.parent / "problemtools.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not VERIFYPROBLEM.exists():
            # No pip of its own: the project's installs into it (``--python``). Making one (ensurepip) and
            # installing with it took 10.5 CPU-seconds, this 3.4 (both with its wheels in pip's cache).
            steps = ([sys.executable, "-m", "venv", "--without-pip", str(VENV)],
                     [sys.executable, "-m", "pip", "--python", str(VENV / "bin" / "python"), "install", "-q",
                      REQUIREMENT])
            for step in steps:
                done = subprocess.run(step, check=False, capture_output=True, text=True)
                if done.returncode:
                    shutil.rmtree(VENV, ignore_errors=True)
                    raise Unavailable(f"{' '.join(step[-2:])} failed: {done.stderr.strip()[-500:]}")
    return VERIFYPROBLEM


@dataclass(frozen=True)
class Verdict:
    """What ``verifyproblem`` said of one package."""

    output: str
    errors: int
    warnings: int
    #: Each submission's line ("accepted/x.py" -> "AC"), as its report gives it.
    results: dict[str, str]

    def lines(self, word: str) -> list[str]:
        return [line for line in self.output.splitlines() if word in line]


def languages(config: Path) -> Path:
    """The languages override, written in ``config`` (an ``XDG_CONFIG_HOME``)."""
    python = VENV / "bin" / "python"
    path = config / "problemtools" / "languages.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("python3:\n"
                    f"    compile: '{python} -I -m py_compile {{files}}'\n"
                    f"    run: '{python} -I \"{{mainfile}}\"'\n")
    return config


_TESTED = re.compile(r"tested: (\d+) errors?, (\d+) warnings?")
_RESULT = re.compile(r"^\s+((?:accepted|wrong_answer)/\S+) \(.*\) (?:OK|\S+): (\w+)", re.MULTILINE)


def verify(packages: list[Path], config: Path, parts: tuple[str, ...] = PARTS) -> list[Verdict]:
    """``verifyproblem`` on each package, all at once (it mostly waits on the programs it runs)."""
    verifyproblem = install()
    env = {"XDG_CONFIG_HOME": str(languages(config)), "PATH": "/usr/bin:/bin", "HOME": str(config)}

    def one(package: Path) -> Verdict:
        done = subprocess.run([str(verifyproblem), "-p", *parts, "--", package.name], check=False,
                              cwd=package.parent, env=env, capture_output=True, text=True, timeout=900)
        output = done.stdout + done.stderr
        tested = _TESTED.search(output)
        if tested is None:
            raise AssertionError(f"verifyproblem gave no count of errors (status {done.returncode}):\n{output}")
        results = {name: verdict for name, verdict in _RESULT.findall(output)}
        return Verdict(output, int(tested[1]), int(tested[2]), results)

    with ThreadPoolExecutor(len(packages)) as pool:
        return list(pool.map(one, packages))
