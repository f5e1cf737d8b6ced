"""A small client of Dealer's HTTP API, for ``dealer submit`` (standard library only).

Uploads stream from disk with a computed Content-Length, so a file of any size
goes up in constant memory.
"""

from __future__ import annotations

import http.client
import json
import os
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from worker.jobs.states import FINISHED


class ClientError(Exception):
    pass


class Client:
    def __init__(self, url: str, timeout: float = 60, api_key: str | None = None) -> None:
        parts = urlsplit(url if "://" in url else f"http://{url}")
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ClientError(f"not an http(s) URL: {url!r}")
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
        try:
            connection.request(method, self.prefix + path, body=body, headers={**self.headers, **(headers or {})})
            response = connection.getresponse()
        except OSError as error:
            raise ClientError(f"cannot reach {self.url}: {error}") from None
        if response.status >= 400:
            raw = response.read()
            try:
                message = json.loads(raw)["error"]
            except (ValueError, KeyError, TypeError):
                message = raw.decode(errors="replace").strip()[:500] or response.reason
            if response.status == 401:
                message += (" (DEALER_API_KEY is not a valid key)" if "Authorization" in self.headers
                            else " (set DEALER_API_KEY to your key)")
            raise ClientError(f"{method} {path}: {response.status} {message}")
        return response

    def _json(self, method: str, path: str) -> Any:
        return json.loads(self._request(method, path).read())

    def submit(self, path: str, game: str | None = None, progress: bool = False) -> dict[str, Any]:
        boundary = uuid.uuid4().hex
        fields = f"--{boundary}\r\nContent-Disposition: form-data; name=\"game\"\r\n\r\n{game}\r\n" if game else ""
        name = Path(path).name.replace('"', "_")
        head = (f"{fields}--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n"
                "Content-Type: application/octet-stream\r\n\r\n").encode()
        tail = f"\r\n--{boundary}--\r\n".encode()
        size = os.path.getsize(path)

        def body(advance: Any = None) -> Iterator[bytes]:
            yield head
            with open(path, "rb") as stream:
                while chunk := stream.read(1 << 20):
                    if advance:
                        advance(len(chunk))
                    yield chunk
            yield tail

        headers = {"Content-Type": f"multipart/form-data; boundary={boundary}",
                   "Content-Length": str(len(head) + size + len(tail))}
        if not progress:
            return json.loads(self._request("POST", "/api/jobs", body(), headers).read())
        from worker.progress import bytes_progress

        with bytes_progress() as bar:
            task = bar.add_task("uploading", total=size, cases=0)
            response = self._request("POST", "/api/jobs", body(lambda n: bar.update(task, advance=n)), headers)
            return json.loads(response.read())

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
                bar.update(task, total=job["total"] or None, completed=job["done"],
                           description=f"job {job_id} {job['status']}")
                if job["status"] in FINISHED:
                    return job
                time.sleep(poll)

    def output(self, job_id: int) -> Iterator[str]:
        response = self._request("GET", f"/api/jobs/{job_id}/output")
        while chunk := response.read(1 << 16):
            yield chunk.decode()
