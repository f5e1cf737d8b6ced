"""How many cases go into one solve task."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from worker import engines
from worker.config import Settings
from worker.jobs.states import JobStatus
from worker.store.models import Job

#: What a solve task aims to spend solving, and the bounds of its size in cases.
CHUNK_TARGET_US = 50_000
CHUNK_BOUNDS = (100, 5_000)


def chunk_size(settings: Settings, session: Session, game: str) -> int:
    """Cases per solve task for a new job: ``DEALER_CHUNK_SIZE`` when set, else as many as
    take about :data:`CHUNK_TARGET_US` to solve, by the game's last finished job (or the
    engine's typical time before it has one). A task costs a few milliseconds of
    transactions and messaging, small next to that, and is short enough for steady
    progress and a prompt cancel: hundreds of decks, thousands of mahjong hands.
    """
    if settings.chunk_size:
        return settings.chunk_size
    per_case: float = engines.get(game).typical_solve_us
    last = session.execute(
        select(Job.solve_us, Job.done - Job.cache_hits)
        .where(Job.game == game, Job.status == JobStatus.SUCCEEDED, Job.done - Job.cache_hits >= 1000)
        .order_by(Job.id.desc()).limit(1)).first()
    if last is not None:
        per_case = last[0] / last[1]
    low, high = CHUNK_BOUNDS
    return max(low, min(high, round(CHUNK_TARGET_US / max(per_case, 1.0))))
