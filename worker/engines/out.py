"""What the native cores share (compiled only; its C interface is ``out.pxd``, which they ``cimport``).

- :class:`Core`: a game's per-case, batch, chunk and reading calls, over the few C functions of its
  own game (one that solves a case, one that writes a record's detail, the readers' line functions).
- :class:`Out`, a growing buffer: a batch's or chunk's judge lines and traces are written into two and
  handed over as one ``str`` or ``bytes`` each (a Python object a case would cost more than solving it).

``tests/engines/test_native.py`` holds every core to the Python engines, record for record.
"""

import cython
from cython.cimports.cpython import array
from cython.cimports.cpython.bytes import PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cython.cimports.cpython.object import PyObject_GenericSetAttr
from cython.cimports.cpython.unicode import (PyUnicode_AsUTF8AndSize, PyUnicode_DecodeASCII,
                                             PyUnicode_DecodeUTF8)
from cython.cimports.libc.limits import LLONG_MAX, UINT_MAX
from cython.cimports.libc.stdlib import free, realloc
from cython.cimports.libc.string import memcpy, memmove, memset

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
    """:func:`worker.engines.chunks.case_hash` of ``size`` bytes at ``s`` (see there)."""
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


_spare = cython.declare(list, [])
# A case's line and trace (Core.solve, and a batch's trace before its record's head), written and taken
# with no Python code in between.
_line = cython.declare(Out, Out())
_trace = cython.declare(Out, Out())


@cython.cfunc
def _borrow() -> Out:
    """A buffer given back before (its memory mapped: fresh memory costs a page fault every 4 KiB), or
    a new one; four are kept, for two batches or chunks at once."""
    out: Out = _spare.pop() if _spare else Out()
    out.size = 0
    return out


@cython.cfunc
def _give_back(out: Out) -> cython.void:
    if len(_spare) < 4:
        _spare.append(out)


@cython.cfunc
@cython.exceptval(-1, check=True)
def _solve_text(game: Core, text: str, index: cython.longlong, traced: cython.bint, json: cython.bint,
                lines: Out, number: cython.p_int, extra: cython.p_int) -> cython.int:
    """``game.case`` of ``text``, its trace into ``_trace``; 0 unless ASCII, as canonical texts are."""
    size = cython.declare(cython.Py_ssize_t)
    if not text.isascii():  # (and a lone surrogate has no UTF-8)
        return 0
    s: cython.p_const_char = PyUnicode_AsUTF8AndSize(text, cython.address(size))
    return game.case(s, size, index, traced, json, lines, _trace, number, extra)


