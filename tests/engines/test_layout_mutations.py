"""The rule of layout faults on any generated file (the corpus, ``tests/data/layout-faults/``, holds it on
fixed ones): a file of any game, in any layout ``dealer generate --layout`` makes (any number of cards a line,
a deck a line or decks run across lines, CR LF, no terminator, ragged), with one mutation at any line of its
cases, is read by both cores as the mutation says (``worker/testing/mutations.py``): its faults at the lines
it touched, as many as it says, and every case it did not touch kept, in order."""

from __future__ import annotations

import io

from hypothesis import given, note, settings
from hypothesis import strategies as st

from tests.support.readings import by_reader, cores
from worker.generating.stream import generate, plan
from worker.testing.mutations import KINDS, Shape, mutate, places


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


@st.composite
def mutants(draw: st.DrawFn) -> tuple[str, str, str, int, bytes]:
    game = draw(st.sampled_from(["10-20-30", "accordion", "mahjong"]))
    layout = draw(layouts(game))
    out = io.BytesIO()
    # Enough cases that the mutated lines are few among the lines the readers learn the layout from (a deck a
    # line: 20 lines at least, of which a split line makes two odd ones).
    generate(plan(game, draw(st.integers(20, 30)), draw(st.integers(0, 2**32)), None, layout), out)
    shape = Shape.of(out.getvalue(), game, layout)
    kind = draw(st.sampled_from([kind for kind in KINDS if places(shape, kind)]))
    return game, layout, kind, draw(st.sampled_from(places(shape, kind))), out.getvalue()


@settings(max_examples=150, deadline=None)
@given(mutant=mutants())
def test_a_mutation_at_any_line_of_any_generated_file_is_read_as_it_says(
        mutant: tuple[str, str, str, int, bytes]) -> None:
    game, layout, kind, line, data = mutant
    note(f"{game}, layout {layout!r}: {kind} at line {line}")
    shape = Shape.of(data, game, layout)
    made = mutate(shape, kind, line)
    for engine in cores(game):
        by_reader(engine, made.data).holds_to(made.expected, shape.texts)
