"""The rule of layout faults on any generated file (the corpus, ``tests/data/layout-faults/``, holds it on
fixed ones): a file of any game, in any layout ``dealer generate --layout`` makes (any number of cards a line,
a deck a line or decks run across lines, CR LF, no terminator, ragged), with one mutation at any line of its
cases, is read by both cores as the mutation says (``worker/testing/mutations.py``): its faults at the lines
it touched, as many as it says, and every case it did not touch kept, in order; the split's reading, in
blocks, gives the same."""

from __future__ import annotations

import pytest
from hypothesis import example, given, note, settings

from tests.support.layout_corpus import Fresh, made, mutants
from tests.support.readings import by_blocks, by_reader, cores


@pytest.mark.slow  # 3 CPU-seconds: its 300 examples find failures that come a few in a thousand
@settings(max_examples=300, deadline=None)
@given(fresh=mutants())
# Found by random trials: a line split or doubled in a flow layout of many cards a line.
@example(fresh=made("10-20-30", 28, 2584503404, "flow,per-line=43", "doubled-line", 34))
@example(fresh=made("accordion", 29, 3816350825, "flow,per-line=41", "split-line", 37))
# A 10-20-30 deck of a flow layout read good with a card that is not its own, of the same value: the deck before a
# doubled line read the copy's first card (the fault is the copy, the deck after it kept), near the end of the
# file too; a deck that lost a line reads back whole (it may be kept).
@example(fresh=made("10-20-30", 20, 1810, "flow,per-line=25", "doubled-line", 27))
@example(fresh=made("10-20-30", 20, 4, "flow,per-line=21", "doubled-line", 47))
@example(fresh=made("10-20-30", 21, 4, "flow,per-line=21", "doubled-line", 47))
@example(fresh=made("10-20-30", 20, 1, "flow,per-line=25", "missing-line", 28))
# A short line in flow, the take-up a line off (a card off) where two decks in a row read good by chance.
@example(fresh=made("10-20-30", 20, 121017, "flow,per-line=51", "short-line", 3))
def test_a_mutation_at_any_line_of_any_generated_file_is_read_as_it_says(fresh: Fresh) -> None:
    note(repr(fresh))
    for engine in cores(fresh.game):
        read = by_reader(engine, fresh.mutant.data)
        read.holds_to(fresh.mutant.expected, fresh.shape.texts)
        assert by_blocks(engine, fresh.mutant.data, 7) == read  # the split's reading: the same, in blocks