@cython.cclass
class Core:
    """A game's native core over its few C functions (see out.pxd): the engine's per-case, batch,
    chunk and reading calls in C, which the game's ``core`` module exports as its own."""

    def solve(self, text: str, index: cython.longlong, traced: cython.bint, json: cython.bint) -> object:
        """``(code, number, detail, judge line, trace)`` of ``text`` (``CaseSolver`` in out.pxd; the detail
        as a record spells it, the trace ``None`` unless ``traced``), or ``None`` where the core leaves it:
        ``Engine.solve`` makes its Result."""
        number: cython.int = 0
        extra: cython.int = 0
        _line.size = _trace.size = 0
        code: cython.int = _solve_text(self, text, index, traced, json, _line, cython.address(number),
                                       cython.address(extra))
        if code == 0:
            return None
        trace: object = _trace.take() if traced else None
        self.detail(_trace, number, extra)
        return code, number, _trace.take(), _line.take_text(), trace

    def solve_batch(self, texts: list, first: cython.longlong, traced: cython.bint, one: object) -> tuple:
        """:meth:`Engine.solve_batch <worker.engines.engine.Engine.solve_batch>`, ``one`` solving what the core
        leaves."""
        lines: Out = _borrow()
        records: Out = _borrow()
        text: str
        code: cython.int
        number: cython.int
        extra: cython.int
        word: bytes
        try:
            for text in texts:
                code = _solve_text(self, text, first, traced, True, lines, cython.address(number),
                                   cython.address(extra))
                if code == 0:
                    answer: tuple = one(first, text, traced)
                    put_text(lines, answer[0])
                    record: bytes = answer[1]
                    if traced:
                        put(records, record, len(record))
                        put(records, b"\n", 1)
                elif traced:
                    word = self.words[code - 1]
                    put(records, b'{"index":', 9)
                    put_int(records, first)
                    put(records, b',"outcome":"', 12)
                    put(records, word, len(word))
                    put(records, b'","number":', 11)
                    put_int(records, number)
                    put(records, b',"detail":', 10)
                    self.detail(records, number, extra)
                    put(records, b',"trace":', 9)
                    put(records, _trace.data, _trace.size)
                    put(records, b"}\n", 2)
                    _trace.size = 0
                put(lines, b"\n", 1)
                first += 1
            return lines.take_text(), records.take()
        finally:
            _give_back(lines)
            _give_back(records)

    def solve_chunk(self, inputs: bytes, first: cython.longlong, traced: cython.bint, deadline: object,
                    one: object) -> tuple:
        """:meth:`Engine.solve_chunk <worker.engines.engine.Engine.solve_chunk>`: a
        :class:`~worker.engines.chunks.ChunkSolution`'s fields, ``one`` solving what the core leaves."""
        s: cython.p_const_char = PyBytes_AS_STRING(inputs)
        size: cython.Py_ssize_t = PyBytes_GET_SIZE(inputs)
        count: cython.Py_ssize_t = inputs.count(b"\n") + 1 if size else 0
        outcomes: bytes = PyBytes_FromStringAndSize(cython.NULL, count)
        codes: cython.p_uchar = cython.cast(cython.p_uchar, PyBytes_AS_STRING(outcomes))
        numbers: array.array = array.clone(_INTS, count, False)
        extras: array.array = array.clone(_INTS, count, False)
        solve_us: array.array = array.clone(_UINTS, count, True)  # (0 for a case not started)
        hashes: array.array = array.clone(_WORDS, count, False)
        offsets: array.array = array.clone(_UINTS, count + 1, False)
        stop: cython.longlong = LLONG_MAX
        if deadline is not None:
            seconds: cython.double = deadline
            if seconds <= 0:
                stop = 0
            elif seconds < 9e9:  # (later: never, as None, and beyond a long long of nanoseconds; so is NaN)
                stop = cython.cast(cython.longlong, seconds * 1e9)
        lines: Out = _borrow()
        traces: Out = _borrow()
        k: cython.Py_ssize_t
        at: cython.Py_ssize_t = 0
        end: cython.Py_ssize_t
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
                end = line_end(s, at, size, True, size)
                hashes.data.as_ulonglongs[k] = _hash(s + at, end - at)
                code, number, extra = 0, 0, 0
                if started == count and now >= stop:
                    started = k
                if started == count:
                    code = self.case(s + at, end - at, first + k, traced, False, lines, traces,
                                     cython.address(number), cython.address(extra))
                    if code == 0:
                        code = _fallback(one, s + at, end - at, first + k, traced, lines, traces,
                                         cython.address(number), cython.address(extra))
                    then = now_ns()
                    solve_us.data.as_uints[k] = (then - now) // 1000
                    now = then
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
            _give_back(lines)
            _give_back(traces)

    def read(self, data: bytes, at: cython.Py_ssize_t, final: cython.bint, line: cython.longlong,
             count: cython.longlong, per_line: cython.int, flow: cython.bint) -> tuple:
        """``(cases, at, line, count, stopped)`` (:func:`~worker.engines.handover.read_cases`): the Case
        values read from ``at`` in ``data``, where a case starts a line, while the lines are as judge
        files write them (``per_line`` and ``flow``: the file's layout, 0 for none); then as
        :meth:`read_inputs`."""
        cases: list = []
        return (cases, *self.read_from(self, data, at, final, line, count, cases, None, per_line, flow))

    def read_inputs(self, data: bytes, at: cython.Py_ssize_t, final: cython.bint, line: cython.longlong,
                    count: cython.longlong, block: Block, per_line: cython.int, flow: cython.bint) -> tuple:
        """``(at, line, count, stopped)`` (:class:`~worker.engines.handover.InputBlocks`): as :meth:`read`,
        the canonical texts into ``block`` until it is full; where the next line starts, its number, the
        count of cases after those read, and whether the reading stopped at lines left to Python."""
        return self.read_from(self, data, at, final, line, count, None, block, per_line, flow)

    def exports(self) -> tuple:
        """A game's ``core`` module's names: these five calls and ``InputBlock``, the buffer of read_inputs,
        for handover.InputBlocks (which cannot import out.py: out imports it)."""
        return self.solve, self.solve_batch, self.solve_chunk, self.read, self.read_inputs, Block


