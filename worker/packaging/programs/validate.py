"""The input validator of a Dealer problem package (the Kattis problem package format): it reads
a test file on standard input and exits 42 when the file is one the judge's format allows, or
43 after one line on standard error saying what is wrong, at which line and column (columns
count bytes from 1). It holds the three games' formats; ``GAME`` names the package's.

What it refuses is what Dealer's readers refuse: bytes that are not text, a token that is no
card or tile (lower case included), a deck or hand of the wrong size, a deck that is not one
standard deck, a hand with five copies of a tile, a file that ends inside a deck, a file with
no cases. And, stricter than the readers, which warn: anything after the terminator. A file
without its terminator is allowed (the cases run to the end of the file)."""

import sys
from collections import Counter
from collections.abc import Iterator

GAME = "10-20-30"

ACCEPT, REJECT = 42, 43
WHITESPACE = b" \t\r\n\x0b\x0c"
MAX_TOKEN = 64
RANKS, SUITS = "A23456789TJQK", "CDHS"
TILES = {f"{rank}{suit}" for suit in "TSW" for rank in range(1, 10)} | {
    "DONG", "NAN", "XI", "BEI", "ZHONG", "FA", "BAI"}

Token = tuple[int, int, str]  # line, column, text


class Refused(Exception):
    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(f"line {line}, column {column}: {message}")


def lines(data: bytes) -> list[list[Token]]:
    """Each line's tokens, once every byte is known to be text."""
    if data.startswith(b"\xef\xbb\xbf"):
        raise Refused("the file starts with a byte-order mark: save it as plain text", 1, 1)
    result = []
    for number, line in enumerate(data.split(b"\n"), 1):
        tokens: list[Token] = []
        start = None
        for column, byte in enumerate(line + b" ", 1):
            if byte in WHITESPACE:
                if start is not None:
                    tokens.append((number, start, line[start - 1 : column - 1].decode("ascii")))
                    start = None
                continue
            if not 0x20 < byte < 0x7F:
                raise Refused(f"byte 0x{byte:02x} is not text", number, column)
            if start is None:
                start = column
            elif column - start >= MAX_TOKEN:
                raise Refused(f"a token longer than {MAX_TOKEN} characters", number, start)
        result.append(tokens)
    return result


def nothing_after(rest: Iterator[Token], terminator: str) -> None:
    for line, column, _ in rest:
        raise Refused(f'text after the terminating "{terminator}"', line, column)


def ten_twenty_thirty(data: bytes) -> None:
    tokens = iter([token for line in lines(data) for token in line])
    decks = 0
    for line, column, text in tokens:
        if text.isdigit() and not text.strip("0"):
            nothing_after(tokens, "0")
            break
        decks += 1
        deck = [(line, column, text), *(next(tokens, None) for _ in range(51))]
        values = []
        for place, token in enumerate(deck, 1):
            if token is None:
                raise Refused(f"deck {decks} ends at end of file after {place - 1} of 52 cards", line, column)
            at_line, at_column, card = token
            value = int(card) if card.isdigit() and len(card.lstrip("0")) <= 2 else -1
            if value == 0:
                raise Refused(f'"{card}" is not a card value (1-10): this is card {place} of deck {decks}, and '
                              "a 0 ends the input only where a deck would start", at_line, at_column)
            if not 1 <= value <= 10:
                raise Refused(f'"{card}" is not a card value (1-10)', at_line, at_column)
            values.append(value)
        for value, count in sorted(Counter(values).items()):
            most = 16 if value == 10 else 4
            if count > most:
                raise Refused(f"deck {decks} is not a standard deck: {count} cards of value {value} "
                              f"(at most {most})", line, column)
    if not decks:
        raise Refused("the file has no decks", 1, 1)


def accordion(data: bytes) -> None:
    tokens = iter([token for line in lines(data) for token in line])
    decks = 0
    for line, column, text in tokens:
        if text.startswith("#"):
            nothing_after(tokens, "#")
            break
        decks += 1
        seen: set[str] = set()
        deck = [(line, column, text), *(next(tokens, None) for _ in range(51))]
        for place, token in enumerate(deck, 1):
            if token is None:
                raise Refused(f"deck {decks} ends at end of file after {place - 1} of 52 cards", line, column)
            at_line, at_column, card = token
            if card.startswith("#"):
                raise Refused(f'deck {decks} is cut short by "#" after {place - 1} of 52 cards', line, column)
            if len(card) != 2 or card[0] not in RANKS or card[1] not in SUITS:
                upper = card.upper()
                if len(upper) == 2 and upper[0] in RANKS and upper[1] in SUITS:
                    raise Refused(f'"{card}": cards are written in upper case', at_line, at_column)
                raise Refused(f'"{card}" is not a card (rank {RANKS}, suit {SUITS})', at_line, at_column)
            if card in seen:
                raise Refused(f"{card} appears twice in deck {decks}", at_line, at_column)
            seen.add(card)
    if not decks:
        raise Refused("the file has no decks", 1, 1)


def mahjong(data: bytes) -> None:
    rest = iter([line for line in lines(data) if line])
    hands = 0
    for hand in rest:
        line, column, first = hand[0]
        if first == "0":
            nothing_after(iter([*hand[1:], *(token for later in rest for token in later)]), "0")
            break
        hands += 1
        copies: Counter[str] = Counter()
        for at_line, at_column, tile in hand:
            if tile not in TILES:
                if tile.upper() in TILES:
                    raise Refused(f'"{tile}": tiles are written in upper case', at_line, at_column)
                raise Refused(f'unknown tile "{tile}"', at_line, at_column)
            copies[tile] += 1
            if copies[tile] == 5:
                raise Refused(f"5 copies of {tile} in one hand (at most 4)", at_line, at_column)
        if len(hand) != 13:
            raise Refused(f"hand has {len(hand)} tiles, expected 13", line, column)
    if not hands:
        raise Refused("the file has no hands", 1, 1)


CHECKS = {"10-20-30": ten_twenty_thirty, "accordion": accordion, "mahjong": mahjong}


def main() -> int:
    data = sys.stdin.buffer.read()
    try:
        if not data.strip(WHITESPACE):
            raise Refused("the file is empty" if not data else "the file holds only whitespace", 1, 1)
        CHECKS[GAME](data)
    except Refused as refusal:
        print(refusal, file=sys.stderr)
        return REJECT
    return ACCEPT


if __name__ == "__main__":
    sys.exit(main())
