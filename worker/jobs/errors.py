"""What the job service refuses, and why, in words a user can act on.

These say nothing of HTTP: the web app maps each kind to its status (``webui/errors.py``),
the CLI to its exit code.
"""

from __future__ import annotations


class ServiceError(Exception):
    """A request the service refuses; ``message`` says why."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class Invalid(ServiceError):
    """The request itself is wrong: a bad parameter, a file that is no judge file."""


class NotFound(ServiceError):
    """No such job or case."""


class Forbidden(ServiceError):
    """Another's job, which the viewer may read (public reads) but not change."""


class Conflict(ServiceError):
    """The request does not fit the job's state (cancel a finished job, delete a running one)."""


class UploadGone(Conflict):
    """The upload a job was to be made for was removed meanwhile (its last job was split)."""


class TooManyJobs(ServiceError):
    """A client has as many unfinished jobs as it may have at once, or created as many as it may lately."""

    def __init__(self, message: str, retry_after: float = 30.0) -> None:
        super().__init__(message)
        #: Seconds after which trying again may succeed.
        self.retry_after = retry_after


class Unsupported(ServiceError):
    """A file of a kind that is not taken: an output to check that is no text."""


class TooLarge(ServiceError):
    """An upload over the size limit."""
