"""Which core solves a game: the compiled one (each game's ``core``, built by Cython when a C compiler
is there), else pure Python, the fallback and the oracle. Whoever builds a process reads
``DEALER_PURE_PYTHON`` and tells :func:`worker.engines.use_native_core`: engines read no environment.
"""

from __future__ import annotations

from importlib import import_module, util
from importlib.machinery import ExtensionFileLoader
from types import ModuleType

#: The variable of ``Settings.pure_python`` (``worker.config`` reads it; messages name it).
PURE_PYTHON = "DEALER_PURE_PYTHON"
NATIVE, PYTHON = "native", "python"
#: Whether engines use their compiled core where it is built (see :func:`worker.engines.use_native_core`).
enabled = True


def compiled(package: str) -> ModuleType | None:
    """A game's compiled core, whatever the settings say; ``None`` when it is not built (its source
    declares C types: it is never imported as Python)."""
    spec = util.find_spec(f"{package}.core")
    if spec is None or not isinstance(spec.loader, ExtensionFileLoader):
        return None
    try:
        return import_module(spec.name)
    except ImportError:  # built, but not what it needs (worker/engines/out.py, compiled)
        return None


def load(package: str) -> ModuleType | None:
    """The core a game's engine uses: :func:`compiled`, unless the native core is turned off."""
    return compiled(package) if enabled else None


def summary() -> str:
    """Which core each game uses, and why none is native when none is (``dealer games --cores``)."""
    from worker import engines

    cores = {engine.slug: engine.core_name for engine in engines.all_engines()}
    native = [slug for slug, core in cores.items() if core == NATIVE]
    python = [slug for slug, core in cores.items() if core == PYTHON]
    if not native:
        why = "not built" if enabled else f"off ({PURE_PYTHON} is set)"
        return f"dealer: native core {why}: every game solves in pure Python (slower, same answers)"
    return f"dealer: native core for {', '.join(native)}" + (f"; pure Python for {', '.join(python)}" if python else "")
