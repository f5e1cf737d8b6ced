"""Reading an upload in the split: the engine's parser, kept within limits and made to fail clearly.

The engines parse judge files; here a line is kept from growing without bound, a bug in a
parser becomes a reason the job fails with (not a split retried for ever). Its messages are
intake's (``intake.explain``), the same wherever a file is read.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import IO

from worker.engines.engine import Engine
from worker.engines.reading import Case, Diagnostic, InputBlocks, InputError
from worker.jobs.screen import Lines
from worker.units import format_size

log = logging.getLogger("dealer.worker")


class LineLimitReader:
    """A binary stream whose lines may be at most ``limit`` bytes long (without their newline).

    Reading past the limit raises :class:`InputError` naming the line (the screen's count of lines,
    :class:`worker.jobs.screen.Lines`). Uploads are screened as they arrive; this holds those stored
    before that to the same limit. A few ``find`` calls a read: splitting stays as fast as without it.

    >>> import io
    >>> LineLimitReader(io.BytesIO(b"12\\n1234\\n"), 4).read()
    b'12\\n1234\\n'
    >>> LineLimitReader(io.BytesIO(b"12\\n12345\\n"), 4).read()
    Traceback (most recent call last):
    ...
    worker.engines.reading.InputError: line 2: the line is longer than the limit of 4 bytes
    """

    def __init__(self, stream: IO[bytes], limit: int) -> None:
        self.stream = stream
        self.lines = Lines(limit)

    def read(self, size: int = -1) -> bytes:
        data = self.stream.read(size)
        if data:
            found = self.lines.too_long(data)
            if found is not None:
                raise InputError(f"the line is longer than the limit of {format_size(self.lines.limit)}", found[1])
            self.lines.advance(data)
        return data


def take_guarded(engine: Engine, blocks: InputBlocks, cases: int) -> tuple[bytes, int]:
    """The next block of at most ``cases`` cases of a judge file read by ``engine.read_inputs``, with the
    same guard as :func:`parse_guarded`: an error other than :class:`InputError` or :class:`OSError`
    (a bug in a reader) becomes an :class:`InputError` that says so."""
    try:
        return blocks.take(cases)
    except (InputError, OSError):
        raise
    except Exception as error:  # noqa: BLE001 - see parse_guarded
        log.exception("the %s reader failed", engine.slug)
        raise InputError(f"the {engine.slug} reader failed on this file ({type(error).__name__}); "
                         "this is a bug in Dealer: please report it with the file") from error


def parse_guarded(engine: Engine, stream: IO[bytes], warnings: list[Diagnostic]) -> Iterator[Case]:
    """``engine.parse``, except that any error other than :class:`InputError` (a bug in a parser)
    or :class:`OSError` (the file cannot be read) becomes an :class:`InputError` that says so:
    the job then fails with a reason instead of its split being retried for ever."""
    cases = engine.parse(stream, warnings)
    while True:
        try:
            case = next(cases)
        except StopIteration:
            return
        except (InputError, OSError):
            raise
        except Exception as error:  # noqa: BLE001 - see the docstring
            log.exception("the %s parser failed", engine.slug)
            raise InputError(f"the {engine.slug} reader failed on this file ({type(error).__name__}); "
                             "this is a bug in Dealer: please report it with the file") from error
        yield case
