"""A judge file with faults as each path reads it: the engines' readers (both cores), ``dealer solve``, and a
service over HTTP (the Flask client of the inline mode, or a live service). Each gives a :class:`Reading`, so
that the tests can hold them to a mutation's expectation and to each other, byte for byte."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from click.testing import CliRunner

from worker import engines
from worker.cli import main
from worker.engines import native
from worker.engines.engine import Engine
from worker.engines.reading import Diagnostic, Faults
from worker.exits import Exit
from worker.testing.mutations import Expected, check


@dataclass(frozen=True)
class Reading:
    """What was made of a file: the faults named (their messages, in file order, as many as are listed), how
    many there are, the good cases kept (place in the file, text) and the judge output of the cases before
    the first fault."""

    faults: tuple[str, ...]
    count: int
    kept: tuple[tuple[int, str], ...] = ()
    partial: bytes = b""

    @property
    def lines(self) -> list[int]:
        return [int(re.match(r"line (\d+)", message)[1]) for message in self.faults]  # type: ignore[index]

    def holds_to(self, expected: Expected, cases: tuple[str, ...], digest: Callable[[str], str] = str) -> None:
        """Fail unless this reading is what ``expected`` says of a mutation of the file whose cases are
        ``cases`` (their texts, or what ``digest`` makes of them)."""
        check(expected, cases, self.lines, self.count, [digest(text) for _, text in self.kept])


def cores(game: str) -> list[Engine]:
    """The game's engine on the pure-Python core, and on the native one where it is built
    (``tests/engines/test_native.py`` fails where it is not)."""
    engine = engines.get(game)
    core = native.compiled(type(engine).__module__.rsplit(".", 1)[0])
    return [type(engine)(None)] + ([type(engine)(core)] if core is not None else [])


def by_reader(engine: Engine, data: bytes) -> Reading:
    """The engine's reader, reading past faults: its faults (by position and message) and its cases."""
    faults = Faults()
    cases = [(case.index, case.text) for case in engine.parse(io.BytesIO(data), list[Diagnostic](), faults)]
    return Reading(tuple(str(fault) for fault in faults.first), faults.count, tuple(cases))


def by_blocks(engine: Engine, data: bytes, size: int) -> Reading:
    """The split's reading (:meth:`Engine.read_inputs`) in blocks of ``size`` cases, past the faults."""
    faults = Faults()
    read = engine.read_inputs(io.BytesIO(data), [], max_cases=size, faults=faults)
    cases = [(read.first + k, text.decode()) for texts, count in read
             for k, text in enumerate(texts.split(b"\n")[:count])]
    return Reading(tuple(str(fault) for fault in faults.first), faults.count, tuple(cases))


def by_command_line(game: str, path: Path) -> Reading:
    """``dealer solve``: its faults as it names them on standard error, and what it printed."""
    result = CliRunner().invoke(main, ["solve", game, str(path), "--no-progress"])
    prefix = f"dealer: error: {path}: "
    errors = [line[len(prefix):] for line in result.stderr.splitlines() if line.startswith(prefix)]
    if result.exit_code == Exit.DONE:
        assert not errors, result.stderr
        return Reading((), 0, partial=result.stdout_bytes)
    assert result.exit_code == Exit.BAD_INPUT, (result.exit_code, result.stderr)
    summary = re.search(r"is no valid judge file \(([\d,]+) faults?, named below\)", result.stderr)
    assert summary, result.stderr
    named = tuple(error for error in errors if error.startswith("line "))
    return Reading(named, int(summary[1].replace(",", "")), partial=result.stdout_bytes)


#: ``GET`` of a path of the service, its body.
Get = Callable[[str], bytes]


def by_service(get: Get, job_id: int) -> Reading:
    """A finished job of the service: its faults listed and counted, the cases it kept (its results' export,
    in file order) and its partial output."""
    job = json.loads(get(f"/api/jobs/{job_id}"))
    assert job["status"] == ("failed" if job["fault_count"] else "succeeded"), job
    rows = [json.loads(line) for line in get(f"/api/results/export?job_id={job_id}&format=ndjson").splitlines()]
    partial = get(f"/api/jobs/{job_id}/output?partial=1")
    return Reading(tuple(fault["message"] for fault in job["faults"]), job["fault_count"],
                   tuple((row["index"], row["input"]) for row in rows), partial)


def agree(game: str, data: bytes, command_line: Reading, service: Reading) -> None:
    """Fail unless ``dealer solve``, the engine's reader and a service agree byte for byte: the same faults
    named and counted, the same partial output, and the reader's cases are the service's."""
    assert (service.faults, service.count) == (command_line.faults, command_line.count)
    assert service.partial == command_line.partial
    assert service.kept == by_reader(engines.get(game), data).kept
