"""URL path parts that name something stored: an id that cannot exist is a 404, never a database error.

>>> IdConverter(None).to_python("42"), CaseIdConverter(None).to_python("3000000042")
(42, 3000000042)
"""

from __future__ import annotations

from typing import Any

from werkzeug.exceptions import NotFound
from werkzeug.routing import BaseConverter

from worker.store.models import CASE_ID_BASE, MAX_INT

#: The largest case id: the largest job id's last case.
MAX_CASE_ID = MAX_INT * CASE_ID_BASE + CASE_ID_BASE - 1


class IdConverter(BaseConverter):
    """A job's id, or a case's index in its job: 1 to the largest integer a column holds."""

    regex = r"\d{1,12}"
    maximum = MAX_INT

    def __init__(self, url_map: Any) -> None:
        super().__init__(url_map)

    def to_python(self, value: str) -> int:
        number = int(value)
        if not 1 <= number <= self.maximum:
            # Not a ValidationError: werkzeug would then try the path's other rules and could answer 405.
            raise NotFound(f"nothing is stored under that id: ids run from 1 to {self.maximum:,}")
        return number

    def to_url(self, value: Any) -> str:
        return str(int(value))


class CaseIdConverter(IdConverter):
    """A case's id (its job's id times 10**9 plus its index)."""

    regex = r"\d{1,22}"
    maximum = MAX_CASE_ID
