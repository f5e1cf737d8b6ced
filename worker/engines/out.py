"""What the native cores share (compiled only): the growing buffer of bytes a batch is
written into, the loop that solves a stored chunk (:func:`chunk`), and making the cases
their readers find.

A batch of cases solved in C (``solve_batch`` of each core) writes its judge lines into
one :class:`Out` and its ``--traces`` records into another, and hands each over as one
``str`` or ``bytes``: a Python object a case, or a ``%`` template filled a case, would
cost more than the native core takes to solve it. The records are the bytes
:meth:`worker.engines.engine.Engine.record` makes; the differential tests
(``tests/engines/test_native.py``) hold every core to them.

A batch (:func:`batch`) borrows its two buffers and gives them back: the next batch
writes into memory already mapped, where fresh memory would cost a page fault every
4 KiB; and a batch in another thread, while this one waits for the engine to solve a
case, borrows others.

A chunk (:func:`chunk`, each core's ``solve_chunk``) is solved the same way, from the
canonical texts as the store keeps them (one ``bytes``, a text a line), into the buffers of
:class:`worker.engines.chunks.ChunkSolution`: its judge lines and packed traces written into
two borrowed buffers, its outcomes, numbers, extras, solve times and input hashes into
arrays made once for the chunk.

Its C interface is in ``out.pxd``, which the cores ``cimport``.
"""

import cython
from cython.cimports.cpython import array
from cython.cimports.cpython.bytes import PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cython.cimports.cpython.object import PyObject_GenericSetAttr
from cython.cimports.cpython.unicode import (PyUnicode_AsUTF8AndSize, PyUnicode_DecodeASCII,
                                             PyUnicode_DecodeUTF8)
from cython.cimports.libc.limits import LLONG_MAX, UINT_MAX
from cython.cimports.libc.stdlib import free, realloc
from cython.cimports.libc.string import memchr, memcpy, memmove, memset

import array

from worker.engines.chunks import HASH_FINISH, HASH_MIX, HASH_START
from worker.engines.reading import Case
from worker.engines.results import plain


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


# The arrays of a ChunkSolution, cloned from these (empty) templates.
_INTS = cython.declare(array.array, array.array("i"))
_UINTS = cython.declare(array.array, array.array("I"))
_WORDS = cython.declare(array.array, array.array("Q"))
_START = cython.declare(cython.ulonglong, HASH_START)
_MIX = cython.declare(cython.ulonglong, HASH_MIX)
_FINISH = cython.declare(cython.ulonglong, HASH_FINISH)


@cython.cfunc
@cython.inline
@cython.exceptval(check=False)
def _hash(s: cython.p_const_char, size: cython.Py_ssize_t) -> cython.ulonglong:
    """:func:`worker.engines.chunks.case_hash` of ``size`` bytes at ``s``: a word of eight
    bytes at a time (the last one padded with zeros), each step a bijection of the state,
    then MurmurHash3's 64-bit finaliser."""
    h: cython.ulonglong = cython.cast(cython.ulonglong, size) * _START
    last: cython.char[8]
    at: cython.Py_ssize_t = 0
    while at + 8 <= size:
        h = (h ^ load64(s + at)) * _MIX
        h ^= h >> 32
        at += 8
    if at < size:
        memset(last, 0, 8)
        memcpy(last, s + at, size - at)
        h = (h ^ load64(last)) * _MIX
        h ^= h >> 32
    h ^= h >> 33
    h *= _MIX
    h ^= h >> 33
    h *= _FINISH
    return h ^ (h >> 33)


def case_hash(data: bytes) -> cython.ulonglong:
    """The C side of :func:`worker.engines.chunks.case_hash` (the tests hold the two to one value)."""
    return _hash(PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data))


def chunk(solve, inputs: bytes, first: cython.longlong, traced: cython.bint, deadline: object,
          one: object) -> tuple:
    """A core's ``solve_chunk``: the cases of ``inputs`` (canonical texts, one a line; ``b""``
    holds none), numbered from ``first``, each solved by ``solve`` (its ``_chunk_case``) or, where
    that leaves it, by ``one`` (:meth:`~worker.engines.engine.Engine.solve_entry`'s signature), the
    fields of a :class:`~worker.engines.chunks.ChunkSolution` in order. No case is started once
    the monotonic clock reads ``deadline`` (seconds, as ``time.monotonic()``; ``None``: never)."""
    s: cython.p_const_char = PyBytes_AS_STRING(inputs)
    size: cython.Py_ssize_t = PyBytes_GET_SIZE(inputs)
    count: cython.Py_ssize_t = inputs.count(b"\n") + 1 if size else 0
    outcomes: bytes = PyBytes_FromStringAndSize(cython.NULL, count)
    codes: cython.p_uchar = cython.cast(cython.p_uchar, PyBytes_AS_STRING(outcomes))
    numbers: array.array = array.clone(_INTS, count, False)
    extras: array.array = array.clone(_INTS, count, False)
    solve_us: array.array = array.clone(_UINTS, count, False)
    hashes: array.array = array.clone(_WORDS, count, False)
    offsets: array.array = array.clone(_UINTS, count + 1, False)
    stop: cython.longlong = LLONG_MAX
    seconds: cython.double
    if deadline is not None:
        seconds = deadline
        if seconds <= 0:
            stop = 0
        elif seconds < 9e9:  # (later: never, as None, and beyond a long long of nanoseconds; so is NaN)
            stop = cython.cast(cython.longlong, seconds * 1e9)
    lines: Out = _spare.pop() if _spare else Out()
    traces: Out = _spare.pop() if _spare else Out()
    lines.size = traces.size = 0
    k: cython.Py_ssize_t
    at: cython.Py_ssize_t = 0
    end: cython.Py_ssize_t
    newline: cython.p_const_char
    code: cython.int
    number: cython.int
    extra: cython.int
    started: cython.Py_ssize_t = count
    now: cython.longlong
    then: cython.longlong
    offsets.data.as_uints[0] = 0
    try:
        now = now_ns()
        for k in range(count):
            newline = cython.cast(cython.p_const_char, memchr(s + at, 10, size - at))
            end = size if newline == cython.NULL else newline - s
            hashes.data.as_ulonglongs[k] = _hash(s + at, end - at)
            code, number, extra = 0, 0, 0
            if started == count and now >= stop:
                started = k
            if started == count:
                code = solve(s + at, end - at, first + k, traced, lines, traces, cython.address(number),
                             cython.address(extra))
                if code == 0:
                    code = _fallback(one, s + at, end - at, first + k, traced, lines, traces,
                                     cython.address(number), cython.address(extra))
                then = now_ns()
                solve_us.data.as_uints[k] = (then - now) // 1000
                now = then
            else:
                solve_us.data.as_uints[k] = 0
            put(lines, b"\n", 1)
            codes[k] = code
            numbers.data.as_ints[k] = number
            extras.data.as_ints[k] = extra
            if traces.size > UINT_MAX:
                raise OverflowError("a chunk's packed traces outgrew their 32-bit offsets")
            offsets.data.as_uints[k + 1] = traces.size
            at = end + 1
        return (count, started, lines.take(), traces.take(), offsets, outcomes, numbers, extras, solve_us,
                hashes)
    finally:
        for out in (lines, traces):
            if len(_spare) < 4:
                _spare.append(out)


