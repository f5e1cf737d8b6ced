"""The judge reads a deck file's cards as one stream, whatever its lines: any generated file laid out anew
(lines split and joined, blank lines and gaps added or taken out) is a good judge file, and the layout reader
(:mod:`worker.engines.layout`) reads it as the game's stream reader does, with no fault, on both cores,
whole and in blocks."""

from __future__ import annotations

import io

from hypothesis import given, note, settings

from tests.support.layout_corpus import Relaid, relaid
from tests.support.readings import by_blocks, cores
from worker.engines.engine import Engine
from worker.engines.reading import Diagnostic, Faults, Reading


def read(engine: Engine, data: bytes, stream: bool) -> tuple[list[tuple[int, str, int, int]], list[str], list[str]]:
    """The cases (place, text, line, column), faults and warnings of ``data``: through the layout reader, or
    (``stream``) through the game's stream reader alone."""
    faults, warnings = Faults(), list[Diagnostic]()
    if stream:
        reader = engine.judge_file.reader
        assert reader is not None
        cases = reader(io.BytesIO(data), Reading(engine.terminator, engine.unit, warnings, faults))
    else:
        cases = engine.parse(io.BytesIO(data), warnings, faults)
    return ([(case.index, case.text, case.line, case.column) for case in cases],
            [str(fault) for fault in faults.first], [str(warning) for warning in warnings])


@settings(max_examples=200, deadline=None)
@given(file=relaid())
def test_a_file_laid_out_anew_reads_as_the_stream_does(file: Relaid) -> None:
    note(repr(file))
    pure, *_ = engines = cores(file.game)
    stream = read(pure, file.data, stream=True)
    assert not stream[1], stream[1]  # (the file is good)
    for engine in engines:
        assert read(engine, file.data, stream=False) == stream, engine.core_name
        blocks = by_blocks(engine, file.data, 7)
        assert (blocks.count, [text for _, text in blocks.kept]) == (0, [text for _, text, _, _ in stream[0]])
