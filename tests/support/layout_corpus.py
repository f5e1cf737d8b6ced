"""The corpus of layout faults (``tests/data/layout-faults/``): for each game and each layout ``dealer generate
--layout`` makes, a small generated file with each mutation of :mod:`worker.testing.mutations` at one line,
and beside them ``expected.json``, what a reader that knows the layout must make of each. Written by

    python -m tests.support.layout_corpus

which ``tests/badinput/test_layout_faults.py`` holds to: the files are what it writes. :func:`mutants` makes
the same kinds of file afresh, for the property tests.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from worker.generating.stream import generate, plan
from worker.testing.mutations import KINDS, STREAM_KINDS, Expected, Mutant, Shape, mutate, places

CORPUS = Path(__file__).resolve().parents[1] / "data" / "layout-faults"
#: Cases a file holds, and the seed of every file of a game (the same cases in every layout).
CASES = 20
SEED = 42
#: Each folder's layout, in ``dealer generate``'s words.
DECK_LAYOUTS = {"per-line-26": "", "per-line-13": "per-line=13", "per-line-52": "per-line=52",
                "per-line-20": "per-line=20", "flow-20": "flow,per-line=20", "crlf": "crlf",
                "no-terminator": "per-line=13,no-terminator,no-final-newline", "ragged": "ragged"}
LAYOUTS = {"10-20-30": DECK_LAYOUTS, "accordion": DECK_LAYOUTS,
           "mahjong": {"hand-a-line": "", "crlf": "crlf", "ragged": "ragged"}}


@dataclass(frozen=True)
class Entry:
    """One file of the corpus: where it is, and what its reading must give (the cases are the clean file's,
    as digests: :func:`digest`)."""

    game: str
    layout: str
    kind: str
    path: Path
    line: int
    cases: tuple[str, ...]
    expected: Expected

    @property
    def name(self) -> str:
        return f"{self.game}/{self.path.parent.name}/{self.kind}"


def digest(text: str) -> str:
    """A case's text as the corpus names it."""
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def clean(game: str, layout: str, cases: int = CASES, seed: int = SEED) -> bytes:
    """A generated file, as ``dealer generate`` writes it."""
    out = io.BytesIO()
    generate(plan(game, cases, seed, None, layout or None), out)
    return out.getvalue()


def chosen_line(shape: Shape, kind: str) -> int:
    """Where a corpus file's mutation is: a line of the middle case, one it shares with the next where the
    layout runs decks across lines (the case where one mistake touches two), else each kind at another
    of its lines."""
    middle = len(shape.texts) // 2
    shared = sorted(set(shape.spans[middle - 1]) & set(shape.spans[middle]))
    if shape.reading in ("flow", "stream") and shared:
        return shared[0]
    span = shape.spans[middle - 1]
    return span[KINDS.index(kind) % len(span)]


def folder(game: str, name: str) -> dict[str, tuple[bytes, dict[str, Any]]]:
    """A folder's files: each mutation's name → its bytes and its expectation."""
    layout = LAYOUTS[game][name]
    shape = Shape.of(clean(game, layout), game, layout)
    made = {}
    for kind in STREAM_KINDS if shape.reading == "stream" else KINDS:
        line = chosen_line(shape, kind)
        mutant = mutate(shape, kind, line)
        made[kind] = (mutant.data, {"line": line, **asdict(mutant.expected)})
    return made


def write() -> list[Path]:
    written = []
    for game, layouts in LAYOUTS.items():
        for name, layout in layouts.items():
            into = CORPUS / game / name
            into.mkdir(parents=True, exist_ok=True)
            made = folder(game, name)
            cases = Shape.of(clean(game, layout), game, layout).texts
            for kind, (data, _) in made.items():
                (into / f"{kind}.in").write_bytes(data)
                written.append(into / f"{kind}.in")
            (into / "expected.json").write_text(_json(game, layout, [digest(text) for text in cases],
                                                      {kind: expectation for kind, (_, expectation) in made.items()}))
            written.append(into / "expected.json")
    return written


def _json(game: str, layout: str, cases: list[str], mutations: dict[str, dict[str, Any]]) -> str:
    """``expected.json``: a mutation a line, so that a change to the corpus reads as one in a diff."""
    lines = [f'"game": {json.dumps(game)}', f'"layout": {json.dumps(layout)}', f'"cases": {json.dumps(cases)}',
             '"mutations": {\n' + ",\n".join(f"  {json.dumps(kind)}: {json.dumps(said)}"
                                          for kind, said in mutations.items()) + "\n}"]
    return "{\n" + ",\n".join(lines) + "\n}\n"


def entries() -> list[Entry]:
    """Every file of the corpus with what its reading must give, as ``expected.json`` says."""
    found = []
    for path in sorted(CORPUS.glob("*/*/expected.json")):
        told = json.loads(path.read_text())
        for kind, said in told["mutations"].items():
            expected = Expected(tuple(said["faults"]), tuple(said["lines"]), tuple(said["kept"]),  # type: ignore[arg-type]
                                tuple(said["may_keep"]))
            found.append(Entry(told["game"], told["layout"], kind, path.parent / f"{kind}.in", said["line"],
                               tuple(told["cases"]), expected))
    return found


