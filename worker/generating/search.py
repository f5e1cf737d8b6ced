"""Finding a block's cases for a mix: sample, solve, keep what fits; walk to the rare ones.

A block needs so many cases of each bucket of the mix (:mod:`.mix`). Cases are tried a
round of :data:`ROUND` at a time, solved together by the engine's batch call, and each
is kept by the bucket its key falls in, while that bucket still needs cases; the rest is
thrown away. Cases are kept in the order they were tried, so the block depends only on
its stream of random numbers, never on the core or the process that solved it.

Sampling alone would be slow where a bucket is rare (a random 10-20-30 deck draws 0.6 %
of the time, an accordion deck leaves 40 piles once in 200,000), so each round also
*walks*: it tries cases one small change away (:meth:`.makers.Maker.steps`) from
cases of the rare bucket found so far, which land in it far more often (a draw with two
cards swapped still draws one time in five). Where a bucket has no case yet and keys
are ordered (piles, waits), the walk starts from the cases whose keys came nearest, and
climbs. Where a bucket holds only a handful of cases (the mahjong hands that wait for 9
tiles are the three "nine gates"), steps rarely land in it again: once fewer than one
step in :data:`STRAY` has, and the game allows it, three walks in four write the cases
found in another way instead (a hand's tiles in another order). Half of a round (an eighth, once every bucket left is rare) is always sampled,
so the walks keep getting fresh starting points; a walk never keeps a deck the block
already holds.
"""

from __future__ import annotations

from collections.abc import Callable

from worker.generating.makers import Maker
from worker.generating.errors import GenerateError
from worker.generating.mix import Bucket
from worker.generating.prng import Rng

#: Cases tried at a time.
ROUND = 1024
#: Cases of a bucket kept to walk from, and cases nearest to it before it has any.
WALKERS = 64
NEAREST = 16
#: A bucket whose walks land in it less often than once in this many steps (after
#: :data:`ROUND` steps) is walked by variants where the game has them.
STRAY = 64
#: Rounds in a row without a new case for a bucket still in need before giving up.
PATIENCE = 2_000

#: Solves cases (their texts, as :meth:`Maker.random` writes them) into their keys.
Solver = Callable[[list[str]], list[int]]


class _Target:
    """One bucket's search."""

    __slots__ = ("bucket", "found", "idle", "near", "need", "sampled_hits", "stepped", "stepped_hits", "walked",
                 "walked_hits", "walkers")

    def __init__(self, bucket: Bucket, need: int) -> None:
        self.bucket = bucket
        self.need = need
        self.found: list[str] = []
        self.walkers: list[str] = []
        self.near: list[tuple[int, str]] = []  # (distance, text), nearest first
        self.sampled_hits = 0
        self.walked = self.walked_hits = 0
        self.stepped = self.stepped_hits = 0  # the walks that changed the case (not variants)
        self.idle = 0  # rounds since the last case found

    def starts(self) -> list[str]:
        return self.walkers or [text for _, text in self.near]


def fill(maker: Maker, buckets: tuple[Bucket, ...], quotas: list[int], rng: Rng, solve: Solver,
         on_round: Callable[[int, int], None] | None = None) -> list[list[str]]:
    """``quotas[i]`` cases of each bucket ``buckets[i]``, in the order found.

    ``on_round(found, tried)`` is told after each round how many cases are found and tried.
    """
    targets = [_Target(bucket, need) for bucket, need in zip(buckets, quotas, strict=True)]
    where = {key: target for target in targets for key in range(target.bucket.low, target.bucket.high + 1)}
    taken: set[str] | None = set() if maker.distinct else None
    sampled = tried = found = 0
    while True:
        needy = [target for target in targets if target.need]
        if not needy:
            return [target.found for target in targets]
        walks = _walks(needy, sampled)
        candidates, steps = _walk(maker, walks, rng)
        walked = len(candidates)
        candidates += maker.random(rng, ROUND - walked)
        sampled += ROUND - walked
        keys = solve(candidates)
        tried += ROUND
        _count_walks(walks, steps, keys)
        before = [target.need for target in needy]
        found += _sort(maker, candidates, keys, walked, where, needy, taken, rng)
        _check_patience(needy, before)
        if on_round is not None:
            on_round(found, tried)


