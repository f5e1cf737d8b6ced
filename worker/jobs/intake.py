"""Taking an upload in: what is plainly no judge file is refused before a job is made of it, the
game is recognised from the content when the client did not name it, and a file whose start does not
read as its game, chosen or recognised, is refused the same way, with the message the split gives
(:func:`explain`: line, column, what, and the game the file looks like), which `dealer solve` and
`dealer check` give too.

>>> sniff_upload(b"\\x1f\\x8b\\x08\\x00rest", 100)
'this looks like a gzip file; upload the judge file itself, not a compressed copy'
>>> sniff_upload(b"2 6 5 10 10 4 10", 16) is None
True
"""

from __future__ import annotations

import io
import re
from typing import IO, Any, cast

from worker import engines
from worker.engines.engine import Engine
from worker.engines.reading import MAX_TOKEN, Faults, InputError
from worker.jobs.errors import Invalid
from worker.units import format_size

#: How many bytes of an upload game detection and sniffing look at.
SNIFF_BYTES = 8192
#: Control characters (C0, DEL, C1) that a file name keeps out of pages and the database.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")

#: Signatures of files that are no judge file: (magic bytes, what it is, what to do).
_COMPRESSED = "upload the judge file itself, not a compressed copy"
_NOT_TEXT = "upload the judge file itself (plain text)"
MAGIC: tuple[tuple[bytes, str, str], ...] = (
    (b"\x1f\x8b", "a gzip file", _COMPRESSED),
    (b"PK\x03\x04", "a zip file", _COMPRESSED),
    (b"PK\x05\x06", "a (empty) zip file", _COMPRESSED),
    (b"BZh", "a bzip2 file", _COMPRESSED),
    (b"\xfd7zXZ\x00", "an xz file", _COMPRESSED),
    (b"\x28\xb5\x2f\xfd", "a zstandard file", _COMPRESSED),
    (b"7z\xbc\xaf\x27\x1c", "a 7-zip file", _COMPRESSED),
    (b"Rar!\x1a\x07", "a RAR file", _COMPRESSED),
    (b"%PDF-", "a PDF document", _NOT_TEXT),
    (b"\x89PNG\r\n\x1a\n", "a PNG image", _NOT_TEXT),
    (b"\xff\xd8\xff", "a JPEG image", _NOT_TEXT),
    (b"GIF8", "a GIF image", _NOT_TEXT),
    (b"\x7fELF", "a program (ELF)", _NOT_TEXT),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "an old Microsoft Office document", _NOT_TEXT),
    (b"\xff\xfe", "UTF-16 text", "save it as plain ASCII or UTF-8 text"),
    (b"\xfe\xff", "UTF-16 text", "save it as plain ASCII or UTF-8 text"),
)
_TAR_MAGIC = (257, b"ustar")
_LONG_QUOTE = re.compile(r'"([^"]{61,})"')
_FIRST_TWO = re.compile(rb"^(\s*)\S+(\s+)(\S+)")
_BOM = b"\xef\xbb\xbf"

def sniff_upload(head: bytes, size: int | None) -> str | None:
    """Why the start of an upload shows it is no judge file, or ``None`` when it may be one.

    ``head`` is the file's first bytes (a few KiB up to a MiB), ``size`` its full length (``None``: it
    is still arriving, and longer than ``head``).

    >>> sniff_upload(b"", 0)
    'the file is empty'
    >>> sniff_upload(b" \\r\\n\\t\\n", 5)
    'the file is empty: it holds only whitespace (2 lines)'
    >>> sniff_upload(b"QD AD\\n\\x00\\x01", 8)  # doctest: +ELLIPSIS
    'this looks like a binary file (byte 0x00 at line 2, column 1), not a judge file; upload the judge file itself...'
    >>> sniff_upload(b"\\xef\\xbb\\xbf2 6 5", 8)  # doctest: +ELLIPSIS
    'the file starts with a byte-order mark (U+FEFF, as some editors write), which judge files never have; ...'
    """
    if size == 0:
        return "the file is empty"
    if size is not None and size <= len(head) and not head.strip():
        return whitespace_only(head.count(b"\n") + (not head.endswith(b"\n")))
    for magic, what, advice in MAGIC:
        if head.startswith(magic):
            return f"this looks like {what}; {advice}"
    offset, magic = _TAR_MAGIC
    if head[offset:offset + len(magic)] == magic:
        return f"this looks like a tar archive; {_COMPRESSED}"
    if head.startswith(_BOM):
        return ("the file starts with a byte-order mark (U+FEFF, as some editors write), which judge files "
                "never have; save it as plain text without one")
    nul = head.find(b"\x00")
    if nul >= 0:
        return binary_file(*position(head, nul))
    return None


