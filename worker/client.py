"""A small client of Dealer's HTTP API, for ``dealer submit`` (standard library only).

Uploads stream from disk with a computed Content-Length, so a file of any size
goes up in constant memory.
"""

from __future__ import annotations

import http.client
import json
import os
import select
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from worker.exits import Exit
from worker.states import FINISHED


class ClientError(Exception):
    """A request that failed, and the exit status it gives a command (:mod:`worker.exits`)."""

    def __init__(self, message: str, exit: Exit = Exit.UNREACHABLE) -> None:
        super().__init__(message)
        self.exit = exit


def _until_answered(connection: http.client.HTTPConnection, body: Iterable[bytes]) -> Iterator[bytes]:
    """``body``'s pieces, until the service answers: an answer before the whole body is a refusal (an upload
    refused as it arrives), and the rest would only be sent to a socket that is closing."""
    for piece in body:
        if connection.sock is not None and select.select([connection.sock], [], [], 0)[0]:
            return
        yield piece


def multipart(files: list[tuple[str, str]], fields: dict[str, str],
              advance: Callable[[int], object] | None = None) -> tuple[dict[str, str], Iterator[bytes]]:
    """The headers and body of a multipart form of ``fields`` and ``files`` (field, path), the files read from
    disk a MiB at a time as the body is sent (each read told to ``advance``), its length computed first."""
    boundary = uuid.uuid4().hex
    parts: list[bytes | str] = [f"--{boundary}\r\nContent-Disposition: form-data; name=\"{key}\"\r\n\r\n{value}\r\n"
                                .encode() for key, value in fields.items()]
    for field, path in files:
        name = Path(path).name.replace('"', "_")
        parts += [(f"--{boundary}\r\nContent-Disposition: form-data; name=\"{field}\"; filename=\"{name}\"\r\n"
                   "Content-Type: application/octet-stream\r\n\r\n").encode(), path, b"\r\n"]
    parts.append(f"--{boundary}--\r\n".encode())
    length = sum(len(part) if isinstance(part, bytes) else os.path.getsize(part) for part in parts)

    def body() -> Iterator[bytes]:
        for part in parts:
            if isinstance(part, bytes):
                yield part
                continue
            with open(part, "rb") as stream:
                while chunk := stream.read(1 << 20):
                    if advance:
                        advance(len(chunk))
                    yield chunk

    return {"Content-Type": f"multipart/form-data; boundary={boundary}", "Content-Length": str(length)}, body()


