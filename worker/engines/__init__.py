"""The game engines and the registry that picks one by its slug. Each engine lives in its own
package, imported only when asked for: ``dealer solve mahjong`` does not pay for the other two.

>>> from worker import engines
>>> engines.names(), engines.get("mahjong").unit
(['10-20-30', 'accordion', 'mahjong'], 'hand')
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

from worker.engines import native
from worker.engines.engine import Engine
from worker.engines.reading import Case, Diagnostic, InputError
from worker.engines.results import Result, TraceError

__all__ = ["Case", "Diagnostic", "Engine", "InputError", "Result", "TraceError", "UnknownGame", "all_engines",
           "check", "detect", "get", "names", "outcomes", "use_native_core"]

_MODULES = {
    "10-20-30": "worker.engines.ten_twenty_thirty",
    "accordion": "worker.engines.accordion",
    "mahjong": "worker.engines.mahjong",
}
_loaded: dict[str, Engine] = {}


class UnknownGame(KeyError):
    """No engine has this slug: a :class:`KeyError` whose ``str`` is the message, not its ``repr``."""

    def __init__(self, slug: Any) -> None:
        self.slug = slug
        super().__init__(f"unknown game {slug!r}; expected one of {', '.join(_MODULES)}")

    def __str__(self) -> str:
        return str(self.args[0])


def names() -> list[str]:
    return list(_MODULES)


def check(slug: Any) -> str:
    """``slug`` when an engine has it, else :class:`UnknownGame`."""
    if not isinstance(slug, str) or slug not in _MODULES:
        raise UnknownGame(slug)
    return slug


def get(slug: str) -> Engine:
    """The engine for ``slug``; :class:`UnknownGame` when there is none."""
    engine = _loaded.get(slug) if isinstance(slug, str) else None
    if engine is None:
        engine = importlib.import_module(_MODULES[check(slug)]).ENGINE
        _loaded[slug] = engine
    return engine


def use_native_core(enabled: bool) -> None:
    """Whether the engines solve on their compiled core where it is built (the default) or in pure
    Python, as ``Settings.pure_python`` says; engines already loaded change core too."""
    native.enabled = enabled
    for module in _MODULES.values():
        package = sys.modules.get(module)
        if package is not None and hasattr(package, "ENGINE"):
            package.ENGINE.core = native.load(module)


def all_engines() -> list[Engine]:
    return [get(slug) for slug in _MODULES]


def outcomes() -> tuple[str, ...]:
    """Every game's outcomes, sorted: ``('draw', 'loss', 'not-ready', 'ready', 'win')``."""
    return tuple(sorted({outcome for engine in all_engines() for outcome in engine.outcomes}))


def detect(head: bytes) -> str | None:
    """The slug of the one game whose judge files start like ``head``, else ``None``."""
    matches = [engine.slug for engine in all_engines() if engine.sniff(head)]
    return matches[0] if len(matches) == 1 else None