# The wording of what the screen (``worker/jobs/screen.py``) refuses, wherever a file is read.


def position(data: bytes, at: int) -> tuple[int, int]:
    """The line and column (from 1, in bytes) of ``data[at]``.

    >>> position(b"ab\\ncd", 4)
    (2, 2)
    """
    return data.count(b"\n", 0, at) + 1, at - data.rfind(b"\n", 0, at)


def whitespace_only(lines: int) -> str:
    """A file of blank lines and spaces, however long: no case in it, for any game.

    >>> whitespace_only(2_000_000)
    'the file is empty: it holds only whitespace (2,000,000 lines)'
    """
    return f"the file is empty: it holds only whitespace ({lines:,} line{'' if lines == 1 else 's'})"


def binary_file(line: int, column: int) -> str:
    """A NUL byte: what no text file holds.

    >>> binary_file(3, 7)  # doctest: +ELLIPSIS
    'this looks like a binary file (byte 0x00 at line 3, column 7), not a judge file; upload the judge file itself...'
    """
    return f"this looks like a binary file (byte 0x00 at line {line}, column {column}), not a judge file; {_NOT_TEXT}"


def not_text(byte: int, line: int, column: int) -> str:
    """A byte that is no UTF-8 text.

    >>> not_text(0xe9, 2, 11)
    'line 2, column 11: byte 0xe9 is not text'
    """
    return f"line {line}, column {column}: byte 0x{byte:02x} is not text"


def line_too_long(line: int, limit: int) -> str:
    """A line longer than the limit (``DEALER_MAX_LINE_BYTES``; the first line's is at most a MiB).

    >>> line_too_long(1, 1 << 20)
    'line 1: the line is longer than the limit of 1 MiB'
    """
    return f"line {line}: the line is longer than the limit of {format_size(limit)}"


def token_too_long(line: int, column: int) -> str:
    """A token longer than any game's (:data:`worker.engines.reading.MAX_TOKEN`), the engines' own wording.

    >>> token_too_long(1, 7)
    'line 1, column 7: a token longer than 64 characters'
    """
    return f"line {line}, column {column}: a token longer than {MAX_TOKEN} characters"


def clean_filename(name: str, limit: int = 255) -> str:
    """A user's file name as it is stored and shown: control characters and unpaired surrogates replaced,
    cut to ``limit`` characters. It is never used as a path (uploads are stored under their hash).

    >>> clean_filename("../../etc/passwd")
    '../../etc/passwd'
    >>> clean_filename("a\\x00b\\nc\\udcff.in") == "a\\ufffdb\\ufffdc\\ufffd.in"
    True
    """
    name = _CONTROL.sub("\ufffd", name).strip()
    return name[:limit] or "upload"




def check_upload(head: bytes, size: int) -> None:
    """Refuse an upload that is empty or plainly no judge file (compressed, binary, UTF-16)."""
    problem = sniff_upload(head, size)
    if problem is not None:
        raise Invalid(problem)


def refuse_no_game(head: bytes) -> None:
    """Refuse the first MiB of a longer file (``head``) when its whole lines are no game's: no game's reader
    takes a single case in them; saying where the closest reader stops (a job of it could only fail there,
    its whole file stored for nothing; a small file is taken, and its job fails naming the place).

    >>> refuse_no_game(b"1S 1S 2S 2S 2S 3S 3S 3S 7S 8S 9S FA FA\\n1S 2S")
    >>> refuse_no_game(b"Dear class,\\nthe exam is on Monday.\\n")
    Traceback (most recent call last):
    ...
    worker.jobs.errors.Invalid: this is no judge file of any game: every game's reader stops at line 1, column 1 ("Dear")
    """
    sample = head[:SNIFF_BYTES]
    # Whole lines only (a case is far shorter than the sample); without one, a case may be cut short.
    sample = sample[:sample.rfind(b"\n") + 1]
    if sample.strip() and not any(_reads_a_case(engine, sample) for engine in engines.all_engines()):
        first = sample.split(maxsplit=1)[0][:20].decode("ascii", "replace")
        where = _closest(sample) or f": every game's reader stops at line 1, column 1 (\"{first}\")"
        raise Invalid("this is no judge file of any game" + where)


