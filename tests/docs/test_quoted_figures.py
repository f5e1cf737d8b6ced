"""Numbers the guide's prose quotes from the code, held to the code: a constant changed without its
sentence (or the other way round) fails here."""

from __future__ import annotations

from tests.support.paths import ROOT
from webui import pacing


def test_the_pace_of_a_request_is_the_one_webui_pacing_keeps() -> None:
    text = " ".join((ROOT / "docs" / "production.md").read_text().split())
    assert (f"{pacing.HEADER_SECONDS} s for the headers, {pacing.GRACE_SECONDS:g} s for the start of a body, "
            f"then {pacing.MIN_RATE} bytes a second, and never {pacing.MOST_AHEAD_SECONDS:g} s without a byte"
            ) in text
