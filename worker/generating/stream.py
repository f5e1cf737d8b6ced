"""Making a judge file to order, streamed: :func:`generate` is what ``dealer generate`` (and
a service) calls.

A file is made in blocks of :data:`BLOCK` cases, each from its own stream of random
numbers (:meth:`.prng.Rng.of_block`): block by block in this process, or on a pool of
processes (``jobs``), always written in order. So a file depends only on its
:class:`Plan` (the game, the number of cases, the seed, the mix, the layout), never on
the core, the processes or the machine, and memory stays that of a few blocks whatever
the number of cases.

With a mix, the file's count of each bucket is fixed first (largest remainders, see
:mod:`.mix`), then shared out among the blocks the same way; a block finds its cases by
:func:`.search.fill` and puts them in a random order. Without one, a block is just random
cases (:meth:`.makers.Maker.random`): nothing is solved.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from multiprocessing.pool import AsyncResult
from typing import BinaryIO

from worker import engines
from worker.generating.deal import core
from worker.generating.errors import GenerateError
from worker.generating.layout import Layout, parse_layout
from worker.generating.makers import Maker, maker
from worker.generating.mix import Mix, apportion, parse_mix
from worker.generating.prng import M64, Rng
from worker.generating.search import fill

#: Cases a block holds.
BLOCK = 10_000
#: The most cases a file may hold (a 10-20-30 file of this many decks is about 15 GB).
MAX_CASES = 100_000_000

#: Told how many cases of the file are made (written, or found within the block being
#: made), and how many that is of.
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Plan:
    """Everything a generated file's bytes depend on."""

    game: str
    cases: int
    seed: int
    mix: Mix | None = None
    layout: Layout = Layout()
    honours: bool = True

    @property
    def maker(self) -> Maker:
        return maker(self.game, self.honours)


@dataclass(frozen=True)
class Summary:
    """What :func:`generate` made: the plan, and how many cases of each bucket of its mix."""

    plan: Plan
    counts: dict[str, int]

    def text(self) -> str:
        """The report of what the file holds (``dealer generate --report``).

        >>> print(Summary(Plan("10-20-30", 3, 7), {}).text(), end="")
        10-20-30: 3 decks, seed 7, random
        """
        made = self.plan
        unit = engines.get(made.game).unit
        what = [f"{made.game}: {made.cases:,} {unit}s", f"seed {made.seed}"]
        what.append(f"mix {made.mix}" if made.mix else "random")
        if str(made.layout):
            what.append(f"layout {made.layout}")
        if not made.honours:
            what.append("no honours")
        lines = [", ".join(what)]
        lines += [f"  {label}: {count:,}" for label, count in self.counts.items()]
        return "\n".join(lines) + "\n"


def plan(game: str, cases: int, seed: int, mix: str | None = None, layout: str | None = None,
         honours: bool = True) -> Plan:
    """A checked :class:`Plan` from what a user gives; :class:`GenerateError` says what is wrong."""
    game = engines.check(game)
    if not 1 <= cases <= MAX_CASES:
        raise GenerateError(f"a file holds 1 to {MAX_CASES:,} cases, not {cases:,}", "cases")
    if not 0 <= seed <= M64:
        raise GenerateError(f"a seed is a number from 0 to 2**64 - 1, not {seed}", "seed")
    if not honours and game != "mahjong":
        raise GenerateError(f"only mahjong hands have honours to leave out, not {game}'s", "honours")
    made = maker(game, honours)
    try:
        parsed_mix = None if mix is None else parse_mix(made, mix)
    except GenerateError as error:
        raise GenerateError(error.message, "mix") from None
    try:
        parsed_layout = Layout() if layout is None else parse_layout(made, layout)
    except GenerateError as error:
        raise GenerateError(error.message, "layout") from None
    return Plan(game, cases, seed, parsed_mix, parsed_layout, honours)


