"""The report of a ``--cover`` file: each case's answer and purpose, then what the file covers,
worked out from the file itself by solving it (and, where ``coverage`` is installed, the
rule branches it runs on the pure-Python engine, see :mod:`.branches`)."""

from __future__ import annotations

import io
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib.util import find_spec
from itertools import combinations

from worker import engines
from worker.engines.reading import Case
from worker.engines.results import Result
from worker.generating.cover.branches import Branches, measure
from worker.generating.cover.games import Entry


@dataclass
class Report:
    """What a cover file holds: its cases with their answers, facts, and rule branches run."""

    game: str
    size: int
    cases: list[tuple[Entry, Result]]
    facts: list[str] = field(default_factory=list)
    #: The rule branches run (``None``: not measured, ``coverage`` not installed).
    branches: list[Branches] | None = None

    def text(self) -> str:
        unit = engines.get(self.game).unit
        lines = [f"{self.game} cover file: {len(self.cases)} {unit}s, {self.size:,} bytes", ""]
        for k, (entry, result) in enumerate(self.cases, 1):
            lines.append(f"{k:>4}  {entry.purpose} [{entry.form}]: {result.line}")
        lines += ["", "What it covers:"]
        lines += [f"  {fact}" for fact in self.facts]
        if self.branches is None:
            lines.append("  rule branches: not measured (install coverage: pip install 'dealer[test]')")
        else:
            lines.append("  rule branches run on the pure-Python engine (coverage.py):")
            for measured in self.branches:
                lines.append(f"    {measured}")
        return "\n".join(lines) + "\n"


def report_of(game: str, data: bytes, entries: list[Entry], branches: bool = True) -> Report:
    """What the cover file ``data`` of ``game`` (whose cases are ``entries``) covers."""
    engine = engines.get(game)
    cases = list(engine.parse(io.BytesIO(data), []))
    results = [engine.solve(case, True) for case in cases]
    made = Report(game, len(data), list(zip(entries, results, strict=True)))
    made.facts = list(_FACTS[game](cases, results))
    made.facts += _repeats(cases)
    made.facts.append(f"layouts: {len({entry.form for entry in entries})} ({'; '.join(dict.fromkeys(e.form for e in entries))})")
    if branches and find_spec("coverage") is not None:
        made.branches = measure(game, data)
    return made


def _repeats(cases: list[Case]) -> Iterator[str]:
    first: dict[str, int] = {}
    for case in cases:
        if case.text in first:
            yield f"state carried over: case {case.index} repeats case {first[case.text]}"
        first.setdefault(case.text, case.index)


def _extremes(results: list[Result], outcome: str | None, name: str) -> str:
    """The fewest and most of ``Result.number`` among the results of ``outcome`` (any: ``None``)."""
    chosen = [(r.number, k) for k, r in enumerate(results, 1) if outcome is None or r.outcome == outcome]
    (low, at_low), (high, at_high) = min(chosen), max(chosen)
    return f"{name}: fewest {low} (case {at_low}), most {high} (case {at_high})"


def _ten_twenty_thirty(cases: list[Case], results: list[Result]) -> Iterator[str]:
    outcomes = Counter(r.outcome for r in results)
    yield "outcomes: " + ", ".join(f"{o} {outcomes[o]}" for o in ("win", "loss", "draw"))
    for outcome in ("win", "loss", "draw"):
        yield _extremes(results, outcome, f"deals of a {outcome}")
    cycle, at = max((r.number - r.detail[0], k) for k, r in enumerate(results, 1) if r.outcome == "draw")
    yield f"the longest cycle before a draw: {cycle} deals (case {at}, {results[at - 1].line})"
    soon, at = min((r.detail[0], k) for k, r in enumerate(results, 1) if r.outcome == "draw")
    yield f"the soonest first sighting of a draw's state: after deal {soon} (case {at})"
    picks: Counter[str] = Counter()
    again: Counter[str] = Counter()
    most = (0, 0)
    for k, result in enumerate(results, 1):
        trace = result.trace or {}
        letters, at = trace["picks"], 0
        for char in trace["after"]:
            count = int(char, 36)
            picks.update(letters[at : at + count])
            again.update(letters[at + 1 : at + count])
            most = max(most, (count, k))
            at += count
    names = {"a": "first two + last", "b": "first + last two", "c": "last three"}
    yield "pick-ups: " + ", ".join(f"{names[c]} {picks[c]:,}" for c in "abc")
    yield ("a second pick-up after the same deal: " + ", ".join(f"{names[c]} {again[c]:,}" for c in "ab")
           + f"; the most after one deal: {most[0]} (case {most[1]})")
    yield from _shared_states(cases)


def _shared_states(cases: list[Case]) -> Iterator[str]:
    """Different decks whose games pass through one state (a solution that keeps its seen
    states from one deck to the next calls the second a draw)."""
    states = [_states(case.text) for case in cases]
    for (i, mine), (j, theirs) in combinations(enumerate(states), 2):
        common = mine.keys() & theirs.keys()
        if common and cases[i].text != cases[j].text:
            state = min(common, key=mine.__getitem__)
            yield (f"state carried over: cases {i + 1} and {j + 1} are different decks that pass through one "
                   f"state (after deals {mine[state]} and {theirs[state]})")


def _states(text: str) -> dict[bytes, int]:
    """Each state of a 10-20-30 game, from the seventh deal on, and the deal it first follows."""
    from worker.engines.ten_twenty_thirty.read import residues
    from worker.engines.ten_twenty_thirty.rules import STATE_SEP, Game

    game = Game(residues(text))
    states: dict[bytes, int] = {}
    for dealt, _ in enumerate(game.deals(), 1):
        if dealt >= 7:
            states.setdefault(STATE_SEP.join((*game.piles, game.cards[dealt:])), dealt)
    return states


def _accordion(cases: list[Case], results: list[Result]) -> Iterator[str]:
    yield _extremes(results, None, "piles left")
    plays = [(r.trace or {})["play"] for r in results]
    yield f"moves: onto the pile 1 to the left {sum(p.count('1') for p in plays):,}, 3 to the left " \
          f"{sum(p.count('3') for p in plays):,}"
    chain, at = max((max(len(run) // 2 for run in play.split("+")), k) for k, play in enumerate(plays, 1))
    yield f"the most moves after one deal: {chain} (case {at})"


def _mahjong(cases: list[Case], results: list[Result]) -> Iterator[str]:
    outcomes = Counter(r.outcome for r in results)
    yield f"outcomes: ready {outcomes['ready']}, not-ready {outcomes['not-ready']}"
    yield _extremes(results, "ready", "tiles waited for by a ready hand")
    waited = {tile for r in results for tile in r.detail}
    yield f"tiles waited for: {len(waited)} of 34 kinds"
    yield f"hands with four of a kind: {sum(max(Counter(c.text.split()).values()) == 4 for c in cases)}"


_FACTS = {"10-20-30": _ten_twenty_thirty, "accordion": _accordion, "mahjong": _mahjong}
