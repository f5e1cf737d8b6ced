"""The wrong solutions a package ships: the classic mistakes its ``--cover`` file is built to catch
(``worker/generating/cover/``), each made from the game's accepted solution
(:mod:`.programs`) by changing the lines the mistake is about, so that every one is a small
self-contained program that is right but for its mistake."""

from __future__ import annotations

from dataclasses import dataclass

from worker.packaging.programs import source


@dataclass(frozen=True)
class Mistake:
    """A wrong solution: its file name, what it gets wrong, and the lines changed for it
    (each ``(lines of the accepted solution, what stands there instead)``)."""

    name: str
    what: str
    changes: tuple[tuple[str, str], ...]

    def program(self, game: str) -> str:
        """The wrong solution's source: the accepted one changed, its mistake named at its top."""
        text = source(game)
        for old, new in self.changes:
            if text.count(old) != 1:
                raise ValueError(f"{game}'s accepted solution no longer holds {old!r} once")
            text = text.replace(old, new)
        head = f'"""A WRONG solution, kept to show the test data catches it. Its mistake: {self.what}.\n\n'
        return text.replace('"""', head, 1)


MISTAKES: dict[str, tuple[Mistake, ...]] = {
    "10-20-30": (
        Mistake("seen_states_kept", "the states seen are kept from one deck to the next", (
            ("    seen: set[tuple[tuple[int, ...], ...]] = set()\n", "    seen = SEEN\n"),
            ("def play(", "SEEN: set[tuple[tuple[int, ...], ...]] = set()\n\n\ndef play("))),
        Mistake("last_three_first", "the three combinations are tried last three first", (
            ("((0, 1, -1), (0, -2, -1), (-3, -2, -1))", "((-3, -2, -1), (0, -2, -1), (0, 1, -1))"),)),
        Mistake("one_pickup_a_deal", "at most one pick-up after each deal", (
            ("                del pile[i]\n", "                del pile[i]\n            break\n"),)),
        Mistake("pickup_on_top", "picked-up cards go on top of the deck, not under it", (
            ("            deck.extend(pile[i] for i in places)\n",
             "            deck.extendleft(reversed([pile[i] for i in places]))\n"),)),
        Mistake("count_from_eighth", "N counts the deals after the first seven only", (
            ('f"Win : {dealt}"', 'f"Win : {dealt - 7}"'), ('f"Loss: {dealt}"', 'f"Loss: {dealt - 7}"'),
            ('f"Draw: {dealt}"', 'f"Draw: {dealt - 7}"'))),
        Mistake("emptied_piles_dealt_to", "a pile that empties stays in play and is dealt to again", (
            ("        if pile:\n            k += 1\n        else:\n            del alive[k]\n", "        k += 1\n"),
            ("        if not alive:\n", "        if not any(piles):\n"))),
        Mistake("states_without_deck", "a state is compared by its piles alone, without the deck", (
            ("(*map(tuple, piles), tuple(deck))", "tuple(map(tuple, piles))"),)),
    ),
    "accordion": (
        Mistake("one_before_three", "a move onto the pile one to the left is tried before three", (
            ("for distance in (3, 1):", "for distance in (1, 3):"),)),
        Mistake("only_dealt_card_moves", "only the card just dealt moves (and on), never a card it uncovers", (
            ("            else:\n                i += 1\n", "            else:\n                break\n"),)),
        Mistake("scan_goes_on", "after a move the scan goes on to the right instead of starting again", (
            ("                        i -= distance\n", "                        i += 1\n"),)),
        Mistake("rightmost_first", "the rightmost card that can move moves first, not the leftmost", (
            ("        while i < len(piles):\n", "        while i >= 0:\n"),
            ("                        i -= distance\n", "                        i = len(piles) - 1\n"),
            ("            else:\n                i += 1\n", "            else:\n                i -= 1\n"))),
        Mistake("one_piles", 'one pile is written "1 piles remaining"', (
            ('word = "pile" if len(piles) == 1 else "piles"', 'word = "piles"'),)),
    ),
    "mahjong": (
        Mistake("fifth_copy", "a tile the hand holds four of is waited for all the same", (
            ("        if counts[kind] < 4:\n", "        if counts[kind] < 5:\n"),)),
        Mistake("honour_chows", "honours make chows (DONG NAN XI and so on)", (
            ("    return kind < 27 and kind % 9 <= 6\n", "    return kind <= 31 and (kind >= 27 or kind % 9 <= 6)\n"),)),
        Mistake("seven_pairs", "seven pairs count as a winning hand", (
            ("def wins(counts: list[int]) -> bool:\n",
             "def wins(counts: list[int]) -> bool:\n    if sorted(counts)[-7:] == [2] * 7:\n        return True\n"),)),
        Mistake("thirteen_orphans", "thirteen orphans (each 1, 9 and honour, one of them twice) count as a win", (
            ("def wins(counts: list[int]) -> bool:\n",
             ("def wins(counts: list[int]) -> bool:\n    orphans = [0, 8, 9, 17, 18, 26, *range(27, 34)]\n"
             "    if all(counts[k] for k in orphans) and sum(counts[k] for k in orphans) == 14:\n        return True\n")),)),
        Mistake("honours_first", "the waits are listed with the honours first", (
            ("        tiles_waited = waits(tiles)\n",
             '        tiles_waited = sorted(waits(tiles), key=lambda tile: tile[-1] in "TSW")\n'),)),
    ),
}
