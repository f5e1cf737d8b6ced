"""A job made from a generated judge file (``POST /api/generate``, the upload page's Generate).

The file is made by :mod:`worker.generating` (the plan checked by the same code as ``dealer
generate``'s, so a request is refused with the same words) and written, block by block as it is
made, into an upload (:class:`worker.store.uploads.UploadWriter`): it is then stored, sized and
limited exactly as an uploaded file, and the job is made from it as from an upload
(:meth:`JobService.create_job`).

It is made within the request, on one process, so that the job exists when the answer says so;
a file that takes longer than ``Settings.generate_seconds`` to make (many cases of a rare mix) is
refused rather than holding a web thread for minutes: a setter who needs it runs ``dealer
generate`` and uploads the file. Random cases and common mixes are made far within it (a million
decks without a mix in about a second; 100,000 decks a third each of wins, losses and draws in
about 4 s of one core).
"""

from __future__ import annotations

import re
import secrets
import time
from dataclasses import dataclass

from worker import engines
from worker.generating import MAX_CASES, GenerateError, Plan, Progress, generate, plan
from worker.jobs.errors import Invalid
from worker.jobs.service import JobService
from worker.jobs.views import JobView
from worker.store.uploads import UploadWriter

#: How far into the budget a projection of the whole file's time is trusted to refuse early.
PROJECT_AFTER = 0.2


@dataclass(frozen=True)
class Request:
    """What is asked, in the words of ``dealer generate`` (``seed`` ``None``: one is chosen)."""

    game: str
    cases: int
    seed: int | None = None
    mix: str | None = None
    layout: str | None = None
    honours: bool = True


class TooLong(Exception):
    """Raised by the progress callback to stop a file that will not be made in the budget."""


def filename(made: Plan) -> str:
    """The job's file name: the plan, so that ``dealer generate`` can make the same bytes again.

    >>> from worker.generating import plan
    >>> filename(plan("10-20-30", 300, 7, mix="win=1,draw=2", layout="crlf"))
    'generated-10-20-30-300-seed-7-mix-win=1,draw=2-layout-crlf.in'
    >>> filename(plan("mahjong", 5, 81, honours=False))
    'generated-mahjong-5-seed-81-no-honours.in'
    """
    parts = [f"generated-{made.game}-{made.cases}-seed-{made.seed}"]
    if made.mix is not None:
        parts.append(f"mix-{made.mix}")
    if str(made.layout):
        parts.append(f"layout-{made.layout}")
    if not made.honours:
        parts.append("no-honours")
    return "-".join(parts) + ".in"


def request_of(name: str) -> Request | None:
    """What :func:`filename` says of a plan, read back from a job's file name; ``None`` for a name it
    did not make (the plan is checked again wherever it is used).

    >>> request_of("generated-10-20-30-300-seed-7-mix-win=1,draw=2-layout-crlf.in")
    Request(game='10-20-30', cases=300, seed=7, mix='win=1,draw=2', layout='crlf', honours=True)
    >>> request_of("generated-mahjong-5-seed-81-no-honours.in").honours, request_of("decks.in")
    (False, None)
    """
    games = "|".join(re.escape(game) for game in engines.names())
    found = re.fullmatch(rf"generated-({games})-(\d+)-seed-(\d+)(?:-mix-(.+?))?(?:-layout-(.+?))?(-no-honours)?\.in",
                         name)
    if found is None:
        return None
    game, cases, seed, mix, layout, no_honours = found.groups()
    return Request(game, int(cases), int(seed), mix, layout, no_honours is None)


def checked_plan(asked: Request, max_cases: int) -> Plan:
    """The plan of ``asked``, its seed chosen when none is given; :class:`Invalid` names the field at
    fault. ``max_cases`` is the per-job limit (0: none but the generator's own)."""
    seed = secrets.randbits(63) if asked.seed is None else asked.seed
    try:
        made = plan(asked.game, asked.cases, seed, asked.mix, asked.layout, asked.honours)
    except GenerateError as error:
        raise Invalid(str(error)) from None
    except engines.UnknownGame as error:
        raise Invalid(f"game: {error}") from None
    if max_cases and made.cases > max_cases:
        raise Invalid(f"cases: a job holds at most {max_cases:,} cases on this service, not {made.cases:,}")
    return made


def generated_job(service: JobService, asked: Request, client: str | None = None) -> JobView:
    """A new job for the file ``asked`` describes, made and stored now (see the module's docstring)."""
    settings = service.settings
    made = checked_plan(asked, settings.max_cases_per_job or MAX_CASES)
    service.limits.check_client(client)  # before the work: a refused client makes no file
    writer = UploadWriter(service.db, settings.max_upload_bytes)
    try:
        generate(made, writer, progress=budget(settings.generate_seconds))
        stored = writer.commit()
    except TooLong as error:
        writer.discard()
        raise Invalid(f"cases: {error} on this service (at most {settings.generate_seconds:g} s a request): ask for "
                      f"fewer cases or a commoner mix, or make the file with dealer generate and upload it") from None
    except GenerateError as error:  # the search found no new case for a bucket
        writer.discard()
        raise Invalid(f"mix: {error.message}") from None
    except BaseException:
        writer.discard()
        raise
    try:
        return service.create_job(stored, filename(made), made.game, client=client)
    except BaseException:
        service.forget_upload(stored)
        raise


def budget(seconds: float) -> Progress | None:
    """The progress callback that stops a file past ``seconds`` (0: never), or sooner when what is made
    so far says the whole would take more than twice as long."""
    if not seconds:
        return None
    start = time.monotonic()

    def progress(done: int, total: int) -> None:
        spent = time.monotonic() - start
        if done >= total:
            return
        if spent > seconds:
            raise TooLong(f"{done:,} of {total:,} cases were made in {spent:.0f} s")
        if spent > PROJECT_AFTER * seconds and done and spent * total / done > 2 * seconds:
            raise TooLong(f"{total:,} cases would take about {spent * total / done:.0f} s to make")

    return progress

