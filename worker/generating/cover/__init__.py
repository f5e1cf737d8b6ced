"""``dealer generate GAME --cover``: a small judge file that runs every rule and catches the
classic wrong solutions, and the report of what it covers.

The file is fixed: its cases are written in the repository (:mod:`.games`; the extremes
were found by :mod:`.search`, which can be run again and finds the same), because the
extremes take minutes of search, and a file a setter compares outputs on should not
change with the code that makes random decks. The report is worked out from the file
each time it is made (:mod:`.report`): the answers, what each case is there for, and
what the file covers, down to the rule branches run (:mod:`.branches`).
"""

from __future__ import annotations

from typing import BinaryIO

from worker.generating.cover.forms import DECK_FORMS, HAND_FORMS
from worker.generating.cover.games import ENTRIES, Entry
from worker.generating.cover.report import Report, report_of

_TERMINATORS = {"10-20-30": "0", "accordion": "#", "mahjong": "0"}


def entries(game: str) -> list[Entry]:
    """The cases of ``game``'s cover file, in order."""
    return ENTRIES[game]()


def cover_text(game: str) -> bytes:
    """``game``'s cover file."""
    forms = HAND_FORMS if game == "mahjong" else DECK_FORMS
    parts = [forms[entry.form](entry.text.split(" ")) for entry in entries(game)]
    parts.append(_TERMINATORS[game] + "\n")
    return "".join(parts).encode("ascii")


def cover_file(game: str, out: BinaryIO, branches: bool = True) -> Report:
    """Write ``game``'s cover file to ``out``; what it covers (with ``branches``, the rule
    branches too, where ``coverage`` is installed)."""
    data = cover_text(game)
    out.write(data)
    return report_of(game, data, entries(game), branches)


__all__ = ["Entry", "Report", "cover_file", "cover_text", "entries"]
