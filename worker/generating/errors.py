"""What the generator refuses."""

from __future__ import annotations


class GenerateError(ValueError):
    """A file that cannot be made as asked: ``message`` says why in one line, ``field`` names
    what was asked wrongly (``"cases"``, ``"seed"``, ``"mix"``, ``"layout"``, ``"honours"``;
    ``None`` for the search itself).

    >>> str(GenerateError("the weight of draw is 0: leave draw out to have none", "mix"))
    'mix: the weight of draw is 0: leave draw out to have none'
    """

    def __init__(self, message: str, field: str | None = None) -> None:
        self.message, self.field = message, field
        super().__init__(message if field is None else f"{field}: {message}")
