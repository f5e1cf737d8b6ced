"""Dealer's web app: pages, the JSON API and operations endpoints (``flask --app webui run`` works too).

The app is imported when first asked for, not with the package: ``dealer web`` imports ``webui.server``
in gunicorn's arbiter, and the app's modules must be imported in the web processes, after gevent has
patched them (a lock or an event made before would block a whole process, not a greenlet)."""

from __future__ import annotations

from typing import Any

__all__ = ["create_app"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from webui.app import create_app

        return create_app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
