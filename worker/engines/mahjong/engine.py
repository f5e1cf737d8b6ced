"""The mahjong engine: reading, solving and tracing behind :class:`Engine`."""

from __future__ import annotations

import random
from typing import Any

from worker.engines import native
from worker.engines.engine import Engine, JudgeFile
from worker.engines.mahjong.read import TERMINATOR, UNIT, counts_of, read_hands
from worker.engines.mahjong.solve import line_of, make_solver
from worker.engines.mahjong.tiles import HAND_SIZE, KIND, KIND_BYTES, MAX_COPIES, SUITS, TILES
from worker.engines.mahjong.trace import check_proof, reference_waits
from worker.engines.reading import Case, InputError
from worker.engines.results import Fields, JudgeLines, Result, TraceError


class MahjongLines(JudgeLines):
    """A line numbers its case; a ready hand's waits are known tiles, each once, in the judge's order."""

    def make(self, index: int, outcome: str, number: int, detail: list[Any]) -> str:
        return line_of(index, detail if outcome == "ready" else ())

    def fields(self, index: int, line: str, extra: int) -> Fields | None:
        said = line.partition(": ")[2]
        if said == "Not ready":
            return "not-ready", 0, []
        waits = said.split(" ")
        kinds = [KIND.get(tile, -1) for tile in waits]
        if min(kinds) < 0 or kinds != sorted(set(kinds)):
            return None
        return "ready", len(waits), waits


class MahjongEngine(Engine):
    """UVa 11210 Chinese Mahjong: the tiles a hand of thirteen waits for."""

    slug = "mahjong"
    title = "Chinese Mahjong (UVa 11210)"
    summary = "Thirteen tiles in hand: list every tile that completes it into an eye and four melds."
    number_name = "waits"
    input_help = "13 tiles like `1T 2T DONG` per line; a `0` ends the file."
    number_help = "How many different tiles each hand waits for."
    detail_label = "Waiting tiles"
    outcomes = ("ready", "not-ready")
    judge_file = JudgeFile(UNIT, TERMINATOR, read_hands)
    Lines = MahjongLines
    case_bytes = 41

    def _solve_in_python(self, case: Case, trace: bool) -> Result:
        """The waited tiles of a hand, with ``trace`` a proof of each (an eye and four melds); what is
        wrong with a hand the core leaves (not 13 known tiles, at most four of a kind)."""
        return make_solver()(case, trace)

    def replay(self, text: str, trace: dict[str, Any]) -> Result:
        """Check every proof of a trace, and that they cover exactly the waited tiles, found again by
        a plain search. The line is numbered 1 (a trace does not know its case's)."""
        try:
            counts = counts_of(text)
        except InputError as error:
            raise TraceError(f"the hand cannot be replayed: {error}") from None
        if not isinstance(trace, dict) or trace.get("version") != 1:
            raise TraceError("not a mahjong trace of version 1")
        proofs = trace.get("proofs")
        if not isinstance(proofs, list) or not all(isinstance(p, str) for p in proofs):
            raise TraceError('"proofs" must be a list of strings')
        proved = [check_proof(counts, proof) for proof in proofs]
        expected = [TILES[kind] for kind in reference_waits(counts)]
        if proved != expected:
            raise TraceError(f"the hand waits for {' '.join(expected) or 'nothing'}, "
                             f"the trace proves {' '.join(proved) or 'nothing'}")
        outcome = "ready" if proved else "not-ready"
        return Result(outcome, len(proved), proved, line_of(1, proved), trace)

    def generate(self, rng: random.Random) -> str:
        """A hand of 13 tiles in random order: drawn from the 136 tiles (two in five, rarely
        ready), a winning hand less a tile (three in ten) or drawn from one suit (many waits)."""
        roll = rng.random()
        if roll < 0.4:
            tiles = rng.sample(_WALL, HAND_SIZE)
        elif roll < 0.7:
            tiles = _winning_hand(rng)
            del tiles[rng.randrange(len(tiles))]
        else:
            suit = rng.choice(SUITS)
            tiles = rng.sample([tile for tile in _WALL if tile[1:] == suit], HAND_SIZE)
        rng.shuffle(tiles)
        return " ".join(tiles)

    def sniff(self, head: bytes) -> bool:
        """Whether a file starts with lines of 13 mahjong tiles (the first perhaps cut short)."""
        lines = head.splitlines()
        if lines and not head.endswith((b"\n", b"\r")):
            tokens = lines.pop().split()  # perhaps cut short
            if not any(line.strip() for line in lines):  # the first line
                tokens = tokens[:-1]
                return bool(tokens) and len(tokens) < HAND_SIZE and all(t in KIND_BYTES for t in tokens)
        hands = 0
        for line in lines:
            tokens = line.split()
            if not tokens:
                continue
            if tokens[0] == b"0":
                break
            if len(tokens) != HAND_SIZE or not all(t in KIND_BYTES for t in tokens):
                return False
            hands += 1
        return hands > 0


_WALL: list[str] = [tile for tile in TILES for _ in range(MAX_COPIES)]


def _winning_hand(rng: random.Random) -> list[str]:
    """Fourteen tiles that win: an eye and four random melds, at most four of a kind."""
    while True:
        counts = [0] * len(TILES)
        counts[rng.randrange(len(TILES))] += 2
        for _ in range(4):
            if rng.random() < 0.5:
                start = 9 * rng.randrange(3) + rng.randrange(7)
                for k in (start, start + 1, start + 2):
                    counts[k] += 1
            else:
                counts[rng.randrange(len(TILES))] += 3
        if max(counts) <= MAX_COPIES:
            return [TILES[kind] for kind, count in enumerate(counts) for _ in range(count)]


ENGINE = MahjongEngine(native.load("worker.engines.mahjong"))
