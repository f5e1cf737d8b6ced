"""A package's test files: each a recipe in ``dealer generate``'s words, checked by its ``plan``.

A recipe is written as ``dealer generate`` takes it (``--cases 60 --seed 7 --mix win=1,loss=1
--layout crlf``, ``--no-honours``), so that its ``.desc`` file is the command that makes the
same file again.
"""

from __future__ import annotations

import secrets
import shlex
from dataclasses import dataclass

from worker.generating import GenerateError, Plan, plan

#: What a package holds without ``--recipe``: a few dozen cases of every outcome, in a layout
#: the statement allows, so that a default package stays quick to verify.
DEFAULTS = {
    "10-20-30": ("--cases 24 --seed 2026 --mix win=1,loss=1,draw=1",),
    "accordion": ("--cases 24 --seed 2026 --mix 1=1,2-5=2,6+=1 --layout per-line=13",),
    "mahjong": ("--cases 60 --seed 2026 --mix ready=3,not-ready=1 --layout sorted",),
}

_VALUED = ("cases", "seed", "mix", "layout")


@dataclass(frozen=True)
class Recipe:
    """One generated test file, as asked."""

    cases: int
    seed: int
    mix: str | None = None
    layout: str | None = None
    honours: bool = True

    def plan(self, game: str) -> Plan:
        return plan(game, self.cases, self.seed, self.mix, self.layout, self.honours)

    def command(self, game: str) -> str:
        """The ``dealer generate`` command that makes this file."""
        words = ["dealer", "generate", game, "--cases", str(self.cases), "--seed", str(self.seed)]
        words += [word for name in ("mix", "layout") if (value := getattr(self, name)) is not None
                  for word in (f"--{name}", value)]
        if not self.honours:
            words.append("--no-honours")
        return shlex.join(words)


def parse(game: str, text: str) -> Recipe:
    """The recipe ``text`` asks for, checked for ``game``; :class:`GenerateError` says what is wrong.

    >>> parse("10-20-30", "--cases 5 --seed 3 --mix=win=1,draw=1").command("10-20-30")
    'dealer generate 10-20-30 --cases 5 --seed 3 --mix win=1,draw=1'
    >>> parse("accordion", "--cases 5 --colour red")
    Traceback (most recent call last):
    ...
    worker.generating.errors.GenerateError: recipe: "--colour" is no option of dealer generate's here \
(--cases, --seed, --mix, --layout, --no-honours)
    """
    try:
        words = shlex.split(text)
    except ValueError as error:
        raise GenerateError(f"{text!r}: {error}", "recipe") from None
    given: dict[str, str] = {}
    honours = True
    while words:
        word = words.pop(0)
        name, _, value = word.removeprefix("--").partition("=")
        if word == "--no-honours":
            honours = False
            continue
        if not word.startswith("--") or name not in _VALUED:
            raise GenerateError(f'"{word}" is no option of dealer generate\'s here (--cases, --seed, --mix, '
                                "--layout, --no-honours)", "recipe")
        if not value:
            if not words:
                raise GenerateError(f"--{name} needs a value", "recipe")
            value = words.pop(0)
        given[name] = value
    if "cases" not in given:
        raise GenerateError(f"{text!r}: say how many cases the file holds (--cases N)", "recipe")
    numbers = {}
    for name in ("cases", "seed"):
        if name in given:
            try:
                numbers[name] = int(given[name])
            except ValueError:
                raise GenerateError(f'"{given[name]}" is not a whole number', name) from None
    return recipe(game, numbers["cases"], numbers.get("seed"), given.get("mix"), given.get("layout"), honours)


def recipe(game: str, cases: int, seed: int | None = None, mix: str | None = None, layout: str | None = None,
           honours: bool = True) -> Recipe:
    """A recipe checked for ``game`` as ``dealer generate`` checks its options (:class:`GenerateError`,
    in its words); without a seed, one is chosen."""
    made = Recipe(cases, secrets.randbits(63) if seed is None else seed, mix, layout, honours)
    made.plan(game)
    return made


def defaults(game: str) -> list[Recipe]:
    return [parse(game, text) for text in DEFAULTS[game]]
