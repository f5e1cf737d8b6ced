"""MkDocs hook: the settings table, written from ``worker.config.Settings`` and its ``#:`` comments.

``Settings`` is the one place that reads Dealer's environment, and each field's ``#:`` comment says
what it does; the guide's table is made from them at every build (the marker ``<!-- settings -->``),
so that no setting is documented anywhere else. A field with no comment of its own, written on the
line after another field, shares that field's comment (``case_seconds`` and ``chunk_seconds``).
``tests/docs/test_settings.py`` holds the guide to the code both ways.
"""

from __future__ import annotations

import ast
import inspect
from dataclasses import MISSING, Field, fields
from pathlib import Path
from typing import Any

MARKER = "<!-- settings -->"


def comments() -> dict[str, str]:
    """Each field of ``Settings`` and the text of its ``#:`` comment (joined lines, as one sentence)."""
    from worker import config

    source = inspect.getsource(config.Settings)
    lines = source.splitlines()
    found: dict[str, str] = {}
    previous: tuple[str, int] | None = None
    for node in ast.parse(source).body[0].body:  # type: ignore[attr-defined]
        if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
            continue
        start = node.lineno - 1
        above = []
        while start > 0 and lines[start - 1].strip().startswith("#:"):
            start -= 1
            above.insert(0, lines[start].strip().removeprefix("#:").strip())
        name = node.target.id
        if above:
            found[name] = " ".join(above)
        elif previous is not None and previous[1] == node.lineno - 1:
            found[name] = found.get(previous[0], "")
        previous = (name, node.end_lineno or node.lineno)
    return found


#: The default data folder as the table writes it (``worker.config.default_data_dir``, on Linux).
USER_DATA = "~/.local/share/dealer"


def defaults() -> dict[str, str]:
    """Each field's value with an empty environment, as the table shows it (the data folder as the user's,
    whatever machine builds the guide, and the rest of it relative to it)."""
    from worker.config import Settings
    from worker.units import format_size

    settings = Settings.from_env({})
    here = str(Path.cwd())
    shown: dict[str, str] = {}
    for item in fields(Settings):
        value = getattr(settings, item.name)
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, int) and item.name.endswith("_bytes") and value:
            text = f"{value} ({format_size(value)})"
        elif value in ("", None) or (not isinstance(value, int | float) and not value):
            text = "empty"
        else:
            text = str(value).replace(str(settings.data_dir), USER_DATA).replace(here, ".")
        shown[item.name] = text
    return shown


def variable(item: Field[Any]) -> str:
    return f"DEALER_{item.name.upper()}"


def table() -> str:
    """The settings as a Markdown table: variable, default, what it does."""
    from worker.config import Settings

    described, values = comments(), defaults()
    rows = ["| variable | default | what it does |", "|---|---|---|"]
    for item in fields(Settings):
        text = described.get(item.name, "")
        if not text:
            raise LookupError(f"worker/config.py: Settings.{item.name} has no #: comment to document it by")
        required = item.default is MISSING and item.default_factory is MISSING
        made = required and item.name != "data_dir"
        default = f"`{values[item.name]}`" + (", in the data folder" if made else "")
        # The comments are reStructuredText (``code``); the guide is Markdown.
        text = text.replace("``", "`").replace("|", "&#124;")
        rows.append(f"| `{variable(item)}` | {default} | {text} |")
    return "\n".join(rows) + "\n"


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, table())
