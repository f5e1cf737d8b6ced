"""Consecutive cases solved in one call into judge lines and ``--traces`` records: an engine's
``batches``, what ``dealer solve`` and the generator write."""

from __future__ import annotations

import orjson

from worker.engines.reading import Case
from worker.engines.results import Solver


class Batches:
    """An engine's batches: written in C by the native core, which leaves to :meth:`solve_one`
    what it does not finish, else case by case in Python."""

    def __init__(self, engine: Solver) -> None:
        self.engine = engine

    def solve(self, texts: list[str], first: int, traced: bool) -> tuple[str, bytes]:
        """The judge lines of canonical texts numbered from ``first``, and with ``traced`` their
        records (``Traces.record``), each ending in a newline.

        >>> from worker.engines import get
        >>> get("mahjong").batches.solve(["1S 2S 3S 4S 4S 4S 5S 6S 7S 7S 8S 8S 9S"] * 2, 7, False)
        ('Case 7: 3S 5S 6S 8S 9S\\nCase 8: 3S 5S 6S 8S 9S\\n', b'')
        """
        core = self.engine.core
        if core is not None:
            return core.solve_batch(texts, first, traced, self.solve_one)  # type: ignore[no-any-return]
        solved = [self.solve_one(index, text, traced) for index, text in enumerate(texts, first)]
        return ("\n".join(line for line, _ in solved) + "\n",
                b"\n".join(record for _, record in solved) + b"\n" if traced else b"")

    def solve_one(self, index: int, text: str, traced: bool) -> tuple[str, bytes]:
        """One case of :meth:`solve` in Python: its judge line and record (``b""`` untraced)."""
        case = Case(index, text)
        if not traced:
            return self.engine.solve(case, False).line, b""
        result = self.engine.solve(case, True)
        return result.line, self.engine.traces.record(case, result, orjson.dumps(result.trace))