def generate(plan: Plan, out: BinaryIO, *, jobs: int = 1, progress: Progress | None = None) -> Summary:
    """Write the judge file of ``plan`` to ``out``, a binary file object, block by block.

    ``jobs`` processes make the blocks of a mix (the file is the same for any number). ``progress``
    is told ``(cases made, plan.cases)`` after each block, and with one process after each
    round of a block's search too.
    """
    quotas = list(_quotas(plan))
    blocks = _blocks(plan, quotas, jobs, progress)
    done = 0
    for number, data in enumerate(blocks):
        done += _size(plan, number)
        out.write(data)
        if progress is not None:
            progress(done, plan.cases)
    counts = {} if plan.mix is None else {bucket.label: sum(q[i] for q in quotas)
                                          for i, bucket in enumerate(plan.mix.buckets)}
    return Summary(plan, counts)


def _size(plan: Plan, number: int) -> int:
    return min(BLOCK, plan.cases - number * BLOCK)


def _quotas(plan: Plan) -> Iterator[list[int]]:
    """Each block's count of each bucket (nothing without a mix)."""
    count = -(-plan.cases // BLOCK)
    if plan.mix is None:
        yield from ([] for _ in range(count))
        return
    left = plan.mix.quotas(plan.cases)
    for number in range(count):
        block = apportion(_size(plan, number), left) if sum(left) else [0] * len(left)
        left = [have - take for have, take in zip(left, block, strict=True)]
        yield block


def _blocks(plan: Plan, quotas: list[list[int]], jobs: int, progress: Progress | None) -> Iterator[bytes]:
    """The blocks' bytes in order, made here or by ``jobs`` processes (a few blocks ahead).

    Random cases without a mix are drawn by the compiled core faster than a pool's pipes
    carry them (a million decks: 0.8 s here, 1.1 s on two processes), so they stay here."""
    if jobs <= 1 or len(quotas) == 1 or (plan.mix is None and core() is not None):
        for number, quota in enumerate(quotas):
            on_round = None
            if progress is not None:
                def on_round(found: int, tried: int, before: int = number * BLOCK) -> None:
                    progress(before + found, plan.cases)
            yield make_block(plan, number, quota, on_round)
        return
    import multiprocessing  # only --jobs needs it

    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        pending: deque[AsyncResult[bytes]] = deque()
        for number, quota in enumerate(quotas):
            pending.append(pool.apply_async(make_block, (plan, number, quota)))
            if len(pending) > 2 * jobs:
                yield pending.popleft().get()
        while pending:
            yield pending.popleft().get()


def make_block(plan: Plan, number: int, quota: list[int],
               on_round: Callable[[int, int], None] | None = None) -> bytes:
    """Block ``number`` of the file: its cases, laid out, and the file's end if it is the last."""
    made = plan.maker
    rng = Rng.of_block(plan.seed, number)
    size = _size(plan, number)
    if plan.mix is None:
        texts = made.random(rng, size)
    else:
        found = fill(made, plan.mix.buckets, quota, rng, _solver(made), on_round)
        order = [i for i, count in enumerate(quota) for _ in range(count)]
        rng.shuffle(order)
        taken = [iter(cases) for cases in found]
        texts = [next(taken[i]) for i in order]
    data = plan.layout.write(made, texts, rng, number * BLOCK)
    if (number + 1) * BLOCK >= plan.cases:
        data = plan.layout.end(made, data)
    return data


def _solver(made: Maker) -> Callable[[list[str]], list[int]]:
    engine = engines.get(made.slug)
    key, canonicals = made.key, made.canonicals

    def solve(texts: list[str]) -> list[int]:
        lines, _ = engine.solve_batch(canonicals(texts), 1, False)
        return [key(line) for line in lines.splitlines()]

    return solve


__all__ = ["BLOCK", "MAX_CASES", "GenerateError", "Plan", "Progress", "Summary", "generate", "make_block", "plan"]
