"""Taking an upload from a request: the file was streamed into the database while the form was parsed
(``app.StreamingRequest``); here it becomes a job (the JSON API and the upload page both come here)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from flask import current_app, g, request

from webui.auth import client_id
from webui.context import checks, service, settings
from webui.notices import asked
from webui.params import flag, present
from worker.jobs.arriving import ArrivingJob
from worker.jobs.errors import Invalid
from worker.jobs.screen import JudgeFileScreen
from worker.jobs.views import JobView
from worker.store.uploads import Screen, StoredUpload, UploadTooLarge, UploadWriter

View = TypeVar("View", bound=Callable[..., Any])


def judge_file() -> Screen:
    return JudgeFileScreen(settings().max_line_bytes)


def program_output() -> Screen:
    return checks().output_screen()


def takes_files(job_from: str | None = None, **fields: Callable[[], Screen]) -> Callable[[View], View]:
    """Name a view's file fields with what each holds (:func:`judge_file`, :func:`program_output`): each is
    then screened while the form streams in, and a file plainly not what its field holds is refused where
    that shows, what was stored of it dropped (the rest of the body is not even read). ``job_from``: the
    field the view makes a job of (:func:`receive_upload`), made as its first MiB is stored and split
    while the rest arrives (:mod:`worker.jobs.arriving`)."""

    def declare(view: View) -> View:
        view.upload_fields = fields  # type: ignore[attr-defined]
        view.job_field = job_from  # type: ignore[attr-defined]
        return view

    return declare


def _view() -> Any:
    return current_app.view_functions.get(request.endpoint or "")


def screen(field: str) -> Screen | None:
    """The screen of the request's view for its file ``field`` (``None``: none)."""
    made = getattr(_view(), "upload_fields", {}).get(field)
    return made() if made is not None else None


def follower(field: str, filename: str | None, length: int | None) -> ArrivingJob | None:
    """The job the request's view makes of its file ``field`` (named ``filename``, in a request of ``length``
    bytes) while it arrives; ``None`` for any other field."""
    if getattr(_view(), "job_field", None) != field:
        return None
    return ArrivingJob(service(), filename or "upload", client_id(), length)


def receive_upload() -> JobView:
    """Create a job from the request's ``file`` (streamed into the database) and optional ``game``: the one
    made while the file arrived, else one made now; shared with every user when the form's ``shared`` says."""
    job = _received_job()
    raw = present(request.form).get("shared")
    if raw is not None and flag("shared", raw):
        return service().share(job.id, shared=True)
    return job


def _received_job() -> JobView:
    service().limits.check_client(client_id())  # before the body is read: a refused client's file is not stored
    service().limits.check_quota(new_job=True)
    upload = request.files.get("file")
    # Werkzeug's form parser swallows the writer's UploadTooLarge (a ValueError) and drops the
    # field, so an upload over the limit would look like no upload at all: ask the writers.
    writers: list[UploadWriter] = g.get("upload_writers", [])
    if any(writer.size > writer.limit for writer in writers):
        raise UploadTooLarge(writers[0].limit)
    if upload is None:
        raise Invalid("no file in the request: send it as the multipart field 'file'")
    writer = upload.stream
    if not isinstance(writer, UploadWriter):  # pragma: no cover - our request class always does this
        raise Invalid("the upload was not streamed into the database")
    game = request.form.get("game") or None
    arriving = writer.following if isinstance(writer.following, ArrivingJob) else None
    if arriving is not None and game not in (None, arriving.game):
        arriving.withdraw()  # the game chosen decides: the job is made now, or refused saying why
        writer.following = arriving = None
    stored = writer.commit()
    expected = None
    try:
        asked()
        if "shared" in present(request.form):
            flag("shared", present(request.form)["shared"])  # a bad value refused, the job withdrawn
        expected = stored_file("expected")
        if arriving is not None:
            return checks().job_arrived(arriving, expected)
        return checks().create_job(stored, upload.filename or "upload", game, client=client_id(), expected=expected)
    except BaseException:
        if arriving is not None:
            arriving.withdraw()
        service().forget_upload(stored)
        if expected is not None:
            service().forget_upload(expected[0])
        raise


def stored_file(field: str) -> tuple[StoredUpload, str] | None:
    """The request's file ``field``, stored, with its name; ``None`` when the form has none (a browser
    sends a file input left empty as an empty file without a name)."""
    upload = request.files.get(field)
    if upload is None:
        return None
    writer = upload.stream
    if not isinstance(writer, UploadWriter):  # pragma: no cover - our request class always does this
        raise Invalid("the upload was not streamed into the database")
    if not upload.filename and writer.size == 0:
        return None
    return writer.commit(), upload.filename or field
