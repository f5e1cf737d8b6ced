"""``--cover`` files: fixed, read back as written, cover every outcome, extreme and layout they
claim, run every rule branch a game can take, and catch every classic wrong solution."""

from __future__ import annotations

import io

import pytest

from tests.generating.mutants import MUTANTS, right
from worker import engines
from worker.engines.reading import Case, Diagnostic
from worker.generating.cover import cover_file, cover_text, entries
from worker.generating.cover.branches import measure
from worker.generating.cover.forms import DECK_FORMS, HAND_FORMS
from worker.generating.makers import TenTwentyThirtyMaker
from worker.generating.prng import Rng

GAMES = list(MUTANTS)


def solved(game: str) -> tuple[list[Case], list[str]]:
    engine = engines.get(game)
    warnings: list[Diagnostic] = []
    cases = list(engine.parse(io.BytesIO(cover_text(game)), warnings))
    assert warnings == []
    return cases, [engine.solve(case, False).line for case in cases]


@pytest.mark.parametrize("game", GAMES)
def test_the_file_is_fixed_small_and_reads_back_as_its_cases(game: str) -> None:
    data = cover_text(game)
    assert data == cover_text(game) and len(data) < 10_000
    cases, _ = solved(game)
    engine = engines.get(game)
    assert [case.text for case in cases] == [engine.canonical(entry.text) for entry in entries(game)]
    forms = HAND_FORMS if game == "mahjong" else DECK_FORMS
    assert {entry.form for entry in entries(game)} == set(forms)  # every layout appears


@pytest.mark.slow
@pytest.mark.parametrize("game", GAMES)
def test_every_rule_branch_is_run(game: str) -> None:
    for measured in measure(game, cover_text(game)):
        assert measured.total > 0
        assert measured.missing == (), measured


def test_a_second_pick_up_after_one_deal_never_takes_the_last_three() -> None:
    """A fact of the rules the move loop relies on, on 20,000 decks: a pick-up right after one deal never
    takes the pile's last three (they were checked when its top card was dealt)."""
    engine = engines.get("10-20-30")
    for text in TenTwentyThirtyMaker().random(Rng(27), 20_000):
        trace = engine.solve(Case(1, text), True).trace or {}
        at = 0
        for count in (int(char, 36) for char in trace["after"]):
            assert "c" not in trace["picks"][at + 1 : at + count]
            at += count


@pytest.mark.slow
@pytest.mark.parametrize("game", GAMES)
def test_every_classic_mistake_is_caught(game: str) -> None:
    cases, lines = solved(game)
    texts = [case.text for case in cases]
    assert right(game)(texts) == lines  # the plain solution the mistakes are made in is right
    make, mistakes = MUTANTS[game]
    for mistake in mistakes:
        assert make(mistake)(texts) != lines, mistake


def test_ten_twenty_thirty_covers_what_it_claims() -> None:
    cases, lines = solved("10-20-30")
    report = cover_file("10-20-30", io.BytesIO(), branches=False)
    facts = "\n".join(report.facts)
    assert {line[:4] for line in lines} == {"Win ", "Loss", "Draw"}
    assert "state carried over: case 10 repeats case 9" in facts
    assert "cases 15 and 16 are different decks that pass through one state" in facts
    assert "pick-ups: first two + last" in facts and "last three" in facts
    assert max(int(line[5:]) for line in lines) > 1000 and min(int(line[5:]) for line in lines if line[0] == "W") < 30


def test_accordion_covers_one_pile_the_most_piles_and_both_moves() -> None:
    _, lines = solved("accordion")
    piles = {int(line.split()[0]) for line in lines}
    assert {1, 2, 52} <= piles
    report = cover_file("accordion", io.BytesIO(), branches=False)
    assert any(fact.startswith("moves: onto the pile 1 to the left") for fact in report.facts)


def test_mahjong_covers_every_kind_of_wait() -> None:
    _, lines = solved("mahjong")
    waits = [line.split(": ", 1)[1].split() for line in lines]
    assert max(len(w) for w in waits) == 9 and ["Not", "ready"] in waits
    assert any(set(w) & {"DONG", "NAN", "XI", "BEI", "ZHONG", "FA", "BAI"} for w in waits)
    assert {len(w) for w in waits if w != ["Not", "ready"]} >= {1, 2, 3, 5, 9}


def test_the_report_says_what_each_case_is_for_and_what_is_covered() -> None:
    out = io.BytesIO()
    text = cover_file("mahjong", out).text()
    assert out.getvalue() == cover_text("mahjong")
    assert "   3  nine gates: all nine tiles of a suit [runs of blanks, leading and trailing]: Case 3: 1W 2W" in text
    assert "mahjong/solve.py: 20 of 20 branches, 100.0 %" in text


def test_without_coverage_the_report_says_the_branches_are_not_measured(monkeypatch: pytest.MonkeyPatch) -> None:
    from worker.generating.cover import report

    monkeypatch.setattr(report, "find_spec", lambda name: None)
    text = cover_file("accordion", io.BytesIO()).text()
    assert "rule branches: not measured (install coverage: pip install 'dealer[test]')" in text
