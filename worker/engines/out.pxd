# The C interface of out.py, which the cores cimport. The small writers are inline here: a call into
# another module per few bytes would cost more than the bytes.
from libc.string cimport memchr, memcpy

cdef extern from *:
    """
    #include <stdint.h>
    #include <string.h>
    #include <time.h>
    static inline uint64_t dealer_load64(const char* p) {
        uint64_t word;
        memcpy(&word, p, 8);
    #if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        word = __builtin_bswap64(word);
    #endif
        return word;
    }
    static inline long long dealer_now_ns(void) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        return (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
    }
    """
    # Eight bytes from ``p`` as a little-endian word, whatever this machine's order (case_hash).
    unsigned long long load64 "dealer_load64" (const char* p) noexcept nogil
    # CLOCK_MONOTONIC in nanoseconds: Python's time.monotonic() on the same clock.
    long long now_ns "dealer_now_ns" () noexcept nogil
    # The place of the lowest bit set in ``word`` (not 0). GCC's and Clang's, as clock_gettime is POSIX's:
    # where a compiler lacks either, setup.py installs without the cores.
    int lowest "__builtin_ctzll" (unsigned long long word) noexcept nogil


cdef class Out:
    cdef char* data
    cdef Py_ssize_t size
    cdef Py_ssize_t room
    cdef int grow(self, Py_ssize_t more) except -1
    cdef bytes take(self)
    cdef str take_text(self)


# What solves one case in C: each core's ``_case``. From the canonical text of ``size`` bytes at ``s``
# it writes the judge line (no newline) into ``lines`` and, with ``traced``, the trace into ``traces``:
# as stored, or with ``json`` as a record holds it (the two differ in 10-20-30 only). It sets
# ``number`` and ``extra`` and returns the outcome's code (1 + its place in the engine's outcomes), or
# writes nothing and returns 0: the case is left to Python.
ctypedef int (*CaseSolver)(const char* s, Py_ssize_t size, long long index, bint traced, bint json, Out lines,
                           Out traces, int* number, int* extra) except? -1
# A record's ``detail`` (``Result.detail`` as orjson writes it) of the case ``_case`` just solved.
ctypedef int (*Detail)(Out records, int number, int extra) except? -1


# A block of canonical inputs (Block in out.py) takes at most ``want`` cases and, but for its first,
# none ending past ``room`` bytes.
cdef class Block(Out):
    cdef Py_ssize_t want
    cdef Py_ssize_t room
    cdef readonly Py_ssize_t taken  # the cases the block takes so far
    cdef Py_ssize_t mark  # the buffer's size after them
    cdef readonly bint full  # it takes no more


# A game's reading loop over a judge file (mahjong's own, the deck games' read_decks): from ``at`` in
# ``data``, the cases as Case values into ``cases`` or their texts into ``block``; returns where the next
# line starts, its number, the count of cases, and whether a line is left to the Python readers.
ctypedef tuple (*ReadFrom)(Core game, bytes data, Py_ssize_t at, bint final, long long line, long long count,
                           list cases, Block block, int per_line, bint flow)
# How read_decks reads a game's cards: a plain line whole (its cards, 0 for another line; ``held`` the
# deck's cards so far, ``after`` them with the line's), or one card of another line (the bytes it spans,
# 0 for none); each copies its text, a space after each card.
ctypedef int (*PlainLine)(const char* s, Py_ssize_t size, unsigned long long held,
                          unsigned long long* after, char* copy) noexcept
ctypedef int (*OneCard)(const char* s, Py_ssize_t size, unsigned long long* held, char* copy) noexcept


# A game's C functions, under the Python API of Core in out.py.
cdef class Core:
    cdef CaseSolver case
    cdef Detail detail
    cdef tuple words
    cdef ReadFrom read_from
    cdef PlainLine plain_line
    cdef OneCard one_card
    cdef unsigned long long whole

cdef Core core(CaseSolver case, Detail detail, tuple words, ReadFrom read_from, PlainLine plain_line,
               OneCard one_card, unsigned long long whole)
cdef object new_case(long long index, str text, long long line, long long column)


cdef inline Py_ssize_t line_end(const char* s, Py_ssize_t at, Py_ssize_t size, bint final,
                                Py_ssize_t longest) noexcept:
    """Where the line from ``at`` ends: -1 where it goes on in the next block, -2 where it is longer
    than ``longest`` (left to Python)."""
    cdef const char* newline = <const char*>memchr(s + at, 10, size - at)
    cdef Py_ssize_t stop = size if newline == NULL else newline - s
    if stop - at > longest:
        return -2
    if newline == NULL and not final:
        return -1
    return stop


cdef inline bint is_space(char c) noexcept:
    """Whitespace between tokens, as the engines' readers take it (the newline ends a line)."""
    return c == 32 or c == 9 or c == 13 or c == 11 or c == 12


cdef inline char* reserve(Out out, Py_ssize_t more) except NULL:
    """Room for ``more`` bytes after the written ones: where they go."""
    if out.size + more > out.room:
        out.grow(more)
    return out.data + out.size


cdef inline int put(Out out, const char* text, Py_ssize_t length) except -1:
    memcpy(reserve(out, length), text, length)
    out.size += length
    return 0


cdef inline int put_int(Out out, long long value) except -1:
    """``value`` in decimal."""
    cdef char digits[24]
    cdef int n = 24
    cdef bint negative = value < 0
    # The magnitude, negated as unsigned: -LLONG_MIN does not fit in a long long.
    cdef unsigned long long rest = <unsigned long long>value
    if negative:
        rest = 0 - rest
    while True:
        n -= 1
        digits[n] = 48 + rest % 10
        rest //= 10
        if rest == 0:
            break
    if negative:
        n -= 1
        digits[n] = 45  # -
    return put(out, digits + n, 24 - n)


cdef inline void took(Block block, Py_ssize_t end) noexcept:
    """A case written, ending at ``end`` of the buffer: whether its block takes it."""
    if block.full:
        return
    if end <= block.room or block.taken == 0:
        block.taken += 1
        block.mark = end
        block.full = block.taken == block.want
    else:
        block.full = True

