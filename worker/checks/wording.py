"""Verdicts and places in an output as people read them, one wording wherever they are shown:
``dealer check``, ``dealer submit --expected`` and the pages (the API keeps the machine names,
``wrong_answer``). A place is a line and a column counted from 1, as the readers' errors count them.

>>> verdict_label("wrong_answer"), verdict_label("not_accepted"), verdict_label("pending")
('Wrong answer', 'Not accepted', 'Pending')
>>> place(17, 3), place(2001), place(1_999, None)
('line 17, column 3', 'line 2,001', 'line 1,999')
"""

from __future__ import annotations

#: What each verdict (and the pages' "not accepted" filter) is called.
VERDICT_LABELS = {"accepted": "Accepted", "presentation_error": "Presentation error",
                  "wrong_answer": "Wrong answer", "missing": "Missing", "extra": "Extra",
                  "not_accepted": "Not accepted"}


def verdict_label(name: str) -> str:
    """A verdict, or a check's status, as it is written for people: "Wrong answer", "Pending"."""
    return VERDICT_LABELS.get(name) or name.replace("_", " ").capitalize()


def place(line: int, column: int | None = None) -> str:
    """Where in the output: its line, and the first column where it differs when there is one."""
    return f"line {line:,}" + (f", column {column:,}" if column else "")
