"""The generator's bulk work for the native core: Cython compiles this module to C.

:func:`shuffles`, :func:`swaps` and :func:`lay` are :mod:`.deal`'s, drawing from the same SplitMix64
stream (:mod:`.prng`) in the same order, so that both give the same texts and bytes
(``tests/generating/test_deal.py`` holds them to it). Compiled only: without a compiler
:mod:`.deal` runs its Python (see :mod:`worker.engines.native`).
"""

import cython
from cython.cimports.cpython.unicode import PyUnicode_AsUTF8AndSize, PyUnicode_DecodeASCII
from cython.cimports.libc.string import memcmp
from cython.cimports.worker.engines.out import Out, put, reserve

_GOLDEN = cython.declare(cython.ulonglong, 0x9E3779B97F4A7C15)
_MIX1 = cython.declare(cython.ulonglong, 0xBF58476D1CE4E5B9)
_MIX2 = cython.declare(cython.ulonglong, 0x94D049BB133111EB)
_M32 = cython.declare(cython.ulonglong, 0xFFFFFFFF)
#: At most this many tokens to shuffle, each at most this long (a wall of tiles: 136, 5).
_MAX_TOKENS = cython.declare(cython.int, 256)
_MAX_TOKEN = cython.declare(cython.int, 15)

_scratch = cython.declare(Out, Out())


@cython.cfunc
@cython.inline
@cython.exceptval(check=False)
def _next32(state: cython.p_ulonglong) -> cython.ulonglong:
    z: cython.ulonglong
    state[0] += _GOLDEN
    z = state[0]
    z = (z ^ (z >> 30)) * _MIX1
    z = (z ^ (z >> 27)) * _MIX2
    return (z ^ (z >> 31)) >> 32


@cython.cfunc
@cython.inline
@cython.exceptval(check=False)
def _below(state: cython.p_ulonglong, n: cython.ulonglong) -> cython.ulonglong:
    m: cython.ulonglong = _next32(state) * n
    low: cython.ulonglong = m & _M32
    threshold: cython.ulonglong
    if low < n:
        threshold = (_M32 + 1 - n) % n
        while low < threshold:
            m = _next32(state) * n
            low = m & _M32
    return m >> 32


def shuffles(seed: cython.ulonglong, tokens: list, count: cython.Py_ssize_t, take: cython.int) -> tuple:
    """``(texts, state)``: :func:`.deal.shuffles` from the stream at ``seed``, and the state after."""
    state: cython.ulonglong = seed
    n: cython.int = len(tokens)
    if n > _MAX_TOKENS or take > n or take < 1:
        raise ValueError(f"cannot take {take} of {n} tokens")
    names = cython.declare(cython.p_const_char[256])
    sizes = cython.declare(cython.Py_ssize_t[256])
    order = cython.declare(cython.int[256])
    text = cython.declare(cython.char[4096])
    k: cython.int
    for k in range(n):
        token: str = tokens[k]
        names[k] = PyUnicode_AsUTF8AndSize(token, cython.address(sizes[k]))
        if sizes[k] > _MAX_TOKEN or not token.isascii():
            raise ValueError(f"not a token: {token!r}")
    places: cython.int = take if take < n - 1 else n - 1
    texts: list = []
    i: cython.int
    j: cython.int
    swap: cython.int
    at: cython.Py_ssize_t
    drawn: cython.Py_ssize_t
    for drawn in range(count):
        for k in range(n):
            order[k] = k
        for i in range(places):
            j = i + cython.cast(cython.int, _below(cython.address(state), n - i))
            swap = order[i]
            order[i] = order[j]
            order[j] = swap
        at = 0
        for k in range(take):
            if k:
                text[at] = 32
                at += 1
            _copy(text + at, names[order[k]], sizes[order[k]])
            at += sizes[order[k]]
        texts.append(PyUnicode_DecodeASCII(text, at, cython.NULL))
    return texts, state


def swaps(seed: cython.ulonglong, starts: list, count: cython.Py_ssize_t) -> tuple:
    """``(texts, state)``: :func:`.deal.swaps` from the stream at ``seed``, and the state after."""
    state: cython.ulonglong = seed
    n: cython.ulonglong = len(starts)
    if n == 0:
        raise ValueError("no deck to start from")
    begin = cython.declare(cython.Py_ssize_t[64])
    end = cython.declare(cython.Py_ssize_t[64])
    text = cython.declare(cython.char[512])
    out = cython.declare(cython.char[512])
    size = cython.declare(cython.Py_ssize_t)
    texts: list = []
    s: cython.p_const_char
    tokens: cython.int
    i: cython.int
    j: cython.int
    k: cython.Py_ssize_t
    at: cython.Py_ssize_t
    drawn: cython.Py_ssize_t
    for drawn in range(count):
        start: str = starts[_below(cython.address(state), n)]
        s = PyUnicode_AsUTF8AndSize(start, cython.address(size))
        if size >= 512 or not start.isascii():
            raise ValueError(f"not a deck: {start!r}")
        tokens = 0
        begin[0] = 0
        for k in range(size + 1):
            if k == size or s[k] == 32:
                if tokens == 63:
                    raise ValueError(f"not a deck: {start!r}")
                end[tokens] = k
                tokens += 1
                begin[tokens] = k + 1
        if tokens < 2:
            raise ValueError(f"not a deck: {start!r}")
        while True:
            i = cython.cast(cython.int, _below(cython.address(state), tokens))
            j = cython.cast(cython.int, _below(cython.address(state), tokens))
            if end[i] - begin[i] != end[j] - begin[j] or memcmp(s + begin[i], s + begin[j], end[i] - begin[i]):
                break
        at = 0
        for k in range(tokens):
            if k:
                out[at] = 32
                at += 1
            m: cython.int = j if k == i else i if k == j else cython.cast(cython.int, k)
            _copy(out + at, s + begin[m], end[m] - begin[m])
            at += end[m] - begin[m]
        texts.append(PyUnicode_DecodeASCII(out, at, cython.NULL))
    return texts, state


@cython.cfunc
@cython.inline
@cython.exceptval(check=False)
def _copy(to: cython.p_char, source: cython.p_const_char, size: cython.Py_ssize_t) -> cython.void:
    k: cython.Py_ssize_t
    for k in range(size):
        to[k] = source[k]


def lay(texts: list, per_line: cython.int, flow: cython.bint, crlf: cython.bint, start: cython.int) -> bytes:
    """:func:`.deal.lay`."""
    out: Out = _scratch
    out.size = 0
    on_line: cython.int = start if flow else 0
    size = cython.declare(cython.Py_ssize_t)
    k: cython.Py_ssize_t
    s: cython.p_const_char
    to: cython.p_char
    c: cython.char
    for text in texts:
        if not isinstance(text, str) or not text.isascii():
            raise ValueError(f"not a case's text: {text!r}")
        s = PyUnicode_AsUTF8AndSize(text, cython.address(size))
        to = reserve(out, 2 * size + 2)  # each character, or a space that becomes \r\n, and the end's
        for k in range(size + 1):
            c = s[k] if k < size else 0
            if c != 32 and c != 0:
                to[0] = c
                to += 1
                continue
            on_line += 1
            if on_line >= per_line or (c == 0 and not flow):
                if crlf:
                    to[0] = 13
                    to += 1
                to[0] = 10
                on_line = 0
            else:
                to[0] = 32
            to += 1
        out.size = to - out.data
    return out.take()
