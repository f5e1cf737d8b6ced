"""The game engines and the registry that picks one by its slug.

>>> from worker import engines
>>> engines.names()
['10-20-30', 'accordion', 'mahjong']
>>> engines.get("mahjong").unit
'hand'

Each engine lives in its own module and is imported only when asked for, so that
``dealer solve mahjong`` does not pay for the other two.
"""

from __future__ import annotations

import importlib

from worker.engines.base import Case, Diagnostic, Engine, InputError, Result, TraceError

__all__ = ["Case", "Diagnostic", "Engine", "InputError", "Result", "TraceError", "all_engines", "detect", "get", "names"]

_MODULES = {
    "10-20-30": "worker.engines.ten_twenty_thirty",
    "accordion": "worker.engines.accordion",
    "mahjong": "worker.engines.mahjong",
}
_loaded: dict[str, Engine] = {}


def names() -> list[str]:
    return list(_MODULES)


def get(slug: str) -> Engine:
    """The engine for ``slug``; ``KeyError`` with the known slugs when there is none."""
    engine = _loaded.get(slug)
    if engine is None:
        if slug not in _MODULES:
            raise KeyError(f"unknown game {slug!r} (known: {', '.join(_MODULES)})")
        engine = importlib.import_module(_MODULES[slug]).ENGINE
        _loaded[slug] = engine
    return engine


def all_engines() -> list[Engine]:
    return [get(slug) for slug in _MODULES]


def detect(head: bytes) -> str | None:
    """The slug of the one game whose judge files start like ``head``, else ``None``."""
    matches = [engine.slug for engine in all_engines() if engine.sniff(head)]
    return matches[0] if len(matches) == 1 else None
