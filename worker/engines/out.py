"""What the native cores share (compiled only): the growing buffer of bytes a batch is
written into, and making the cases their readers find.

A batch of cases solved in C (``solve_batch`` of each core) writes its judge lines into
one :class:`Out` and its ``--traces`` records into another, and hands each over as one
``str`` or ``bytes``: a Python object a case, or a ``%`` template filled a case, would
cost more than the native core takes to solve it. The records are the bytes
:meth:`worker.engines.base.Engine.record` makes; the differential tests
(``tests/engines/test_native.py``) hold every core to them.

A batch (:func:`batch`) borrows its two buffers and gives them back: the next batch
writes into memory already mapped, where fresh memory would cost a page fault every
4 KiB; and a batch in another thread, while this one waits for the engine to solve a
case, borrows others.

Its C interface is in ``out.pxd``, which the cores ``cimport``.
"""

import cython
from cython.cimports.cpython.bytes import PyBytes_FromStringAndSize
from cython.cimports.cpython.object import PyObject_GenericSetAttr
from cython.cimports.cpython.unicode import PyUnicode_AsUTF8AndSize, PyUnicode_DecodeASCII
from cython.cimports.libc.stdlib import free, realloc

from worker.engines.base import Case, plain


@cython.cclass
class Out:
    def __dealloc__(self):
        free(self.data)

    def grow(self, more: cython.Py_ssize_t) -> cython.int:
        """Room for ``more`` bytes after the written ones (see ``reserve`` in out.pxd)."""
        room: cython.Py_ssize_t = max(2 * self.room, self.size + more, 65536)
        data: cython.p_char = cython.cast(cython.p_char, realloc(self.data, room))
        if data == cython.NULL:
            raise MemoryError()
        self.data, self.room = data, room
        return 0

    def put_str(self, text: str) -> cython.int:
        """An ASCII ``str`` as it is (the cores' texts and names: nothing in them to escape)."""
        length = cython.declare(cython.Py_ssize_t)
        s: cython.p_const_char = PyUnicode_AsUTF8AndSize(text, cython.address(length))
        return put(self, s, length)

    def head(self, index: cython.longlong, outcome: bytes, number: cython.longlong) -> cython.int:
        """A record up to its detail: ``{"index":…,"outcome":…,"number":…,"detail":``; the
        core then writes the detail, ``,"trace":``, the trace and ``}`` and a newline."""
        put(self, b'{"index":', 9)
        put_int(self, index)
        put(self, b',"outcome":"', 12)
        put(self, outcome, len(outcome))
        put(self, b'","number":', 11)
        put_int(self, number)
        return put(self, b',"detail":', 10)

    def fallback(self, lines: Out, answer: object) -> cython.int:
        """A case the core left to the engine: its ``(line, record)`` (the record ``b""``
        when not traced) after the others, each then ending in a newline."""
        line: str = answer[0]
        record: bytes = answer[1]
        lines.put_str(line)
        put(lines, b"\n", 1)
        if len(record):
            put(self, record, len(record))
            put(self, b"\n", 1)
        return 0

    def take(self) -> bytes:
        """What is written, as bytes; the buffer is then empty."""
        written: bytes = PyBytes_FromStringAndSize(self.data, self.size)
        self.size = 0
        return written

    def take_text(self) -> str:
        """What is written, as a str (it is ASCII); the buffer is then empty."""
        written: str = PyUnicode_DecodeASCII(self.data, self.size, cython.NULL)
        self.size = 0
        return written


_spare = cython.declare(list, [])


def batch(write, texts: list, first: cython.longlong, traced: cython.bint, one: object) -> tuple:
    """A core's ``solve_batch``: ``write`` (its ``_write_batch``) writes the judge lines and
    the records of ``texts``, numbered from ``first``, into two borrowed buffers (taken
    from those given back before, or new): ``(lines, records)``, a ``str`` and a ``bytes``."""
    lines: Out = _spare.pop() if _spare else Out()
    records: Out = _spare.pop() if _spare else Out()
    lines.size = records.size = 0
    try:
        write(texts, first, traced, one, lines, records)
        return lines.take_text(), records.take()
    finally:
        # Kept for the next batch (at most four: two batches at once, see the module's doc).
        for out in (lines, records):
            if len(_spare) < 4:
                _spare.append(out)


_PLAIN_CASE = cython.declare(cython.bint, plain(Case, ("index", "text", "line", "column")))


def new_case(index: cython.longlong, text: str, line: cython.longlong, column: cython.longlong) -> object:
    """``Case(index, text, line, column)``, filling its slots where Case is plain (see
    :func:`~worker.engines.base.plain`): its frozen ``__init__`` would cost more than the reading."""
    if not _PLAIN_CASE:
        return Case(index, text, line, column)
    case = Case.__new__(Case)
    PyObject_GenericSetAttr(case, "index", index)
    PyObject_GenericSetAttr(case, "text", text)
    PyObject_GenericSetAttr(case, "line", line)
    PyObject_GenericSetAttr(case, "column", column)
    return case
