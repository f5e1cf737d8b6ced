"""Numbers the guide's prose quotes from the code, held to the code: a constant changed without its
sentence (or the other way round) fails here."""

from __future__ import annotations

import re

from tests.support.paths import ROOT
from webui import pacing
from worker.config import Settings
from worker.jobs import sizing


def test_the_pace_of_a_request_is_the_one_webui_pacing_keeps() -> None:
    text = " ".join((ROOT / "docs" / "production.md").read_text().split())
    assert (f"{pacing.HEADER_SECONDS} s for the headers, {pacing.GRACE_SECONDS:g} s for the start of a body, "
            f"then {pacing.MIN_RATE} bytes a second, and never {pacing.MOST_AHEAD_SECONDS:g} s without a byte"
            ) in text


#: The units the guide writes a setting's default in, as the setting counts it (bytes, seconds, hours).
UNITS = {"": 1, "s": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
#: A setting named with its default in brackets (`DEALER_SPLIT_PATIENCE_SECONDS` (5 s)), or a row of a
#: table of settings and their defaults (| `DEALER_MAX_LINE_BYTES` | 1 MiB |, several names to a row).
QUOTED = (re.compile(r"`DEALER_([A-Z_]+)`[^`(|\n]{0,20}\((\d[\d,.]*(?: (?:s|KiB|MiB|GiB))?)(?=[\s,;)])"),
          re.compile(r"^\| ((?:`DEALER_[A-Z_]+`(?:, )?)+) \| ([^|]+) \|", re.MULTILINE))


def _quotes() -> list[tuple[str, str, str]]:
    """Each setting whose default the guide quotes: (page, setting's field, the default as quoted)."""
    found = []
    for page in sorted((ROOT / "docs").glob("*.md")):
        text = page.read_text()
        for name, value in QUOTED[0].findall(text):
            found.append((page.name, name.lower(), value))
        for names, values in QUOTED[1].findall(text):
            fields = re.findall(r"`DEALER_([A-Z_]+)`", names)
            quoted = [value.strip() for value in values.split(",")] if len(fields) > 1 else [values.strip()]
            found += [(page.name, name.lower(), value) for name, value in zip(fields, quoted, strict=True)]
    return found


def test_every_default_the_guide_quotes_is_the_settings() -> None:
    defaults = Settings.from_env({})
    quotes = _quotes()
    assert len(quotes) >= 10  # the patterns still find the guide's quotes
    wrong = []
    for page, name, value in quotes:
        default = getattr(defaults, name)
        if value == "none":
            right = not default
        else:
            number, _, unit = value.partition(" ")
            right = float(number.replace(",", "")) * UNITS[unit] == float(default)
        if not right:
            wrong.append(f"{page}: DEALER_{name.upper()} quoted as {value}, its default is {default!r}")
    assert not wrong


def test_the_chunk_sizes_the_overviews_quote_are_sizings() -> None:
    """The README's and the guide's first diagrams (the README's spread over the lines of its column)."""
    low, high = sizing.CHUNK_BOUNDS
    for page in (ROOT / "README.md", ROOT / "docs" / "index.md"):
        text = page.read_text()
        for words in (f"chunks of {low:,}", f"to {high:,} cases", f"{sizing.CHUNKS_PER_JOB} a job"):
            assert words in text, f"{page.name}: {words}"