class Client:
    def __init__(self, url: str, timeout: float = 60, api_key: str | None = None) -> None:
        parts = urlsplit(url if "://" in url else f"http://{url}")
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ClientError(f"not an http(s) URL: {url!r}", Exit.BAD_INPUT)
        self.url = url
        self.scheme = parts.scheme
        self.host = parts.hostname
        self.port = parts.port
        self.prefix = parts.path.rstrip("/")
        self.timeout = timeout
        self.headers: dict[str, str] = {}
        if api_key:
            self.headers["Authorization"] = f"Bearer {api_key}"

    def _connection(self) -> http.client.HTTPConnection:
        kind = http.client.HTTPSConnection if self.scheme == "https" else http.client.HTTPConnection
        return kind(self.host, self.port, timeout=self.timeout)

    def _request(self, method: str, path: str, body: Any = None,
                 headers: dict[str, str] | None = None) -> http.client.HTTPResponse:
        connection = self._connection()
        sending: OSError | None = None
        try:
            sent = body if body is None else _until_answered(connection, body)
            connection.request(method, self.prefix + path, body=sent, headers={**self.headers, **(headers or {})})
        except OSError as error:
            if connection.sock is None:  # never connected
                raise ClientError(f"cannot reach {self.url}: {error}") from None
            # The service may have answered before the body was all sent, and stopped reading it (an upload
            # refused as it arrives): its answer is read all the same.
            sending = error
        try:
            response = connection.getresponse()
        except (OSError, http.client.HTTPException) as error:
            raise ClientError(f"cannot reach {self.url}: {sending or error}") from None
        if response.status >= 400:
            try:
                raw = response.read()
            except (OSError, http.client.HTTPException):
                raw = b""
            try:
                message = json.loads(raw)["error"]
            except (ValueError, KeyError, TypeError):
                message = raw.decode(errors="replace").strip()[:500] or response.reason
            if response.status == 401:
                message += (" (DEALER_API_KEY is not a valid key)" if "Authorization" in self.headers
                            else " (set DEALER_API_KEY to your key)")
            raise ClientError(f"{method} {path}: {response.status} {message}", Exit.for_status(response.status))
        return response

    def _json(self, method: str, path: str) -> Any:
        response = self._request(method, path)
        try:
            return json.loads(response.read())
        except (OSError, http.client.HTTPException) as error:
            raise ClientError(f"{method} {path}: the answer was cut off: {error}") from None

    def submit(self, path: str, game: str | None = None, progress: bool = False,
               expected: str | None = None, shared: bool = False) -> dict[str, Any]:
        """Upload a judge file as a new job (with ``expected``, an output to check against it; ``shared``:
        shared with every user of the service)."""
        files = [("file", path)] + ([("expected", expected)] if expected else [])
        fields = {"game": game} if game else {}
        if shared:
            fields["shared"] = "true"
        return self._upload("/api/jobs", files, fields, progress)

    def _upload(self, url: str, files: list[tuple[str, str]], fields: dict[str, str], progress: bool) -> dict[str, Any]:
        """POST files as multipart form fields, streamed from disk with a computed length."""
        if not progress:
            headers, body = multipart(files, fields)
            return json.loads(self._request("POST", url, body, headers).read())
        from worker.progress import bytes_progress

        with bytes_progress() as bar:
            task = bar.add_task("uploading", total=sum(os.path.getsize(path) for _, path in files), cases=0)
            headers, body = multipart(files, fields, lambda n: bar.update(task, advance=n))
            return json.loads(self._request("POST", url, body, headers).read())

    def check(self, job_id: int, path: str, progress: bool = False) -> dict[str, Any]:
        """Check an output against a job's judge output (a new check, pending or done)."""
        return self._upload(f"/api/jobs/{job_id}/checks", [("file", path)], {}, progress)

    def check_result(self, check_id: int) -> dict[str, Any]:
        return self._json("GET", f"/api/checks/{check_id}")

    def differences(self, check_id: int, count: int) -> list[dict[str, Any]]:
        """The first ``count`` lines of a check that are not accepted, in the output's order."""
        page = self._json("GET", f"/api/checks/{check_id}/cases?verdict=not_accepted&per_page={max(count, 1)}")
        return list(page["items"])[:count]

    def wait_check(self, check_id: int, poll: float = 0.25) -> dict[str, Any]:
        """The check once judged (or failed)."""
        while (check := self.check_result(check_id))["status"] == "pending":
            time.sleep(poll)
        return check

    def job(self, job_id: int) -> dict[str, Any]:
        return self._json("GET", f"/api/jobs/{job_id}")

    def wait(self, job_id: int, progress: bool = False, poll: float = 0.25) -> dict[str, Any]:
        if not progress:
            while (job := self.job(job_id))["status"] not in FINISHED:
                time.sleep(poll)
            return job
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
        with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
            task = bar.add_task(f"job {job_id}", total=None)
            while True:
                job = self.job(job_id)
                # The file's cases read so far, its faults among them: a failed job's bar is never full.
                held = job["total"] + job.get("fault_count", 0)
                bar.update(task, total=held or None, completed=job["done"],
                           description=f"job {job_id} {job['status']}")
                if job["status"] in FINISHED:
                    return job
                time.sleep(poll)

    def output(self, job_id: int, partial: bool = False) -> Iterator[str]:
        response = self._request("GET", f"/api/jobs/{job_id}/output" + ("?partial=1" if partial else ""))
        try:
            while chunk := response.read(1 << 16):
                yield chunk.decode()
        except (OSError, http.client.HTTPException) as error:
            raise ClientError(f"the output of job {job_id} was cut off: {error}") from None
