"""Progress bars on stderr for long commands (only imported when stderr is a terminal)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO

from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)


class _CountingReader:
    """A binary stream that reports every read to the progress bar."""

    def __init__(self, raw: IO[bytes], progress: Progress, task: TaskID) -> None:
        self._raw, self._progress, self._task = raw, progress, task

    def read(self, size: int = -1) -> bytes:
        data = self._raw.read(size)
        self._progress.update(self._task, advance=len(data))
        return data


def _size(stream: IO[bytes]) -> int | None:
    try:
        return os.fstat(stream.fileno()).st_size or None
    except (OSError, AttributeError, ValueError):
        return None


def bytes_progress() -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TextColumn("{task.fields[cases]:>9,} cases"),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=True,
    )


@contextmanager
def file_progress(stream: IO[bytes], description: str) -> Iterator[tuple[IO[bytes], Callable[[int], None]]]:
    """Yield ``(stream, advance)``: reads from ``stream`` move the bar, ``advance(n)`` counts cases."""
    with bytes_progress() as progress:
        task = progress.add_task(description, total=_size(stream), cases=0)
        cases = 0

        def advance(count: int) -> None:
            nonlocal cases
            cases += count
            progress.update(task, cases=cases)

        yield _CountingReader(stream, progress, task), advance  # type: ignore[misc]


@contextmanager
def count_progress(total: int, description: str) -> Iterator[Callable[[int, int], None]]:
    """Yield ``update(done, total)``: a bar of ``done`` of ``total`` things, with the time left."""
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TimeRemainingColumn(), console=Console(stderr=True), transient=True) as progress:
        task = progress.add_task(description, total=total)

        def update(done: int, of: int) -> None:
            progress.update(task, completed=done, total=of)

        yield update
