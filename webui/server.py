"""Serving the web app with gunicorn, from ``dealer web`` and ``dealer serve``."""

from __future__ import annotations

from typing import Any

from gunicorn.app.base import BaseApplication

from worker.config import Settings


class WebServer(BaseApplication):  # type: ignore[misc]
    """Gunicorn with threads: uploads stream for minutes while the dashboard keeps polling."""

    def __init__(self, settings: Settings, host: str, port: int, workers: int = 1, threads: int = 8) -> None:
        self.settings = settings
        self.options = {
            "bind": f"{host}:{port}",
            "workers": workers,
            "worker_class": "gthread",
            "threads": threads,
            "timeout": 0,  # an upload of gigabytes may take longer than any fixed limit
            "graceful_timeout": 5,
            "accesslog": None,
            "errorlog": "-",
            "loglevel": "warning",
        }
        super().__init__()

    def load_config(self) -> None:
        for key, value in self.options.items():
            self.cfg.set(key, value)

    def load(self) -> Any:
        from webui.app import create_app

        return create_app(self.settings)
