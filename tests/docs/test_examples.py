"""Every ``dealer …`` example the guide and the README show names a command that exists and only options
that command takes (the command-line page's reference is the commands' own help: tests/docs/test_build.py)."""

from __future__ import annotations

import re
import shlex

import click
import pytest

from tests.support.paths import ROOT
from worker.cli import main

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def examples() -> list[tuple[str, str]]:
    """(page, example) for each line of a code block that runs ``dealer``, up to its comment, redirection
    or next command."""
    found = []
    for page in PAGES:
        for block in re.findall(r"```(?:sh|console|bash)?\n(.*?)```", page.read_text(), re.S):
            for line in block.replace("\\\n", " ").splitlines():
                command = re.split(r"\s(?:#|>|<|\||&&|;)", line.strip().removeprefix("$ "))[0]
                # "dealer web / dealer worker -c 4": two commands on one line
                for each in re.split(r"\s/\s(?=dealer )", command):
                    if re.match(r"(?:[A-Z_]+=\S+ )*(?:\.venv/bin/)?dealer \w", each):
                        found.append((page.relative_to(ROOT).as_posix(), each))
    return found


@pytest.mark.parametrize("page, example", examples())
def test_the_example_names_a_command_and_its_options(page: str, example: str) -> None:
    words = [word for word in shlex.split(example) if not re.fullmatch(r"[A-Z_]+=\S*", word)][1:]
    command: click.Command = main
    while isinstance(command, click.Group) and words and words[0] in command.commands:
        command = command.commands[words.pop(0)]
    assert not isinstance(command, click.Group), f"{page}: {example}: no such command"
    if command.context_settings.get("ignore_unknown_options"):
        return  # dealer worker hands what it does not know to Celery
    known = {name for param in command.params for name in (*param.opts, *param.secondary_opts)}
    known |= {"--help", "-h"}
    for word in words:
        if word.startswith("-") and word != "-":
            assert word.split("=", 1)[0] in known, f"{page}: {example}: {command.name} has no {word}"


def test_the_examples_are_found() -> None:
    assert len(examples()) >= 20
