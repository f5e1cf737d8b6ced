"""Running a check on a worker: the job's judge lines from its chunks and the output from its upload,
both streamed from the database, judged, and the verdicts stored part by part.

A plain function of (settings, check id), like the split and the solve: :mod:`worker.work`
runs it, for the Celery task and for the tests' dispatcher alike.
"""

from __future__ import annotations

from worker.checks import compare, lifecycle
from worker.checks.compare import Judge, OutputError, OutputLines, Part
from worker.config import Settings
from worker.store.chunks import judge_blocks
from worker.store.database import Database
from worker.store.uploads import UploadReader

#: Parts stored per transaction.
PARTS_PER_COMMIT = 8
#: Chunks of judge lines read per transaction.
CHUNKS_PER_READ = 64


def run_check(db: Database, settings: Settings, check_id: int) -> None:
    """Judge a pending check of a succeeded job and store what it came to (nothing when another run
    holds it or ended it, or its job has not ended)."""
    claimed = lifecycle.claim(db, check_id, settings.lease_seconds)
    if claimed is None:
        return
    attempt = claimed.attempt
    if claimed.upload_id is None:
        lifecycle.fail(db, check_id, attempt, "the output is no longer stored: send it again")
        return
    parts: list[Part] = []

    def keep(part: Part) -> None:
        parts.append(part)
        if len(parts) >= PARTS_PER_COMMIT:
            lifecycle.save_parts(db, check_id, attempt, parts, settings.lease_seconds)
            parts.clear()

    try:
        with UploadReader(db, claimed.upload_id) as raw:
            judge = Judge(OutputLines(raw, settings.max_line_bytes), keep, part_lines=compare.PART_LINES)
            for block, count in judge_blocks(db, claimed.job_id, CHUNKS_PER_READ):
                judge.expect(block, count)
            report = judge.finish()
    except OutputError as error:
        lifecycle.fail(db, check_id, attempt, f"the output cannot be judged: {error}")
        return
    except FileNotFoundError as error:  # its upload (or a block of it) is gone
        lifecycle.fail(db, check_id, attempt, f"the output cannot be read: {error}")
        return
    except BaseException:
        # The task is tried again (the database went away, the worker is stopping): let that run in
        # at once instead of after the lease.
        lifecycle.let_go(db, check_id, attempt)
        raise
    if parts:
        lifecycle.save_parts(db, check_id, attempt, parts, settings.lease_seconds)
    lifecycle.finish(db, check_id, attempt, report)

