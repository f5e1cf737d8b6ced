"""Judge files made to order (``dealer generate``): a chosen number of cases, a mix of
outcomes, a layout, reproducible from a seed; and ``--cover``, a small file that runs every
rule and catches the classic wrong solutions.

What a service calls::

    from worker.generating import GenerateError, generate, plan
    made = plan("10-20-30", 100_000, seed=42, mix="win=1,loss=1,draw=1", layout="per-line=13")
    summary = generate(made, binary_file, jobs=2, progress=lambda done, total: ...)

:func:`plan` checks what is asked (:class:`GenerateError`, with the ``field`` at fault);
:func:`generate` streams the file to a binary file object in blocks, in bounded memory,
and tells ``progress`` how many cases are made. The package:

- :mod:`.prng`: the seeded random numbers (SplitMix64), the same on every machine;
- :mod:`.deal`: drawing and laying out cases in bulk, in C (:mod:`.core`) or in Python;
- :mod:`.makers`: each game's random cases, walk steps and keys;
- :mod:`.mix`, :mod:`.layout`: what ``--mix`` and ``--layout`` ask for;
- :mod:`.search`: a block's cases for a mix: sampling, solving, walking to rare outcomes;
- :mod:`.stream`: the file, block by block, on one process or several;
- :mod:`.cover`: the ``--cover`` files and the report of what they cover;
- :mod:`.command`: the ``dealer generate`` command.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__all__ = ["MAX_CASES", "GenerateError", "Plan", "Progress", "Summary", "generate", "plan"]


def __getattr__(name: str) -> Any:
    # Imported on first use: ``dealer`` registers its generate command from this package,
    # and ``dealer solve`` should not pay for the engines the generator imports.
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module("worker.generating.errors" if name == "GenerateError" else "worker.generating.stream"),
                   name)
