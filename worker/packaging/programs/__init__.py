"""The programs a package ships, each one self-contained file that imports nothing of Dealer:
the accepted solution and the input validator of each game. They are real modules here so
that they are linted and tested like the rest; :mod:`worker.packaging.programs` reads their
source, and :mod:`worker.packaging.mistakes` makes the wrong solutions from the accepted ones."""

from __future__ import annotations

from importlib.resources import files

#: Each game's name as a Python name: its accepted solution's module here, and its programs' names in a package.
SLUGS = {"10-20-30": "ten_twenty_thirty", "accordion": "accordion", "mahjong": "mahjong"}


def source(game: str) -> str:
    """``game``'s accepted solution."""
    return files(__package__).joinpath(f"{SLUGS[game]}.py").read_text(encoding="utf-8")


def validator(game: str) -> str:
    """The input validator, set to ``game``'s format."""
    text = files(__package__).joinpath("validate.py").read_text(encoding="utf-8")
    return text.replace('\nGAME = "10-20-30"\n', f'\nGAME = "{game}"\n', 1)