def _sort(maker: Maker, candidates: list[str], keys: list[int], walked: int, where: dict[int, _Target],
          needy: list[_Target], taken: set[str] | None, rng: Rng) -> int:
    """Take each of a round's cases its bucket still needs (``taken``: the cases taken, when they must be
    distinct), and keep those near the buckets wanted (for an ordered maker); how many were taken. The
    first ``walked`` cases came from walks, the rest from sampling."""
    found = 0
    for n, (text, key) in enumerate(zip(candidates, keys, strict=True)):
        target = where.get(key)
        if target is not None:
            target.sampled_hits += n >= walked
            if target.need and (taken is None or text not in taken):
                found += 1
                _take(target, text, rng)
                if taken is not None:
                    taken.add(text)
        if maker.ordered:
            for other in needy:
                if other.need and not other.walkers:
                    _keep_near(other, key, text)
    return found


def _check_patience(needy: list[_Target], before: list[int]) -> None:
    """Give up on a bucket that found no new case for :data:`PATIENCE` rounds (``before``: what each
    needed before this round)."""
    for target, need in zip(needy, before, strict=True):
        target.idle = 0 if target.need < need else target.idle + 1
        if target.idle >= PATIENCE:
            raise GenerateError(f"no new case for {target.bucket.label} in {PATIENCE * ROUND:,} tries: "
                                "too rare to generate")


def _walk(maker: Maker, walks: list[tuple[_Target, int]], rng: Rng) -> tuple[list[str], list[int]]:
    """The round's walking cases, and how many of each bucket's are steps (the rest variants)."""
    candidates: list[str] = []
    steps = []
    for target, count in walks:
        starts = target.starts()
        stepping = count
        if not maker.distinct and target.stepped >= ROUND and target.stepped_hits * STRAY < target.stepped:
            stepping = count // 4  # steps stray: keep a quarter, to find new cases still
        candidates += maker.steps(starts, rng, stepping)
        if stepping < count:
            candidates += maker.variants(starts, rng, count - stepping)
        target.walked += count
        steps.append(stepping)
    return candidates, steps


def _count_walks(walks: list[tuple[_Target, int]], steps: list[int], keys: list[int]) -> None:
    """Note how many of each bucket's walking cases (and of its steps) landed in it."""
    at = 0
    for (target, count), stepping in zip(walks, steps, strict=True):
        low, high = target.bucket.low, target.bucket.high
        stepped_hits = sum(low <= key <= high for key in keys[at : at + stepping])
        target.stepped += stepping
        target.stepped_hits += stepped_hits
        target.walked_hits += stepped_hits + sum(low <= key <= high for key in keys[at + stepping : at + count])
        at += count


def _take(target: _Target, text: str, rng: Rng) -> None:
    """Keep ``text`` for the bucket, and among the cases its walks start from."""
    target.found.append(text)
    target.need -= 1
    if len(target.walkers) < WALKERS:
        target.walkers.append(text)
    else:
        target.walkers[rng.below(WALKERS)] = text


def _walks(needy: list[_Target], sampled: int) -> list[tuple[_Target, int]]:
    """How many cases of the next round walk from each rare bucket's cases.

    A bucket is rare when sampling at the rate seen so far would not fill it within half
    a round. The walks go to the rare buckets that have a start, in proportion to the
    tries each needs (its need over the share of its walks that landed in it).
    """
    slow = []
    for target in needy:
        rate = (target.sampled_hits + 0.5) / (sampled + 1)
        if target.need > rate * ROUND / 2 and target.starts():
            slow.append(target)
    if not slow:
        return []
    budget = ROUND * 7 // 8 if len(slow) == len(needy) else ROUND // 2
    tries = [target.need * (target.walked + 2) / (target.walked_hits + 1) for target in slow]
    whole = sum(tries)
    walks = []
    for target, wanted in zip(slow, tries, strict=True):
        count = min(int(budget * wanted / whole), int(wanted) + 1)
        if count:
            walks.append((target, count))
    return walks


def _keep_near(target: _Target, key: int, text: str) -> None:
    """Keep ``text`` among the :data:`NEAREST` cases nearest to the bucket, nearest first and,
    among equals, newest first: so that on a plateau the walk drifts instead of circling."""
    near = target.near
    distance = target.bucket.distance(key)
    if len(near) == NEAREST and distance > near[-1][0]:
        return
    at = len(near)
    while at and near[at - 1][0] >= distance:
        at -= 1
    near.insert(at, (distance, text))
    del near[NEAREST:]