@cython.cfunc
def core(case: CaseSolver, detail: Detail, words: tuple, read_from: ReadFrom, plain_line: PlainLine,
         one_card: OneCard, whole: cython.ulonglong) -> Core:
    """A game's Core: ``words`` its outcomes as records spell them; ``read_from`` its own reading
    loop, or NULL for :func:`read_decks` over ``plain_line`` and ``one_card``, a good deck's cards
    adding up to ``whole``."""
    made: Core = Core()
    made.case, made.detail, made.words = case, detail, words
    made.read_from = read_decks if read_from == cython.NULL else read_from
    made.plain_line, made.one_card, made.whole = plain_line, one_card, whole
    return made


@cython.cfunc
@cython.exceptval(-1)
def _fallback(one: object, s: cython.p_const_char, size: cython.Py_ssize_t, index: cython.longlong,
              traced: cython.bint, lines: Out, traces: Out, number: cython.p_int,
              extra: cython.p_int) -> cython.int:
    """A case of a chunk the core left to Python: ``one(index, text, traced)``'s ``(code, number,
    extra, line, packed trace)`` written as the core writes its own (nothing for code 0: not solved)."""
    answer: tuple = one(index, PyUnicode_DecodeUTF8(s, size, cython.NULL), traced)
    code: cython.int = answer[0]
    if code < 0 or code > 255:
        raise ValueError(f"an outcome code is 0..255, not {code}")
    if code:
        number[0], extra[0] = answer[1], answer[2]
        put_text(lines, answer[3])
        if traced:
            packed: bytes = answer[4]
            put(traces, packed, len(packed))
    return code


@cython.cfunc
@cython.exceptval(-1)
def put_text(out: Out, text: str) -> cython.int:
    """An ASCII ``str`` as it is (the engines' lines: nothing in them to escape)."""
    length = cython.declare(cython.Py_ssize_t)
    s: cython.p_const_char = PyUnicode_AsUTF8AndSize(text, cython.address(length))
    return put(out, s, length)


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
    """A judge file's canonical inputs a block at a time (:class:`worker.engines.handover.InputBlocks`
    on the native core), each text ending in a newline: a core's ``read_inputs`` writes those it reads
    (``took`` in out.pxd), Python those its readers find (:meth:`add`). What is written past the cases
    the block takes (see out.pxd) starts the next block (:meth:`cut`)."""

    def start(self, want: cython.Py_ssize_t, room: cython.Py_ssize_t) -> None:
        """Begin a block of at most ``want`` cases (at least one) and ``room`` bytes, with the cases
        the last one left (measured again, a line end at a time)."""
        if want < 1:
            raise ValueError(f"a block holds at least one case, not {want}")
        self.want, self.room, self.taken, self.mark, self.full = want, room, 0, 0, False
        at: cython.Py_ssize_t = 0
        while at < self.size and not self.full:
            at = line_end(self.data, at, self.size, True, self.size) + 1
            took(self, at)

    def add(self, text: bytes) -> None:
        """One case's canonical text, found in Python (UTF-8)."""
        put(self, text + b"\n", len(text) + 1)  # (never 0 bytes, whose reserve may be NULL)
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


# The longest line, and the most decks in one stretch of lines, that read_decks takes; beyond
# them the Python readers read on.
_LONGEST = cython.declare(cython.Py_ssize_t, 1024)
_MOST = cython.declare(cython.int, 8)
# A stretch's deck texts, each ending in a space (52 cards of at most three bytes with it), and
# room for one more line: here, or, for read_inputs, in its block past what it holds.
_STRETCH = cython.declare(cython.int, 9 * 156)
_stretch = cython.declare(cython.char[1404])
_deck_end = cython.declare(cython.int[8])  # where each deck's text ends, after its space
_where = cython.declare(cython.longlong[2][8])  # and the line and column of its first card