def _reads_a_case(engine: engines.Engine, sample: bytes) -> bool:
    """Whether ``engine``'s reader takes the first case of ``sample`` (or finds none, and no fault)."""
    try:
        for _ in engine.parse(io.BytesIO(sample), []):
            return True
    except Exception:  # noqa: BLE001 - a reader's bug on a file not its own says nothing of the file
        return False
    return True


def recognise(head: bytes, size: int, game: str | None = None) -> str:
    """The game of an upload of ``size`` bytes that starts with ``head``: ``game`` when given, else the one
    its content says; :class:`Invalid` when no game's is, or when the head does not read as that game.
    Chosen or recognised, a file is refused on the same grounds with the same message when its head holds no
    good case of the game; a file with good cases and faults makes a job that keeps the good cases, lists
    the faults and fails.

    >>> recognise(b"QD AD 8H 5S 3H 5H QC 9S 3D 2C KD 3C 2S TD 9C 5D 3S KS JD 10C #", 59)
    Traceback (most recent call last):
    ...
    worker.jobs.errors.Invalid: cannot tell which game this file is for: read as an accordion file (the closest), line 1, column 58: "10C" is not a card (rank A23456789TJQK, suit CDHS); choose one of 10-20-30, accordion, mahjong
    >>> recognise(b"1S 1S 2S 2S 2S 3S 3S 3S 7S 8S 9S FA FA\\n0\\n", 41, "10-20-30")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    worker.jobs.errors.Invalid: line 1, column 1: ... (this looks like a mahjong file, not a 10-20-30 file)
    """
    if game is None:
        game = engines.detect(head)
        if game is None:
            # A file whose start holds a fault among good cases is still that game's: the one whose reader
            # keeps a case there, when only one does.
            keeping = [engine.slug for engine in engines.all_engines() if _keeps_a_case(engine, head)]
            if len(keeping) != 1:
                raise Invalid("cannot tell which game this file is for" + _closest(head) + "; choose one of "
                              + ", ".join(engines.names()))
            game = keeping[0]
    engine = engines.get(game)
    error = head_error(engine, head, whole=size <= len(head))
    if error is not None and not _keeps_a_case(engine, head):
        raise Invalid(explain(game, error, head))
    return game


def _keeps_a_case(engine: Engine, head: bytes) -> bool:
    """Whether the whole lines of ``head`` hold a good case of ``engine``'s, read past its faults: then a
    fault there is one of a file of that game, whose job keeps its good cases and names its faults; else
    the file is refused at once (another game's, or none's).

    >>> from worker.engines import get
    >>> _keeps_a_case(get("mahjong"), b"1S 1S 2S 2S 2S 3S 3S 3S 7S 8S 9S FX FA\\n1S 1S 2S 2S 2S 3S 3S 3S 7S 8S 9S FA FA\\n")
    True
    >>> _keeps_a_case(get("10-20-30"), b"1S 1S 2S 2S 2S 3S 3S 3S 7S 8S 9S FA FA\\n0\\n")
    False
    """
    faults = Faults()
    try:
        for _ in engine.parse(io.BytesIO(head[:head.rfind(b"\n") + 1]), [], faults):
            return True
    except Exception:  # noqa: BLE001 - a fatal fault, or a reader's bug: nothing good to keep
        return False
    return False


def head_error(engine: Engine, head: bytes, whole: bool) -> InputError | None:
    """The error ``engine``'s reader meets in ``head``, the start of a file (all of it when ``whole``),
    else ``None``. Of a longer file only an error the cut of the head does not make counts: one that
    stays where it is when the head is cut a line shorter (where a case is cut off, the reader stops
    at the cut, and so moves with it)."""
    if whole:
        return _error(engine, head)
    lines = head.splitlines(keepends=True)[:-1]  # the last line may be cut short
    while lines and not lines[-1].strip():
        lines.pop()
    if len(lines) < 2:
        return None
    first = _error(engine, b"".join(lines))
    shorter = lines[:-1]
    while shorter and not shorter[-1].strip():
        shorter.pop()
    if first is None or first.line is None or first.line >= len(shorter):
        return None
    second = _error(engine, b"".join(shorter))
    same = second is not None and (second.line, second.column, str(second)) == (first.line, first.column, str(first))
    return first if same else None


def _error(engine: Engine, data: bytes) -> InputError | None:
    try:
        for _ in engine.parse(io.BytesIO(data), []):
            pass
    except InputError as error:
        return error
    except Exception:  # noqa: BLE001 - a reader's bug: the split makes it a failed job that says so
        return None
    return None


