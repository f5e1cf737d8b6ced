"""URL path parts that name something stored: an id that cannot exist is a 404 saying so (``UnknownId``, which
:mod:`webui.errors` words), never the framework's generic page and never a database error.

>>> IdConverter(None).to_python("42"), CaseIdConverter(None).to_python("3000000042")
(42, 3000000042)
>>> IdConverter(None).to_python("abc")
Traceback (most recent call last):
...
webui.converters.UnknownId: 404 Not Found: 'abc' is no id from 1 to 2,147,483,647
"""

from __future__ import annotations

from typing import Any

from werkzeug.exceptions import NotFound
from werkzeug.routing import BaseConverter

from worker.store.models import CASE_ID_BASE, MAX_INT

#: The largest case id: the largest job id's last case.
MAX_CASE_ID = MAX_INT * CASE_ID_BASE + CASE_ID_BASE - 1


class UnknownId(NotFound):
    """A path part where an id goes that names none: its text, and the largest id there is."""

    def __init__(self, value: str, maximum: int) -> None:
        super().__init__(f"{value!r} is no id from 1 to {maximum:,}")
        self.value = value
        self.maximum = maximum

    @property
    def number(self) -> int | None:
        """The value as a whole number, when it is one (out of range), else None (``abc``, ``1.5``)."""
        try:
            return int(self.value)
        except ValueError:
            return None


class IdConverter(BaseConverter):
    """A job's id, or a case's index in its job: 1 to the largest integer a column holds."""

    # Any path part: one that is no id is answered here, by name, rather than by no route at all.
    regex = r"[^/]+"
    maximum = MAX_INT

    def __init__(self, url_map: Any) -> None:
        super().__init__(url_map)

    def to_python(self, value: str) -> int:
        # Not a ValidationError: werkzeug would then try the path's other rules and could answer 405.
        if not value.isascii() or not value.isdigit() or len(value) > len(str(self.maximum)):
            raise UnknownId(value, self.maximum)
        number = int(value)
        if not 1 <= number <= self.maximum:
            raise UnknownId(value, self.maximum)
        return number

    def to_url(self, value: Any) -> str:
        return str(int(value))


class CaseIdConverter(IdConverter):
    """A case's id (its job's id times 10**9 plus its index)."""

    maximum = MAX_CASE_ID
