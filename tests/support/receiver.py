"""A local receiver of the service's callbacks (``notify_url``): an HTTP server on 127.0.0.1 in a thread."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Receiver:
    """An HTTP server on 127.0.0.1 that records each POST and answers the next of ``answers`` (then 200)."""

    answers: list[int] = field(default_factory=list)
    calls: list[tuple[dict[str, str], bytes]] = field(default_factory=list)
    url: str = ""

    def handler(self) -> type[BaseHTTPRequestHandler]:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.calls.append((dict(self.headers), body))
                self.send_response(receiver.answers.pop(0) if receiver.answers else 200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        return Handler

    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(body) for _, body in self.calls]


@contextmanager
def receiving() -> Iterator[Receiver]:
    """A receiver listening (its ``url`` has a path and a query) until the block ends."""
    found = Receiver()
    server = ThreadingHTTPServer(("127.0.0.1", 0), found.handler())
    found.url = f"http://127.0.0.1:{server.server_address[1]}/hook?from=dealer"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield found
    finally:
        server.shutdown()
        server.server_close()