@st.composite
def layouts(draw: st.DrawFn, game: str) -> str:
    """A layout of ``game`` in ``dealer generate``'s words."""
    ends = draw(st.sampled_from(["", "crlf", "no-terminator", "no-terminator,no-final-newline"]))
    if game == "mahjong":
        shape = draw(st.sampled_from(["", "sorted", "ragged"]))
    else:
        per_line = draw(st.integers(2, 52))
        shape = draw(st.sampled_from([f"per-line={per_line}", f"flow,per-line={per_line}", "ragged"]))
    return ",".join(item for item in (shape, ends) if item)


def _unseen(game: str, layout: str, kind: str) -> bool:
    """The rule's limit (worker/engines/layout.py, "Limits"): a 10-20-30 file of two or three values a line with a
    line missing or doubled reads on in decks that fit the layout, which often still hold four of each value."""
    cards = int(layout.partition("per-line=")[2].split(",")[0] or 52)
    return game == "10-20-30" and cards < 4 and kind in ("missing-line", "doubled-line")


@dataclass(frozen=True)
class Fresh:
    """A file made afresh with one mutation: what it is (shown where a property fails), its clean shape and the
    mutant."""

    game: str
    cases: int
    seed: int
    layout: str
    kind: str
    line: int
    shape: Shape = field(repr=False)
    mutant: Mutant = field(repr=False)


def made(game: str, cases: int, seed: int, layout: str, kind: str, line: int) -> Fresh:
    """A generated file of ``cases`` cases from ``seed`` in ``layout``, with ``kind`` at its line ``line``."""
    shape = Shape.of(clean(game, layout, cases, seed), game, layout)
    return Fresh(game, cases, seed, layout, kind, line, shape, mutate(shape, kind, line))


@st.composite
def mutants(draw: st.DrawFn) -> Fresh:
    """A generated file of any game, in any layout, with any mutation at any line of its cases."""
    game = draw(st.sampled_from(list(LAYOUTS)))
    layout = draw(layouts(game))
    # Enough cases that the mutated lines are few among the lines the readers learn the layout from (a deck a
    # line: 20 lines at least, of which a split line makes two odd ones).
    cases, seed = draw(st.integers(20, 30)), draw(st.integers(0, 2**32))
    shape = Shape.of(clean(game, layout, cases, seed), game, layout)
    kind = draw(st.sampled_from([kind for kind in KINDS if places(shape, kind) and not _unseen(game, layout, kind)]))
    return made(game, cases, seed, layout, kind, draw(st.sampled_from(places(shape, kind))))


if __name__ == "__main__":
    for path in write():
        print(path.relative_to(CORPUS))


#: How a good judge file is laid out anew, its tokens unchanged: nothing the judge, reading a stream, sees.
RELAYINGS = ("split", "join", "blank", "unblank", "spaces")
_TOKEN = re.compile(rb"\S+")
_GAPS = st.text(" \t", min_size=1, max_size=3).map(str.encode)


@dataclass(frozen=True)
class Relaid:
    """A generated file laid out anew (``edits``: what was done where), and the file as it was made."""

    game: str
    layout: str
    edits: tuple[tuple[str, int], ...]
    data: bytes = field(repr=False)


@st.composite
def relaid(draw: st.DrawFn) -> Relaid:
    """A generated file of any game, in any layout, laid out anew a few times: a line split or joined with the
    next, a blank line added or taken out, the gaps between tokens changed (for mahjong, whose lines are its
    hands, only the last three)."""
    game = draw(st.sampled_from(list(LAYOUTS)))
    layout = draw(layouts(game))
    cases, seed = draw(st.integers(12, 30)), draw(st.integers(0, 2**32))
    lines = clean(game, layout, cases, seed).split(b"\n")
    edits = []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(RELAYINGS[2:] if game == "mahjong" else RELAYINGS))
        at = draw(st.integers(0, len(lines) - 1))
        edits.append((kind, at))
        line = lines[at]
        if kind == "split" and len(found := list(_TOKEN.finditer(line))) > 1:
            k = draw(st.integers(1, len(found) - 1))
            lines[at : at + 1] = [line[: found[k - 1].end()], line[found[k].start() :]]
        elif kind == "join" and at + 1 < len(lines):
            lines[at : at + 2] = [line.rstrip(b"\r") + draw(_GAPS) + lines[at + 1]]
        elif kind == "blank":
            lines.insert(at, b"" if game == "mahjong" else draw(_GAPS))
        elif kind == "unblank" and not line.strip() and at + 1 < len(lines):
            del lines[at]
        elif kind == "spaces":
            lines[at] = draw(_GAPS) + b"".join(token + draw(_GAPS) for token in line.split())
    return Relaid(game, layout, tuple(edits), b"\n".join(lines))

