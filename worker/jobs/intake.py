"""Taking an upload in: what is plainly no judge file is refused before a job is made of it, and
the game is recognised from the content when the client did not name it.

>>> sniff_upload(b"\\x1f\\x8b\\x08\\x00rest", 100)
'this looks like a gzip file; upload the judge file itself, not a compressed copy'
>>> sniff_upload(b"2 6 5 10 10 4 10", 16) is None
True
"""

from __future__ import annotations

import io
import re

from worker import engines
from worker.engines.base import InputError
from worker.jobs.errors import Invalid

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
_BOM = b"\xef\xbb\xbf"

def sniff_upload(head: bytes, size: int | None) -> str | None:
    """Why the start of an upload shows it is no judge file, or ``None`` when it may be one.

    ``head`` is the file's first bytes (a few KiB up to a MiB), ``size`` its full length (``None``: it
    is still arriving, and longer than ``head``).

    >>> sniff_upload(b"", 0)
    'the file is empty'
    >>> sniff_upload(b" \\r\\n\\t\\n", 5)
    'the file is empty: it holds only whitespace'
    >>> sniff_upload(b"QD AD\\x00\\x01", 8)  # doctest: +ELLIPSIS
    'this looks like a binary file (byte 0x00 at offset 5), not a judge file; upload the judge file itself...'
    >>> sniff_upload(b"\\xef\\xbb\\xbf2 6 5", 8)  # doctest: +ELLIPSIS
    'the file starts with a byte-order mark (U+FEFF, as some editors write), which judge files never have; ...'
    """
    if size == 0:
        return "the file is empty"
    if size is not None and size <= len(head) and not head.strip():
        return "the file is empty: it holds only whitespace"
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
        return (f"this looks like a binary file (byte 0x00 at offset {nul}), not a judge file; {_NOT_TEXT}")
    return None


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


def refuse_start(head: bytes, final: bool) -> None:
    """Refuse, from its start alone, a file that is plainly no judge file, while it is still arriving (so
    that none of it is kept): one of :func:`sniff_upload`'s reasons anywhere in ``head`` (its first MiB);
    and for a longer file (``final``: ``head`` is the whole file), a byte that is no UTF-8 text in it, or
    whole lines in which no game's reader takes a single case, saying where the closest stops (a job of
    it could only fail there, its whole file stored for nothing; a small file is taken, and its job
    fails naming the place).

    >>> refuse_start(b"1S 1S 2S 2S 2S 3S 3S 3S 7S 8S 9S FA FA\\n1S 2S", False)
    >>> refuse_start(b"Dear class,\\nthe exam is on Monday.\\n", True)
    >>> refuse_start(b"Dear class,\\nthe exam is on Monday.\\n", False)
    Traceback (most recent call last):
    ...
    worker.jobs.errors.Invalid: this is no judge file of any game: every game's reader stops at line 1, column 1 ("Dear")
    """
    problem = sniff_upload(head, len(head) if final else None)
    if problem is not None:
        raise Invalid(problem)
    if final:
        return
    try:  # all but a character the end may cut
        head[:-3].decode("utf-8")
    except UnicodeDecodeError as error:
        line = head.count(b"\n", 0, error.start) + 1
        column = error.start - head.rfind(b"\n", 0, error.start)
        raise Invalid(f"this is no judge file: line {line}, column {column}: byte 0x{head[error.start]:02x} "
                      "is not text") from None
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


def detect_game(head: bytes) -> str:
    """The game whose judge files start like ``head``, else :class:`Invalid` saying so, with where the
    closest game's reader stops.

    >>> detect_game(b"QD AD 8H 5S 3H 5H QC 9S 3D 2C KD 3C 2S TD 9C 5D 3S KS JD 10C #")
    Traceback (most recent call last):
    ...
    worker.jobs.errors.Invalid: cannot tell which game this file is for: read as an accordion file (the closest), line 1, column 58: "10C" is not a card (rank A23456789TJQK, suit CDHS); choose one of 10-20-30, accordion, mahjong
    """
    game = engines.detect(head)
    if game is None:
        raise Invalid("cannot tell which game this file is for" + _closest(head) + "; choose one of "
                      + ", ".join(engines.names()))
    return game


def with_article(name: str) -> str:
    """A game's name with "a" or "an" before it, as it is said ("an accordion", "a 10-20-30").

    >>> with_article("accordion"), with_article("10-20-30"), with_article("mahjong")
    ('an accordion', 'a 10-20-30', 'a mahjong')
    """
    return ("an " if name[:1].lower() in "aeiou" or name.startswith(("8", "11", "18")) else "a ") + name


def _closest(head: bytes) -> str:
    """Where the reader of the game that gets furthest into ``head`` stops, as ``: read as a GAME file
    (the closest), line L, column C: what``; ``""`` when every reader stops at once.

    The head is cut at its last whole line, so that a file longer than it is not blamed for ending early."""
    cut = head[:head.rfind(b"\n") + 1] if len(head) >= SNIFF_BYTES and b"\n" in head else head
    best: tuple[tuple[int, int, int], str, str] | None = None
    for engine in engines.all_engines():
        cases = 0
        try:
            for _ in engine.parse(io.BytesIO(cut), []):
                cases += 1
        except InputError as error:
            place = (cases, error.line or 0, error.column or 0)
            if best is None or place > best[0]:
                best = (place, engine.slug, str(error))
        except Exception:  # noqa: BLE001 - a reader's bug on a file not its own says nothing of the file
            continue
    if best is None or best[0] == (0, 1, 1) or best[0] == (0, 0, 0):
        return ""
    return f": read as {with_article(best[1])} file (the closest), {best[2]}"
