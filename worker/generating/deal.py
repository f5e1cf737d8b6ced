"""Drawing cases and laying them out, in bulk: what a large file spends its time on.

Three operations, each in the compiled core (:mod:`.core`, when it is built and the
engines use theirs) and here in Python, drawing the same numbers from the
same :class:`~.prng.Rng` and giving the same texts and bytes (``tests/generating`` holds
them to it), so a file does not depend on the core that made it:

- :func:`shuffles`: random arrangements of a set of tokens (a deck, a wall of tiles), as
  canonical texts (the tokens joined by single spaces);
- :func:`swaps`: decks with two cards swapped (a walk's steps, see :mod:`.search`);
- :func:`lay`: texts written as lines of a judge file, so many tokens a line.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import ModuleType

from worker.engines import native
from worker.generating.prng import Rng

#: The compiled core where it is built (else ``None``): used while the engines use theirs
#: (:func:`worker.engines.use_native_core`, ``DEALER_PURE_PYTHON``), see :func:`core`.
COMPILED = native.compiled("worker.generating")


def core() -> ModuleType | None:
    """The compiled core, when it is built and the native core is not turned off."""
    return COMPILED if native.enabled else None


def shuffles(rng: Rng, tokens: Sequence[str], count: int, take: int) -> list[str]:
    """``count`` arrangements of ``take`` of ``tokens``, each drawn afresh from ``tokens`` in
    their given order by :meth:`Rng.shuffle`'s Fisher-Yates (stopped after ``take`` places).

    >>> shuffles(Rng(1), ["a", "b", "c", "d"], 3, 2)
    ['c d', 'd c', 'b d']
    """
    compiled = core()
    if compiled is not None:
        texts: list[str]
        texts, rng.state = compiled.shuffles(rng.state, list(tokens), count, take)
        return texts
    return shuffles_py(rng, tokens, count, take)


def shuffles_py(rng: Rng, tokens: Sequence[str], count: int, take: int) -> list[str]:
    """:func:`shuffles` in Python."""
    n = len(tokens)
    places = min(take, n - 1)
    below = rng.below
    texts = []
    for _ in range(count):
        order = list(tokens)
        for i in range(places):
            j = i + below(n - i)
            order[i], order[j] = order[j], order[i]
        texts.append(" ".join(order[:take]))
    return texts


def swaps(rng: Rng, starts: Sequence[str], count: int) -> list[str]:
    """``count`` decks, each a uniform pick of ``starts`` with two of its cards swapped: two
    places drawn uniformly, again until their cards differ.

    >>> swaps(Rng(1), ["a b c", "x y y"], 3)
    ['y x y', 'y x y', 'y y x']
    """
    compiled = core()
    if compiled is not None:
        texts: list[str]
        texts, rng.state = compiled.swaps(rng.state, list(starts), count)
        return texts
    return swaps_py(rng, starts, count)


def swaps_py(rng: Rng, starts: Sequence[str], count: int) -> list[str]:
    """:func:`swaps` in Python."""
    below = rng.below
    texts = []
    for _ in range(count):
        cards = starts[below(len(starts))].split(" ")
        while True:
            i, j = below(len(cards)), below(len(cards))
            if cards[i] != cards[j]:
                break
        cards[i], cards[j] = cards[j], cards[i]
        texts.append(" ".join(cards))
    return texts


def lay(texts: Sequence[str], per_line: int, flow: bool = False, crlf: bool = False, start: int = 0) -> bytes:
    """The texts as lines of at most ``per_line`` tokens, each token followed by a space or a
    line break (``\\r\\n`` with ``crlf``). A text starts a line of its own, unless ``flow``:
    then lines run on from one text into the next, the first line already holding ``start``
    tokens, and the bytes may end with a space, in the middle of a line.

    >>> lay(["a b c", "d e"], 2)
    b'a b\\nc\\nd e\\n'
    >>> lay(["a b c", "d e"], 2, flow=True, start=1)
    b'a\\nb c\\nd e\\n'
    """
    compiled = core()
    if compiled is not None:
        return compiled.lay(list(texts), per_line, flow, crlf, start)  # type: ignore[no-any-return]
    return lay_py(texts, per_line, flow, crlf, start)


def lay_py(texts: Sequence[str], per_line: int, flow: bool = False, crlf: bool = False, start: int = 0) -> bytes:
    """:func:`lay` in Python."""
    newline = "\r\n" if crlf else "\n"
    parts: list[str] = []
    on_line = start if flow else 0
    for text in texts:
        tokens = text.split(" ")
        last = len(tokens) - 1
        for k, token in enumerate(tokens):
            on_line += 1
            if on_line >= per_line or (k == last and not flow):
                parts.append(token + newline)
                on_line = 0
            else:
                parts.append(token + " ")
    return "".join(parts).encode("ascii")
