"""Query parameters made into typed values; a bad one is a 400 naming it (``Invalid``).

>>> whole_number("page", "3", 1)
3
>>> whole_number("page", "x", 1)
Traceback (most recent call last):
...
worker.jobs.errors.Invalid: page must be a whole number, not 'x'
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from worker import engines
from worker.jobs.errors import Invalid
from worker.jobs.filters import DEFAULT_PER_PAGE, MAX_PER_PAGE, ResultFilter
from worker.store.models import MAX_INT


def whole_number(name: str, raw: str, minimum: int, maximum: int = MAX_INT) -> int:
    """A parameter as a whole number from ``minimum`` to ``maximum``, or :class:`Invalid` saying why not."""
    try:
        value = int(raw)
    except ValueError:
        raise Invalid(f"{name} must be a whole number, not {raw[:40]!r}") from None
    if value < minimum:
        raise Invalid(f"{name} must be at least {minimum}, not {raw[:40]}")
    if value > maximum:
        raise Invalid(f"{name} must be at most {maximum:,}, not {raw[:40]}")
    return value


def moment(name: str, raw: str) -> datetime:
    try:
        value = datetime.fromisoformat(raw)
    except ValueError:
        raise Invalid(f"{name} must be a date or time like 2026-11-30 or 2026-11-30T12:00, not {raw[:40]!r}") from None
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def flag(name: str, raw: str) -> bool:
    """A yes/no parameter: ``1``/``true``/``yes`` or ``0``/``false``/``no``."""
    if raw.lower() in ("1", "true", "yes"):
        return True
    if raw.lower() in ("0", "false", "no"):
        return False
    raise Invalid(f"{name} must be 1, true or yes (or 0, false or no), not {raw[:40]!r}")


def present(args: Mapping[str, str]) -> dict[str, str]:
    """The parameters that have a value (an empty field of a form means "no filter")."""
    return {key: value.strip() for key, value in args.items() if isinstance(value, str) and value.strip()}


def given(args: Mapping[str, str]) -> dict[str, str]:
    """The API's parameters, where an empty one is refused: a script that sends ``until=`` has a
    bug it should hear about, not a filter silently dropped.

    >>> given({"game": "accordion", "until": " "})
    Traceback (most recent call last):
    ...
    worker.jobs.errors.Invalid: until is empty: leave it out or give it a value
    """
    for key, value in args.items():
        if not value.strip():
            raise Invalid(f"{key} is empty: leave it out or give it a value")
    return present(args)


def paging(args: Mapping[str, str], default_per_page: int = DEFAULT_PER_PAGE) -> tuple[int, int]:
    """``(page, per_page)``; ``per_page`` is at most :data:`MAX_PER_PAGE`."""
    text = present(args)
    page = whole_number("page", text.get("page", "1"), 1)
    per_page = whole_number("per_page", text.get("per_page", str(default_per_page)), 1, MAX_PER_PAGE)
    return page, per_page


#: Jobs per page of the dashboard, its event stream and ``GET /api/jobs`` when the client does not say.
JOBS_PER_PAGE = 20
#: The filters of a list of jobs (the dashboard, its event stream and ``GET /api/jobs``).
JOB_FILTERS = ("status", "game", "filename", "owner", "shared")


def job_filters(args: Mapping[str, str]) -> dict[str, Any]:
    """The filters of a list of jobs in ``args`` (already stripped of empty values).

    >>> job_filters({"game": "accordion", "page": "2", "shared": "true"})
    {'game': 'accordion', 'shared': True}
    """
    found: dict[str, Any] = {name: args[name] for name in JOB_FILTERS if name in args}
    if "shared" in found:
        found["shared"] = flag("shared", found["shared"])
    return found


def result_filter(args: Mapping[str, str], **fixed: Any) -> ResultFilter:
    """A results filter from query parameters (``fixed`` values win: a job page's own job and game)."""
    text = present(args)
    values: dict[str, Any] = {}
    if "game" in text:
        values["game"] = engines.check(text["game"])
    for name, least in (("number_min", 0), ("number_max", 0), ("job_id", 1)):
        if name in text:
            values[name] = whole_number(name, text[name], least)
    values["page"], values["per_page"] = paging(args)
    for name in ("since", "until"):
        if name in text:
            values[name] = moment(name, text[name])
    if "outcome" in text:
        values["outcome"] = text["outcome"]
    if "input" in text:
        values["input_text"] = text["input"]
    sort = text.get("sort", "index")
    values.update(sort=sort.lstrip("-"), descending=sort.startswith("-"))
    for name in ("after", "before"):
        if name in text:
            values[name] = text[name]
    if "last" in text:
        values["last"] = flag("last", text["last"])
    values.update(fixed)
    return ResultFilter(**values).checked()
