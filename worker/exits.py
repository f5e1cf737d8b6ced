"""The exit status of every ``dealer`` command, one table for all of them:

=====  ==================  ====================================================================
code   name                when
=====  ==================  ====================================================================
0      ``DONE``            done; a check's output accepted
1      ``NOT_ACCEPTED``    a check's output not accepted, or a job (or check) that failed
2      ``BAD_INPUT``       bad input or usage: a file that is no judge file, an unknown option,
                           a refused upload (HTTP 400, 404, 409, 413, 415), a port in use
3      ``UNREACHABLE``     the service cannot be reached or refuses the request: connection
                           refused or lost, HTTP 401, 403, 408, 429 and 5xx
=====  ==================  ====================================================================

>>> Exit.for_status(400), Exit.for_status(401), Exit.for_status(503)
(<Exit.BAD_INPUT: 2>, <Exit.UNREACHABLE: 3>, <Exit.UNREACHABLE: 3>)
"""

from __future__ import annotations

from enum import IntEnum

#: HTTP statuses that say the service refuses the request (who asks, how often, or its own failure),
#: not that the request is wrong.
_REFUSING = frozenset({401, 403, 408, 429})


class Exit(IntEnum):
    DONE = 0
    NOT_ACCEPTED = 1
    BAD_INPUT = 2
    UNREACHABLE = 3

    @classmethod
    def for_status(cls, status: int) -> Exit:
        """The exit status of a command whose request the service answered with HTTP ``status`` (an error)."""
        return cls.UNREACHABLE if status in _REFUSING or status >= 500 else cls.BAD_INPUT


#: The table as ``dealer --help`` shows it (``\b``: click keeps its lines as they are).
HELP = f"""\b
Exit status, every command alike:
  0  done; a check's output accepted
  1  a check's output not accepted, or the job failed
  2  bad input or usage (a file that is no judge file, a refused upload, a port in use)
  3  the service unreachable or refusing the request (connection refused, HTTP {
    ", ".join(str(status) for status in sorted(_REFUSING))}, 5xx)"""
