"""A chunk's inputs as a blocked Bloom filter: "is this deck in that chunk?" without reading the chunk.

Finding one deck in the history is the only question asked of every stored case at once;
a per-case index answered it at the price of a B-tree entry per stored case, more than the
native core spends solving one. A chunk instead keeps a filter of its inputs' 64-bit
hashes: :data:`BITS_PER_CASE` bits a case in blocks of :data:`BLOCK_BYTES`, each hash
setting :data:`PROBES` bits of one block. A search reads one block of each chunk (where it
starts is :func:`block_of`, which SQL computes as ``key % blocks * 64`` from :func:`key`),
tests it (:func:`holds`), and reads only the chunks that may hold the deck: about one in a
thousand of those that do not.

Cython compiles this module where it can (``setup.py``), as it does the engines' cores: a
filter is made for every stored chunk, and its loop in Python costs a microsecond a case.
Uncompiled it is the same code, run as Python.

>>> from array import array
>>> hashes = array("Q", [0x9E3779B97F4A7C15 * k & 0xFFFFFFFFFFFFFFFF for k in range(1, 1001)])
>>> bits = build(hashes)
>>> len(bits) == blocks_for(1000) * BLOCK_BYTES, all(holds(bits, h) for h in hashes)
(True, True)
>>> sum(holds(bits, 0xABCDEF * k) for k in range(1, 10001)) < 30   # false positives
True
"""

from __future__ import annotations

try:
    import cython
except ModuleNotFoundError:  # run as Python where Cython is not installed: its annotations are only text
    cython = None

#: A block: one cache line, 512 bits; every bit of a hash lands in the same block.
BLOCK_BYTES = 64
BLOCK_BITS = BLOCK_BYTES * 8
#: Bits of filter per case, and bits a hash sets: about one false positive in a thousand.
BITS_PER_CASE = 16
PROBES = 7
#: splitmix64's finaliser spreads a hash before it is cut into probes (which must not repeat the bits
#: that chose the block); the mask keeps plain Python's integers at 64 bits.
MIX1, MIX2, MASK = 0xBF58476D1CE4E5B9, 0x94D049BB133111EB, 0xFFFFFFFFFFFFFFFF


def blocks_for(count: cython.Py_ssize_t) -> cython.Py_ssize_t:
    """Blocks of the filter of ``count`` inputs (at least one)."""
    return max(1, (count * BITS_PER_CASE + BLOCK_BITS - 1) // BLOCK_BITS)


def key(h: cython.ulonglong) -> cython.longlong:
    """The non-negative 63-bit number a hash is filed under (a SQL BIGINT holds it): in a filter of
    ``n`` blocks its block is block number ``key(h) % n``."""
    return h >> 1


def block_of(h: cython.ulonglong, blocks: cython.Py_ssize_t) -> cython.Py_ssize_t:
    """Where, in bytes, the block of hash ``h`` starts in a filter of ``blocks`` blocks."""
    return (h >> 1) % blocks * BLOCK_BYTES


def build(hashes: cython.ulonglong[:]) -> bytes:
    """The filter of a chunk's input hashes (an ``array('Q')``)."""
    count: cython.Py_ssize_t = len(hashes)
    blocks: cython.Py_ssize_t = blocks_for(count)
    bits = bytearray(blocks * BLOCK_BYTES)
    view: cython.uchar[:] = bits
    i: cython.Py_ssize_t
    j: cython.int
    h: cython.ulonglong
    g: cython.ulonglong
    base: cython.Py_ssize_t
    bit: cython.Py_ssize_t
    m1: cython.ulonglong = MIX1
    m2: cython.ulonglong = MIX2
    mask: cython.ulonglong = MASK
    for i in range(count):
        h = hashes[i]
        base = (h >> 1) % blocks * BLOCK_BITS
        g = (h ^ (h >> 30)) * m1 & mask
        g = (g ^ (g >> 27)) * m2 & mask
        g = g ^ (g >> 31)
        for j in range(PROBES):
            bit = base + ((g >> (9 * j)) & 511)
            view[bit >> 3] |= 1 << (bit & 7)
    return bytes(bits)


def holds(bloom: bytes, h: cython.ulonglong) -> cython.bint:
    """Whether hash ``h`` may be in a filter: given the whole filter, or only the block of ``h`` in it
    (:func:`block_of`), as a search reads it."""
    start: cython.Py_ssize_t = 0
    if len(bloom) != BLOCK_BYTES:
        start = block_of(h, len(bloom) // BLOCK_BYTES)
    m1: cython.ulonglong = MIX1
    m2: cython.ulonglong = MIX2
    mask: cython.ulonglong = MASK
    g: cython.ulonglong = (h ^ (h >> 30)) * m1 & mask
    g = (g ^ (g >> 27)) * m2 & mask
    g = g ^ (g >> 31)
    j: cython.int
    bit: cython.int
    for j in range(PROBES):
        bit = (g >> (9 * j)) & 511
        if not bloom[start + (bit >> 3)] & (1 << (bit & 7)):
            return False
    return True
