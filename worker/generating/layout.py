"""How a generated file is laid out: what a problem setter varies to test a solution's reading.

Syntax (``dealer generate --layout``): items separated by commas, each allowed where the
game's statement allows it (see each engine's "Input" notes):

- ``per-line=K`` (decks): K cards a line, a deck starting a line of its own (default 26:
  two lines a deck, as the problems' samples are written; 52 is a deck a line);
- ``flow`` (decks): the lines of K cards run on from one deck into the next, so that a
  deck may start in the middle of a line;
- ``ragged``: random runs of spaces and tabs between the tokens, line breaks anywhere a
  deck allows them and blank lines (hands stay one a line, with blank lines between);
- ``sorted`` (mahjong): a hand's tiles in the judge's order, not in the order drawn;
- ``crlf``: lines end in CR LF;
- ``no-terminator``: no ``0`` or ``#`` line at the end (the readers warn; the reference
  solutions may not stop);
- ``no-final-newline``: the file's last line has no line break.

>>> from worker.generating.makers import maker
>>> parse_layout(maker("accordion"), "per-line=13, crlf")
Layout(per_line=13, flow=False, ragged=False, sorted=False, crlf=True, terminator=True, final_newline=True)
>>> str(parse_layout(maker("accordion"), "crlf,per-line=13"))
'per-line=13,crlf'
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from worker.generating.deal import lay
from worker.generating.makers import Maker
from worker.generating.errors import GenerateError
from worker.generating.prng import Rng

#: What separates tokens in a ``ragged`` layout (and, for decks, may end a line).
_GAPS = (" ", " ", " ", "  ", "\t", " \t", "   ", "\t ")
_BREAKS = ("\n", "\n", "\n", " \n", "\n\n", "\t\n", "\n \n")


@dataclass(frozen=True)
class Layout:
    per_line: int = 26
    flow: bool = False
    ragged: bool = False
    sorted: bool = False
    crlf: bool = False
    terminator: bool = True
    final_newline: bool = True

    def __str__(self) -> str:
        default = Layout()
        items = [f"per-line={self.per_line}"] if self.per_line != default.per_line else []
        items += [name for name, on in (("flow", self.flow), ("ragged", self.ragged), ("sorted", self.sorted),
                                         ("crlf", self.crlf), ("no-terminator", not self.terminator),
                                         ("no-final-newline", not self.final_newline)) if on]
        return ",".join(items)

    @property
    def newline(self) -> str:
        return "\r\n" if self.crlf else "\n"

    def write(self, maker: Maker, texts: list[str], rng: Rng, first: int) -> bytes:
        """A block's cases, the first being case ``first`` (from 0) of the file, as the file
        holds them; with ``flow`` the bytes may end in the middle of a line (see :meth:`end`)."""
        if self.sorted:
            texts = maker.canonicals(texts)
        if self.ragged:
            return _ragged(texts, rng, maker.wraps, self.newline).encode("ascii")
        if not maker.wraps:
            return lay(texts, maker.tokens, crlf=self.crlf)
        start = first * maker.tokens % self.per_line if self.flow else 0
        return lay(texts, self.per_line, self.flow, self.crlf, start)

    def end(self, maker: Maker, last: bytes) -> bytes:
        """The file's end after the last block, ``last``: how that block must end (a line
        that runs on is ended), then the terminator line."""
        newline = self.newline.encode()
        if last.endswith(b" "):
            last = last[:-1] + newline
        tail = last + (f"{_TERMINATORS[maker.slug]}{self.newline}".encode() if self.terminator else b"")
        return tail if self.final_newline else tail[: -len(newline)]


_TERMINATORS = {"10-20-30": "0", "accordion": "#", "mahjong": "0"}


def _ragged(texts: list[str], rng: Rng, wraps: bool, newline: str) -> str:
    """Cases with random whitespace: between a deck's cards any gap or line break; a hand on
    a line of its own, with gaps before, between and after its tiles, and blank lines."""
    parts = []
    for text in texts:
        tokens = text.split(" ")
        if wraps:
            for token in tokens:
                parts.append(token)
                parts.append(rng.choice(_BREAKS) if rng.below(8) == 0 else rng.choice(_GAPS))
        else:
            if rng.below(4) == 0:
                parts.append(rng.choice(_GAPS))
            for k, token in enumerate(tokens):
                parts.append(token)
                parts.append(rng.choice(_GAPS) if k < len(tokens) - 1 or rng.below(4) == 0 else "")
            parts.append(rng.choice(_BREAKS) if rng.below(4) == 0 else "\n")
    if not parts[-1].endswith("\n"):
        parts.append("\n")
    text = "".join(parts)
    return text.replace("\n", newline) if newline != "\n" else text


def parse_layout(maker: Maker, text: str) -> Layout:
    """The layout ``text`` asks for, for ``maker``'s game; :class:`GenerateError` says what is wrong."""
    layout = Layout()
    seen: set[str] = set()
    for item in (part.strip() for part in text.split(",")):
        name, _, value = item.partition("=")
        if name in seen:
            raise GenerateError(f"{name} is given twice")
        seen.add(name)
        if name == "per-line":
            if not maker.wraps:
                raise GenerateError(f"a {maker.slug} {maker.unit} is one line: per-line is for decks")
            if not value.isdigit() or not 1 <= int(value) <= maker.tokens:
                raise GenerateError(f'per-line takes a number of cards from 1 to {maker.tokens}, not "{value}"')
            layout = replace(layout, per_line=int(value))
            continue
        if value:
            raise GenerateError(f'{name} takes no value ("{item}")')
        if name in ("flow", "sorted") and (name == "flow") != maker.wraps:
            raise GenerateError(f"{name} is for {'decks' if name == 'flow' else 'mahjong hands'}")
        flags = {"flow": {"flow": True}, "ragged": {"ragged": True}, "sorted": {"sorted": True},
                 "crlf": {"crlf": True}, "no-terminator": {"terminator": False},
                 "no-final-newline": {"final_newline": False}}
        if name not in flags:
            raise GenerateError(f'"{item}" is not a layout (per-line=K, flow, ragged, sorted, crlf, '
                                "no-terminator, no-final-newline)")
        layout = replace(layout, **flags[name])
    if layout.ragged and ("per-line" in seen or layout.flow):
        raise GenerateError("ragged makes its own lines: leave out per-line and flow")
    return layout
