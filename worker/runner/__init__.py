"""The worker side: the worker's Celery app built once from the settings (on :mod:`worker.broker`), the
thin tasks over :mod:`worker.work`, the heartbeat.

``dealer worker`` starts a worker; ``celery -A worker.runner ...`` (Flower, ``inspect``)
finds the same app here, built from the environment on first use.
"""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    if name in ("app", "celery"):
        from worker.config import Settings
        from worker.runner.tasks import create_worker_app

        app = create_worker_app(Settings.from_env())
        globals().update(app=app, celery=app)
        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
