"""The rule of layout faults on any generated file (the corpus, ``tests/data/layout-faults/``, holds it on
fixed ones): a file of any game, in any layout ``dealer generate --layout`` makes (any number of cards a line,
a deck a line or decks run across lines, CR LF, no terminator, ragged), with one mutation at any line of its
cases, is read by both cores as the mutation says (``worker/testing/mutations.py``): its faults at the lines
it touched, as many as it says, and every case it did not touch kept, in order."""

from __future__ import annotations

from hypothesis import given, note, settings

from tests.support.layout_corpus import Fresh, mutants
from tests.support.readings import by_reader, cores


@settings(max_examples=150, deadline=None)
@given(fresh=mutants())
def test_a_mutation_at_any_line_of_any_generated_file_is_read_as_it_says(fresh: Fresh) -> None:
    note(repr(fresh))
    for engine in cores(fresh.game):
        by_reader(engine, fresh.mutant.data).holds_to(fresh.mutant.expected, fresh.shape.texts)
