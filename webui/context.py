"""What a request handler reaches of the app: the job and check services, their queries (of jobs, of cases,
of the service as a whole), the settings,
each service and query acting for the request's viewer.

The app factory puts them in ``app.extensions``; blueprints import these accessors
instead of the package.
"""

from __future__ import annotations

from dataclasses import dataclass

from flask import current_app, g

from worker.checks.notify import Notices
from worker.checks.queries import CheckQueries
from worker.checks.service import CheckService
from worker.config import Settings
from worker.jobs.dispatch import Dispatcher
from worker.jobs.cases import CaseQueries
from worker.jobs.overview import OverviewQueries
from worker.jobs.queries import JobQueries
from worker.jobs.service import JobService
from worker.store.owners import Viewer

#: Who a request is until the guard (:mod:`webui.auth`) has said: nobody, who sees nothing.
NOBODY = Viewer.anonymous(public=False)


@dataclass(frozen=True)
class Dealer:
    settings: Settings
    dispatcher: Dispatcher
    service: JobService
    queries: JobQueries
    cases: CaseQueries
    overview: OverviewQueries
    checks: CheckService
    check_queries: CheckQueries
    notices: Notices


def dealer() -> Dealer:
    found: Dealer = current_app.extensions["dealer"]
    return found


def viewer() -> Viewer:
    """Who makes this request (set by the guard of :mod:`webui.auth`): every service and query below is
    handed it, and shows and changes only what it may (:mod:`worker.store.owners`)."""
    found: Viewer = g.get("viewer", NOBODY)
    return found


def service() -> JobService:
    return dealer().service.seen_by(viewer())


def queries() -> JobQueries:
    return dealer().queries.seen_by(viewer())


def case_queries() -> CaseQueries:
    return dealer().cases.seen_by(viewer())


def overview_queries() -> OverviewQueries:
    return dealer().overview.seen_by(viewer())


def checks() -> CheckService:
    return dealer().checks.seen_by(viewer())


def check_queries() -> CheckQueries:
    return dealer().check_queries.seen_by(viewer())


def settings() -> Settings:
    return dealer().settings
