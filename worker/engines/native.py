"""Which core solves a game: the compiled one (Cython, ``core`` of each game's package)
when it is built, else the pure-Python engines, which stay the fallback and the oracle.

The build is optional (``setup.py``): without a C compiler Dealer installs and runs on the
pure-Python engines alone. ``DEALER_PURE_PYTHON=1`` makes it do so even where the native
core is built: that setting is read with the others (``Settings.pure_python``), and whoever
builds a process (the ``dealer`` commands, the worker app, the web app) tells the registry
(:func:`worker.engines.use_native_core`), which tells this module; the engines read no
environment.
"""

from __future__ import annotations

from importlib import import_module, util
from importlib.machinery import ExtensionFileLoader
from types import ModuleType

#: The environment variable of ``Settings.pure_python``, which forces the pure-Python engines (named in
#: messages; ``worker.config`` reads it).
PURE_PYTHON = "DEALER_PURE_PYTHON"
NATIVE, PYTHON = "native", "python"
#: Whether engines use their compiled core where it is built (see :func:`worker.engines.use_native_core`).
enabled = True


def compiled(package: str) -> ModuleType | None:
    """The compiled core of a game's package, whatever the settings say; ``None``
    when it is not built, or not with the compiled buffer it writes into. Its source is
    never imported as Python: it declares C types and only makes sense compiled."""
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
    """One line on which core each game uses, and why no game uses the native one when none does
    (``dealer games --cores`` prints it, and so ``make install``)."""
    from worker import engines

    cores = {engine.slug: engine.core_name for engine in engines.all_engines()}
    native = [slug for slug, core in cores.items() if core == NATIVE]
    python = [slug for slug, core in cores.items() if core == PYTHON]
    if not native:
        why = "not built" if enabled else f"off ({PURE_PYTHON} is set)"
        return f"dealer: native core {why}: every game solves in pure Python (slower, same answers)"
    return f"dealer: native core for {', '.join(native)}" + (f"; pure Python for {', '.join(python)}" if python else "")
