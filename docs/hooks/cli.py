"""MkDocs hook: the command-line page's reference, written from the ``dealer`` command's own help.

``docs/cli.md`` holds the marker ``<!-- dealer-commands -->``; each build replaces it with every
command and sub-command, its usage, arguments and options exactly as ``dealer … --help`` prints them,
so that the page cannot say anything the command does not.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import click

MARKER = "<!-- dealer-commands -->"
#: Help is wrapped at this width whatever the terminal of the build, so every build writes the same page.
WIDTH = 100


def commands(command: click.Command, parent: click.Context | None = None,
             name: str = "dealer") -> Iterator[tuple[str, click.Command, click.Context]]:
    """Every command under ``command`` (itself first), with its full name and a context for its help."""
    context = click.Context(command, info_name=name, parent=parent, max_content_width=WIDTH,
                            terminal_width=WIDTH, **command.context_settings)
    yield context.command_path, command, context
    if isinstance(command, click.Group):
        for sub in command.list_commands(context):
            found = command.get_command(context, sub)
            if found is not None and not found.hidden:
                yield from commands(found, context, sub)


def reference() -> str:
    """The reference in Markdown: a table of the commands, then a section per command with its help."""
    from worker.cli import main

    found = list(commands(main))
    lines = ["| command | what it does |", "|---|---|"]
    lines += [f"| [`{path}`](#{_anchor(path)}) | {command.get_short_help_str(WIDTH)} |"
              for path, command, _ in found[1:]]
    for path, command, context in found[1:]:
        lines += ["", f"### `{path}`", "", "```text", command.get_help(context), "```"]
    return "\n".join(lines) + "\n"


def _anchor(path: str) -> str:
    return path.replace(" ", "-")


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, reference())
