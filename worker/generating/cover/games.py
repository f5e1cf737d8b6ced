"""What each game's ``--cover`` file holds: its cases, each with what it is there for and how
it is written, in order.

The cases are the statements' samples, the extremes and rare moves found by :mod:`.search`
(:mod:`.found`), hands built for every kind of wait, and the cases that catch state carried
over from one case to the next: a deck repeated at once and later, and (10-20-30) two
different decks whose games pass through one state. Forms (:mod:`.forms`) go round, so
that every layout the statement allows appears, around every kind of case.
"""

from __future__ import annotations

from dataclasses import dataclass

from worker.generating.cover.forms import DECK_FORMS, HAND_FORMS
from worker.generating.cover.found import FOUND


@dataclass(frozen=True)
class Entry:
    """A case of a cover file: what it is there for, its text (a deck's canonical text, a hand's
    tiles in the order written) and the name of its form."""

    purpose: str
    text: str
    form: str


TEN_TWENTY_THIRTY_SAMPLE = (
    ("the statement's first sample (a win)",
     "2 6 5 10 10 4 10 10 10 4 5 10 4 5 10 9 7 6 1 7 6 9 5 3 10 10 4 10 9 2 1 10 1 10 10 10 3 10 9 8 10 8 7 1 2 "
     "8 6 7 3 3 8 2"),
    ("the statement's second sample (a loss)",
     "4 3 2 10 8 10 6 8 9 5 8 10 5 3 5 4 6 9 9 1 7 6 3 5 10 10 8 10 9 10 10 7 2 6 10 10 4 10 1 3 10 1 1 10 2 2 "
     "10 4 10 7 7 10"),
    ("the statement's third sample (a draw)",
     "10 5 4 3 5 7 10 8 2 3 9 10 8 4 5 1 7 6 7 2 6 9 10 2 3 10 3 4 4 9 10 1 1 10 5 10 10 1 8 10 7 8 10 6 10 10 "
     "10 9 6 2 10 10"),
)
ACCORDION_SAMPLE = (
    ("the statement's first sample",
     "QD AD 8H 5S 3H 5H TC 4D JH KS 6H 8S JS AC AS 8D 2H QS TS 3S AH 4H TH TD 3C 6S 8C 7D 4C 4S 7S 9H 7C 5D 2S KD "
     "2D QH JD 6D 9D JC 2C KH 3D QC 6C 9S KC 7H 9C 5C"),
    ("the statement's second sample (one pile: \"1 pile\", not \"1 piles\")",
     "AC 2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AD 2D 3D 4D 5D 6D 7D 8D TD 9D JD QD KD AH 2H 3H 4H 5H 6H 7H 8H 9H "
     "KH 6S QH TH AS 2S 3S 4S 5S JH 7S 8S 9S TS JS QS KS"),
)
#: Mahjong hands, each written as it stands (the tiles in this order).
HANDS = (
    ("the statement's first sample", "1S 1S 2S 2S 2S 3S 3S 3S 7S 8S 9S FA FA"),
    ("the statement's second sample (not ready)", "1S 2S 3S 4S 5S 6S 7S 8S 9S 1T 3T 5T 7T"),
    ("nine gates: all nine tiles of a suit", "1W 1W 1W 2W 3W 4W 5W 6W 7W 8W 9W 9W 9W"),
    ("an open wait (either end of a chow)", "4T 5T 1S 2S 3S 7W 8W 9W DONG DONG DONG 6S 6S"),
    ("an edge wait on 3", "1T 2T 1S 2S 3S 7W 8W 9W DONG DONG DONG 6S 6S"),
    ("an edge wait on 7", "8T 9T 1S 2S 3S 7W 8W 9W NAN NAN NAN 6S 6S"),
    ("a closed wait (the middle of a chow)", "4T 6T 1S 2S 3S 7W 8W 9W XI XI XI 6S 6S"),
    ("a wait on either of two pairs", "2T 2T 5S 5S 1W 2W 3W 7W 8W 9W BEI BEI BEI"),
    ("a single wait for the eye", "5T 1S 2S 3S 7W 8W 9W ZHONG ZHONG ZHONG 4W 5W 6W"),
    ("a single wait on an honour", "ZHONG 1S 2S 3S 7W 8W 9W 4T 5T 6T 4W 5W 6W"),
    ("a wait on either of two honour pairs (ZHONG FA BAI order)", "BAI BAI FA FA 1S 2S 3S 7W 8W 9W 4T 5T 6T"),
    ("three sides of one run (1-4-7)", "2T 3T 4T 5T 6T 1S 2S 3S 7W 8W 9W FA FA"),
    ("four in hand: a fifth copy is never waited for", "2T 2T 2T 2T 3T 4T 1S 2S 3S 7W 8W 9W 5T"),
    ("four in hand split into a pong and a chow", "3T 3T 3T 3T 4T 5T 1S 2S 3S 7W 8W 9W 9W"),
    ("four in hand among many waits", "2T 2T 2T 2T 3T 4T 5T 6T 7T 8T 9T 9T 9T"),
    ("a chow never wraps: 9 1 2 is none", "9T 1T 1S 2S 3S 7W 8W 9W FA FA FA 5S 5S"),
    ("honours make no chow", "DONG NAN XI 1S 2S 3S 7W 8W 9W 4T 5T 6T 9S"),
    ("seven pairs less one: no hand here", "1T 1T 3T 3T 5S 5S 7S 7S 2W 2W 9W 9W DONG"),
    ("thirteen orphans: no hand here", "1T 9T 1S 9S 1W 9W DONG NAN XI BEI ZHONG FA BAI"),
    ("honours only", "DONG DONG DONG NAN NAN NAN XI XI XI BEI BEI ZHONG ZHONG"),
    ("the tiles in no order", "FA 8S 2S 3S 1S FA 7S 2S 3S 9S 1S 2S 3S"),
    ("a wait on a suit tile or an honour (suits first)", "FA FA 7W 7W 1S 2S 3S 4T 5T 6T 7S 8S 9S"),
)