def explain(game: str, error: InputError, head: bytes) -> str:
    """The message of ``error``, met reading a file of ``game`` that starts with ``head``: wherever a file
    is read (an upload, the split, ``dealer solve`` and ``dealer check``), the same.

    >>> explain("10-20-30", InputError("not a card", 1, 1), b"1S 1S 2S 2S 2S 3S 3S 3S 7S 8S 9S FA FA\\n0\\n")
    'line 1, column 1: not a card (this looks like a mahjong file, not a 10-20-30 file)'
    """
    return readable(str(error)) + other_game_hint(game, head)


def other_game_hint(game: str, head: bytes) -> str:
    """A hint for a file that failed to parse as ``game`` but looks like another game's file, else ``""``.

    >>> other_game_hint("10-20-30", b"1S 1S 2S 2S 2S 3S 3S 3S 7S 8S 9S FA FA\\n0\\n")
    ' (this looks like a mahjong file, not a 10-20-30 file)'
    """
    other = engines.detect(head)
    if other is None or other == game:
        return ""
    return f" (this looks like {with_article(other)} file, not {with_article(game)} file)"


def readable(message: str) -> str:
    """A parser message with any very long quoted token shortened (a message quotes the bad token).

    >>> readable('line 1, column 7: "' + "1" * 100 + '" is not a card value')
    'line 1, column 7: "11111111111111111111111111111111…1111111111 (100 characters)" is not a card value'
    """
    return _LONG_QUOTE.sub(lambda m: f'"{m[1][:32]}…{m[1][-10:]} ({len(m[1])} characters)"', message)


def with_article(name: str) -> str:
    """A game's name with "a" or "an" before it, as it is said ("an accordion", "a 10-20-30").

    >>> with_article("accordion"), with_article("10-20-30"), with_article("mahjong")
    ('an accordion', 'a 10-20-30', 'a mahjong')
    """
    return ("an " if name[:1].lower() in "aeiou" or name.startswith(("8", "11", "18")) else "a ") + name


def _closest(head: bytes) -> str:
    """Where the reader of the game that gets furthest into ``head`` stops, as ``: read as a GAME file
    (the closest), line L, column C: what``; ``""`` when every reader stops at once.

    Readers that stop at the same place are told apart by how far each gets once the head's first token
    is swapped for the second: a hand of mahjong tiles whose first has a wrong suit stops every reader
    at its first token, but only mahjong's then reads the hand. The head is cut at its last whole line, so that
    a file longer than it is not blamed for ending early."""
    cut = head[:head.rfind(b"\n") + 1] if len(head) >= SNIFF_BYTES and b"\n" in head else head
    rest = _FIRST_TWO.sub(rb"\1\3\2\3", cut, count=1)
    best: tuple[tuple[tuple[int, int, int], tuple[int, int, int]], str, str] | None = None
    for engine in engines.all_engines():
        place = _place(engine, cut)
        if place is None:
            continue
        error, where = place
        then = _place(engine, rest)
        key = (where, then[1] if then is not None else (1 << 30, 0, 0))
        if best is None or key > best[0]:
            best = (key, engine.slug, str(error))
    # Stopped at once, and at once again with the first token swapped: no reader makes anything of it.
    if best is None or (best[0][0] in ((0, 1, 1), (0, 0, 0)) and best[0][1] in ((0, 1, 1), (0, 0, 0))):
        return ""
    return f": read as {with_article(best[1])} file (the closest), {best[2]}"


def _place(engine: Engine, data: bytes) -> tuple[InputError, tuple[int, int, int]] | None:
    """The error ``engine``'s reader stops at in ``data`` and where (cases read before it, its line and
    column); ``None`` when it reads it all, or fails by a bug of its own."""
    cases = 0
    try:
        for _ in engine.parse(io.BytesIO(data), []):
            cases += 1
    except InputError as error:
        return error, (cases, error.line or 0, error.column or 0)
    except Exception:  # noqa: BLE001 - a reader's bug on a file not its own says nothing of the file
        return None
    return None


class HeadKept:
    """A binary stream read through, keeping its first :data:`SNIFF_BYTES` (for :func:`explain`, when the
    stream cannot be read again: standard input). It passes for the stream itself: :meth:`reading` is it
    as ``IO[bytes]``."""

    def __init__(self, stream: IO[bytes]) -> None:
        self.stream = stream
        self.head = b""

    def read(self, size: int = -1) -> bytes:
        data = self.stream.read(size)
        if len(self.head) < SNIFF_BYTES:
            self.head += data[:SNIFF_BYTES - len(self.head)]
        return data

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)

    def reading(self) -> IO[bytes]:
        return cast(IO[bytes], self)
