"""Taking an upload from a request: the file was streamed to disk while the form was parsed; here it
becomes a job (the JSON API and the upload page both come here)."""

from __future__ import annotations

from flask import g, request

from webui.auth import client_id
from webui.context import service
from worker.jobs.errors import Invalid
from worker.jobs.views import JobView
from worker.store.uploads import UploadTooLarge, UploadWriter


def receive_upload() -> JobView:
    """Create a job from the request's ``file`` (already on disk) and optional ``game``."""
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
        raise Invalid("the upload was not streamed to disk")
    stored = writer.commit()
    game = request.form.get("game") or None
    try:
        return service().create_job(stored, upload.filename or "upload", game, client=client_id())
    except BaseException:
        service().forget_upload(stored)
        raise
