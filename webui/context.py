"""What a request handler reaches of the app: the job and check services, their queries, the settings.

The app factory puts them in ``app.extensions``; blueprints import these accessors
instead of the package.
"""

from __future__ import annotations

from dataclasses import dataclass

from flask import current_app

from worker.checks.queries import CheckQueries
from worker.checks.service import CheckService
from worker.config import Settings
from worker.jobs.dispatch import Dispatcher
from worker.jobs.queries import JobQueries
from worker.jobs.service import JobService


@dataclass(frozen=True)
class Dealer:
    settings: Settings
    dispatcher: Dispatcher
    service: JobService
    queries: JobQueries
    checks: CheckService
    check_queries: CheckQueries


def dealer() -> Dealer:
    found: Dealer = current_app.extensions["dealer"]
    return found


def service() -> JobService:
    return dealer().service


def queries() -> JobQueries:
    return dealer().queries


def checks() -> CheckService:
    return dealer().checks


def check_queries() -> CheckQueries:
    return dealer().check_queries


def settings() -> Settings:
    return dealer().settings
