"""What a request handler reaches of the app: the job service, its queries, the settings.

The app factory puts them in ``app.extensions``; blueprints import these accessors
instead of the package.
"""

from __future__ import annotations

from dataclasses import dataclass

from flask import current_app

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


def dealer() -> Dealer:
    found: Dealer = current_app.extensions["dealer"]
    return found


def service() -> JobService:
    return dealer().service


def queries() -> JobQueries:
    return dealer().queries


def settings() -> Settings:
    return dealer().settings
