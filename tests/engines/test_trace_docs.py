"""The guide's trace formats (docs/traces.md) agree with the engines: each example is the trace the
engine gives its sample, and replays to the sample's result."""

from __future__ import annotations

import re

import orjson
import pytest

from tests.support.paths import ROOT
from worker import engines
from worker.engines import Case

EXAMPLE = re.compile(r"<!-- trace (\S+) -->\n```text\n(.*?)\n```\n```json\n(.*?)\n```", re.S)


def examples() -> dict[str, tuple[str, str]]:
    page = (ROOT / "docs/traces.md").read_text()
    return {slug: (text, trace) for slug, text, trace in EXAMPLE.findall(page)}


def test_every_game_has_an_example() -> None:
    assert sorted(examples()) == engines.names()


@pytest.mark.parametrize("slug", engines.names())
def test_the_example_is_the_engine_s_trace(slug: str) -> None:
    engine = engines.get(slug)
    text, written = examples()[slug]
    result = engine.solve(Case(1, text))
    assert result.trace == orjson.loads(written)
    assert result.trace["version"] == engine.traces.version
    assert engine.replay(text, result.trace).line == result.line