@cython.cfunc
def _give(texts: cython.p_char, decks: cython.int, written: cython.int, count: cython.longlong,
          cases: list, block: Block) -> cython.longlong:
    """A stretch's ``decks`` decks, read into ``texts`` (``written`` bytes): as Case values into
    ``cases``, or into ``block``; the count of decks after them."""
    k: cython.int
    first: cython.int = 0
    for k in range(decks):
        count += 1
        if block is None:
            cases.append(new_case(count, PyUnicode_DecodeASCII(texts + first, _deck_end[k] - first - 1,
                                                               cython.NULL), _where[k][0], _where[k][1]))
        else:
            texts[_deck_end[k] - 1] = 10
            took(block, block.size + _deck_end[k])
        first = _deck_end[k]
    if block is not None:
        block.size += written
    return count


@cython.cfunc
def read_decks(game: Core, data: bytes, at: cython.Py_ssize_t, final: cython.bint, line: cython.longlong,
               count: cython.longlong, cases: list, block: Block, per_line: cython.int,
               flow: cython.bint) -> tuple:
    """A deck game's reading loop (see ``ReadFrom`` in out.pxd), a *stretch* of whole lines at a time:
    from a deck's start to the first line end that is also a deck's end (in judge files, every deck's
    last line). A stretch of good cards, every deck whole (``game.whole``) and every line as the layout
    says, gives its decks; the first that is not is left to the Python readers (the terminator, an
    error, a deck ending mid-line for too long, a line longer than any judge file's). One loop: the
    compiler keeps the deck being read in registers."""
    s: cython.p_const_char = PyBytes_AS_STRING(data)
    size: cython.Py_ssize_t = PyBytes_GET_SIZE(data)
    start: cython.Py_ssize_t = at  # where the stretch starts
    start_line: cython.longlong = line
    stop: cython.Py_ssize_t
    j: cython.Py_ssize_t
    width: cython.int
    taken: cython.int  # cards taken from the line in one step
    column: cython.Py_ssize_t
    decks: cython.int = 0  # complete decks in the stretch
    cards: cython.int = 0  # cards of the deck being read
    held: cython.ulonglong = 0  # what they add up to
    with_line: cython.ulonglong = 0
    plain: cython.int
    texts: cython.p_char = _stretch  # the stretch's texts
    written: cython.int = 0  # their bytes
    at_line: cython.int  # the stretch's cards before the line
    on_line: cython.int  # and on it
    while at < size:
        stop = line_end(s, at, size, final, _LONGEST)
        if stop == -2:
            return start, start_line, count, True
        if stop == -1:
            break
        at_line = decks * 52 + cards
        if written == 0 and block is not None:
            texts = reserve(block, _STRETCH)
        plain = game.plain_line(s + at, stop - at, held, cython.address(with_line), texts + written)
        if cards + plain > 52:
            plain = 0
        j = at
        while j < stop:
            if plain:  # a plain line inside a deck, as judge files write them: taken whole
                taken, column, j = plain, 1, stop
                written += stop - at + 1  # (the line is there)
                texts[written - 1] = 32
                held = with_line
            else:  # any other line card by card
                while j < stop and is_space(s[j]):
                    j += 1
                if j == stop:
                    break
                width = game.one_card(s + j, stop - j, cython.address(held), texts + written)
                if width == 0:
                    return start, start_line, count, True
                taken, column = 1, j - at + 1
                written += width + 1
                j += width
            if cards == 0:
                if decks == _MOST:
                    return start, start_line, count, True
                _where[decks][0], _where[decks][1] = line, column
            cards += taken
            if cards == 52:
                if held != game.whole:
                    return start, start_line, count, True
                _deck_end[decks] = written
                cards, held = 0, 0
                decks += 1
        on_line = decks * 52 + cards - at_line
        # As the file's layout says (:class:`worker.engines.layout.Layout`); a blank line is in every layout.
        if per_line and on_line and on_line != (per_line if flow else min(per_line, 52 - at_line % 52)):
            return start, start_line, count, True
        line += 1
        at = stop + 1
        if cards == 0:  # the stretch ends here
            count = _give(texts, decks, written, count, cases, block)
            decks = written = 0
            start, start_line = min(at, size), line
            if block is not None and block.full:
                break
    if final and (decks or cards):  # a deck cut short by the end of the file
        return start, start_line, count, True
    return start, start_line, count, False