@cython.cfunc
@cython.exceptval(-1)
def _fallback(one: object, s: cython.p_const_char, size: cython.Py_ssize_t, index: cython.longlong,
              traced: cython.bint, lines: Out, traces: Out, number: cython.p_int,
              extra: cython.p_int) -> cython.int:
    """A case the core left to Python: ``one(index, text, traced)``'s ``(code, number, extra,
    line, packed trace)`` written as the core writes its own (nothing for code 0: not solved)."""
    answer: tuple = one(index, PyUnicode_DecodeUTF8(s, size, cython.NULL), traced)
    code: cython.int = answer[0]
    if code < 0 or code > 255:
        raise ValueError(f"an outcome code is 0..255, not {code}")
    if code:
        number[0], extra[0] = answer[1], answer[2]
        lines.put_str(answer[3])
        if traced:
            packed: bytes = answer[4]
            put(traces, packed, len(packed))
    return code


_PLAIN_CASE = cython.declare(cython.bint, plain(Case, ("index", "text", "line", "column")))


def new_case(index: cython.longlong, text: str, line: cython.longlong, column: cython.longlong) -> object:
    """``Case(index, text, line, column)``, filling its slots where Case is plain (see
    :func:`~worker.engines.results.plain`): its frozen ``__init__`` would cost more than the reading."""
    if not _PLAIN_CASE:
        return Case(index, text, line, column)
    case = Case.__new__(Case)
    PyObject_GenericSetAttr(case, "index", index)
    PyObject_GenericSetAttr(case, "text", text)
    PyObject_GenericSetAttr(case, "line", line)
    PyObject_GenericSetAttr(case, "column", column)
    return case


@cython.cclass
class Block(Out):
    """A judge file's canonical inputs, a block of consecutive cases at a time
    (:class:`worker.engines.handover.InputBlocks` on the native core): each core's ``read_inputs``
    writes the texts of the cases it reads into it, past what it holds, and tells it of each
    (``took`` in out.pxd); Python writes the cases its readers find (:meth:`add`). Each text is
    followed by a newline.

    A block takes at most ``want`` cases and, but for its first, no case ending past ``room``
    bytes: :meth:`start` sets them. Once it takes no more (``full``) a reader stops at the end of
    its stretch of lines; whatever was written after the cases the block takes is kept, and
    starts the next block (:meth:`cut`).
    """

    def start(self, want: cython.Py_ssize_t, room: cython.Py_ssize_t) -> None:
        """Begin a block of at most ``want`` cases (at least one) and ``room`` bytes, with the cases
        the last one left (measured again, a line end at a time)."""
        if want < 1:
            raise ValueError(f"a block holds at least one case, not {want}")
        self.want, self.room, self.taken, self.mark, self.full = want, room, 0, 0, False
        at: cython.Py_ssize_t = 0
        newline: cython.p_const_char
        while at < self.size and not self.full:
            newline = cython.cast(cython.p_const_char, memchr(self.data + at, 10, self.size - at))
            at = newline - self.data + 1
            took(self, at)

    def add(self, text: bytes) -> None:
        """One case's canonical text, found in Python (UTF-8)."""
        size: cython.Py_ssize_t = len(text)
        at: cython.p_char = reserve(self, size + 1)  # (never NULL, which reserve of 0 bytes may be)
        memcpy(at, cython.cast(cython.p_const_char, text), size)
        at[size] = 10
        self.size += size + 1
        took(self, self.size)

    def cut(self) -> tuple:
        """The block: the texts of the cases it takes, each ending in a newline, and how many.
        What was written after them stays, to start the next block."""
        block: bytes = PyBytes_FromStringAndSize(self.data, self.mark)
        count: cython.Py_ssize_t = self.taken
        memmove(self.data, self.data + self.mark, self.size - self.mark)
        self.size -= self.mark
        self.taken, self.mark, self.full = 0, 0, True
        return block, count
