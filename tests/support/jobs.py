"""Jobs through the service layer, without HTTP."""

from __future__ import annotations

import io

from worker.jobs.queries import JobQueries
from worker.jobs.service import JobService
from worker.jobs.views import JobView
from worker.store.uploads import store_stream


def submit(service: JobService, data: bytes, game: str | None = None, name: str = "judge.in") -> JobView:
    """Store ``data`` as an upload and make a job of it (the inline dispatcher may run it at once)."""
    upload = store_stream(service.settings.upload_dir, io.BytesIO(data), service.settings.max_upload_bytes)
    return service.create_job(upload, name, game)


def output(queries: JobQueries, job_id: int) -> bytes:
    """A job's judge output, whole."""
    return "".join(queries.output(job_id)).encode()
