"""How the cases of a ``--cover`` file are written: every layout the statements allow, so that
a solution that reads a line at a time, or splits on single spaces, or trips on a CR, is
caught as surely as one that plays wrongly.

A form writes one case as the text of the file, ending with what separates it from the
next (usually a line break; for ``runs on`` a space, so that the next deck starts in the
middle of that line).
"""

from __future__ import annotations

#: A form by name: a case's tokens to its text.
DECK_FORMS = {
    "two lines of 26": lambda t: " ".join(t[:26]) + "\n" + " ".join(t[26:]) + "\n",
    "one line": lambda t: " ".join(t) + "\n",
    "lines of 13": lambda t: "\n".join(" ".join(t[k : k + 13]) for k in range(0, 52, 13)) + "\n",
    "a card a line": lambda t: "\n".join(t) + "\n",
    "tabs and runs of spaces": lambda t: _gapped(t, ("\t", "  ", " \t ", " ", "   "), (20, 40)),
    "leading and trailing blanks, then a blank line":
        lambda t: "  " + " ".join(t[:26]) + "  \n\t" + " ".join(t[26:]) + " \n\n",
    "CR LF line ends": lambda t: " ".join(t[:26]) + "\r\n" + " ".join(t[26:]) + "\r\n",
    "lines of 30 and 22": lambda t: " ".join(t[:30]) + "\n" + " ".join(t[30:]) + "\n",
    "runs on: the next deck starts on its last line": lambda t: " ".join(t[:26]) + "\n" + " ".join(t[26:]) + " ",
}

HAND_FORMS = {
    "single spaces": lambda t: " ".join(t) + "\n",
    "tabs": lambda t: "\t".join(t) + "\n",
    "runs of blanks, leading and trailing": lambda t: "  " + "  ".join(t[:6]) + " \t " + " ".join(t[6:]) + " \n",
    "CR LF line end": lambda t: " ".join(t) + "\r\n",
    "after a blank line": lambda t: "\n" + " ".join(t) + "\n",
}


def _gapped(tokens: list[str], gaps: tuple[str, ...], breaks: tuple[int, ...]) -> str:
    """The tokens with the gaps in turn between them, and line breaks after the places ``breaks``."""
    parts = []
    for k, token in enumerate(tokens):
        parts.append(token)
        parts.append("\n" if k + 1 in breaks or k == len(tokens) - 1 else gaps[k % len(gaps)])
    return "".join(parts)