def ten_twenty_thirty() -> list[Entry]:
    found = dict(FOUND["10-20-30"])
    first = found.pop("a deck whose game passes through a state of the next deck's")
    second = found.pop("the next deck")
    cases = list(TEN_TWENTY_THIRTY_SAMPLE)
    for purpose, text in _by_deck(found):
        cases.append((purpose, text))
        if purpose.startswith("a draw in the fewest deals"):
            cases.append(("the deck before, again (a repeat is no draw: seen states belong to one game)", text))
    cases += [("a deck whose game passes through a state of the next deck's game", first),
              ("a different deck whose game passes through that state", second),
              ("the statement's first sample again, later in the file", TEN_TWENTY_THIRTY_SAMPLE[0][1])]
    return _decks(cases)


def accordion() -> list[Entry]:
    cases = list(ACCORDION_SAMPLE) + _by_deck(FOUND["accordion"])
    cases.append(("the deck before, again", cases[-1][1]))
    cases.append(("the statement's first sample again, later in the file", ACCORDION_SAMPLE[0][1]))
    return _decks(cases)


def mahjong() -> list[Entry]:
    forms = list(HAND_FORMS)
    entries = [Entry(purpose, text, forms[k % len(forms)]) for k, (purpose, text) in enumerate(HANDS)]
    entries.append(Entry("the hand before, again (counts start afresh)", HANDS[-1][1], forms[0]))
    return entries


def _by_deck(found: dict[str, str]) -> list[tuple[str, str]]:
    """The found decks, each once, with every purpose it was found for."""
    purposes: dict[str, list[str]] = {}
    for purpose, text in found.items():
        purposes.setdefault(text, []).append(purpose)
    return [("; ".join(names), text) for text, names in purposes.items()]


def _decks(cases: list[tuple[str, str]]) -> list[Entry]:
    forms = list(DECK_FORMS)
    return [Entry(purpose, text, forms[k % len(forms)]) for k, (purpose, text) in enumerate(cases)]


ENTRIES = {"10-20-30": ten_twenty_thirty, "accordion": accordion, "mahjong": mahjong}
