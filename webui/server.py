"""Serving the web app with gunicorn, from ``dealer web`` and ``dealer serve``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gunicorn.app.base import BaseApplication

from worker.config import Settings


class WebServer(BaseApplication):  # type: ignore[misc]
    """Gunicorn with threads: uploads stream for minutes while the dashboard keeps polling."""

    def __init__(self, settings: Settings, host: str, port: int, workers: int = 1, threads: int = 8,
                 graceful_seconds: int = 5, on_stop: Callable[[], None] | None = None) -> None:
        self.settings = settings
        self.on_stop = on_stop
        self.options = {
            "bind": f"{host}:{port}",
            "workers": workers,
            "worker_class": "gthread",
            "threads": threads,
            "timeout": 0,  # an upload of gigabytes may take longer than any fixed limit
            "graceful_timeout": graceful_seconds,
            "accesslog": None,
            "errorlog": "-",
            "loglevel": "warning",
        }
        super().__init__()

    def load_config(self) -> None:
        for key, value in self.options.items():
            self.cfg.set(key, value)
        if self.on_stop is not None:
            self.cfg.set("when_ready", self._call_on_stop)

    def _call_on_stop(self, arbiter: Any) -> None:
        """Have ``on_stop`` called as soon as the arbiter is told to stop (Ctrl-C, SIGTERM, SIGQUIT)."""
        for name in ("handle_int", "handle_term", "handle_quit"):
            handler = getattr(arbiter, name)

            def told(handler: Callable[[], None] = handler) -> None:
                if self.on_stop is not None:
                    self.on_stop()
                handler()

            setattr(arbiter, name, told)

    def load(self) -> Any:
        from webui.app import create_app

        return create_app(self.settings)
