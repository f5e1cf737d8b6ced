"""How many cases go into one solve task."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from worker import engines
from worker.config import Settings
from worker.states import JobStatus
from worker.store.models import Job

#: What a solve task aims to spend solving, and the bounds of its size in cases. A task's own cost
#: (its message, two transactions, the job's figures) is a few milliseconds of CPU across the
#: worker and the database: at 150 ms of solving it is a small part, and a cancel still takes
#: effect within a second.
CHUNK_TARGET_US = 150_000
CHUNK_BOUNDS = (100, 20_000)


def chunk_size(settings: Settings, session: Session, game: str) -> int:
    """Cases per solve task for a new job: ``DEALER_CHUNK_SIZE`` when set, else as many as
    take about :data:`CHUNK_TARGET_US` to solve, by the game's last finished job (or the
    engine's typical time before it has one): about 1,500 decks, 12,500 mahjong hands.

    The pace is the CPU time the solving loops took, not the time on the clock: a
    machine busy with other work when the last job ran must not make chunks tiny.
    """
    if settings.chunk_size:
        return settings.chunk_size
    per_case: float = engines.get(game).typical_solve_us
    last = session.execute(
        select(Job.solve_cpu_us, Job.done - Job.cache_hits)
        .where(Job.game == game, Job.status == JobStatus.SUCCEEDED, Job.done - Job.cache_hits >= 1000,
               Job.solve_cpu_us > 0)
        .order_by(Job.id.desc()).limit(1)).first()
    if last is not None:
        per_case = last[0] / last[1]
    low, high = CHUNK_BOUNDS
    return max(low, min(high, round(CHUNK_TARGET_US / max(per_case, 1.0))))
