"""What the service answers about checks: typed views, as ``worker.jobs.views`` (the OpenAPI document's
schemas are made from these too)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from worker.checks.compare import VERDICTS
from worker.jobs.views import NotifyView, Page, View, doc
from worker.states import CheckStatus

_OVERALL = ["accepted", "presentation_error", "wrong_answer"]


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckCounts(View):
    accepted: int = doc("Cases whose line is identical to the judge's.")
    presentation_error: int = doc("Cases whose line is the judge's once all whitespace is removed.")
    wrong_answer: int = doc("Cases whose line is another answer.")
    missing: int = doc("Cases after the output's last line.")
    extra: int = doc("Lines of the output after the last case.")


@dataclass(frozen=True, slots=True, kw_only=True)
class DifferenceView(View):
    index: int | None = doc("The case's number, from 1; null for a line after the last case (extra).")
    line: int = doc("Its line in the output, from 1 (where a missing case's line would be).")
    verdict: str = doc("Its verdict.", enum=list(VERDICTS[1:]))
    expected: str | None = doc("The judge's line; null for an extra line, and for a check whose answers are not "
                               "shown (answers_shown).")
    got: str | None = doc("The output's line; null for a missing case.")
    column: int | None = doc("The first character where the two lines differ, from 1; null for a missing "
                             "case or an extra line.")


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckView(View):
    id: int = doc("The check's id.")
    job_id: int = doc("The job whose judge output the output is checked against.")
    status: str = doc("pending until the job's judge output exists (the job has succeeded), then done; failed "
                      "when it never will (the job failed or was cancelled) or the output could not be judged.",
                      enum=[s.value for s in CheckStatus])
    verdict: str | None = doc("accepted when every case is; else wrong_answer when any case is wrong or missing "
                              "or any line is extra; else presentation_error. Null until done.",
                              enum=[*_OVERALL, None])
    counts: CheckCounts = doc("Cases by verdict, and the extra lines (all 0 until done).")
    first_difference: DifferenceView | None = doc("The first case (or extra line) not accepted; null when "
                                                  "there is none or the check is not done.")
    error: str | None = doc("Why the check failed.")
    filename: str = doc("The output's file name, as sent (never used as a path).")
    size: int = doc("The output's size in bytes.")
    sha256: str = doc("The output's SHA-256, in hex.")
    owner: str | None = doc("Who sent the output: the name of its API key; null in open mode.")
    cases: int = doc("Cases judged (the job's cases once done).")
    lines: int = doc("Lines the output has (once done).")
    created_at: datetime | None = doc("When the check was made.", format="date-time")
    finished_at: datetime | None = doc("When it was judged.", format="date-time")
    notify: NotifyView | None = doc("The callback asked for with notify_url, and its last outcome; null "
                                    "without one.")
    answers_shown: bool = doc("Whether the judge's lines are shown (expected): false for a check of a job shared "
                              "with you whose owner has not revealed its answers; the check then says which "
                              "cases differ and where, not what was expected.")


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckCaseView(View):
    index: int = doc("The line of the output, from 1: the case's number for a case (an extra line's number "
                     "is past the last case's).")
    case: int | None = doc("The case's number; null for an extra line.")
    verdict: str = doc("Its verdict.", enum=list(VERDICTS))
    expected: str | None = doc("The judge's line; null for an extra line, and for a check whose answers are not "
                               "shown (answers_shown).")
    got: str | None = doc("The output's line; null for a missing case.")
    column: int | None = doc("The first character where the lines differ, from 1 (presentation_error and "
                             "wrong_answer only).")
    case_id: int | None = doc("The case's id (GET /api/cases/{case_id}); null for an extra line, and for a job "
                              "shared with you (its cases are its owner's).")
    case_url: str | None = doc("The case with its trace, in the API; null as case_id is.")
    replay_url: str | None = doc("The page that replays the case and so explains the right answer; null as "
                                 "case_id is.")


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckCasePage(Page):
    check_id: int = doc("The check.")
    verdict: str | None = doc("The verdict asked for (not_accepted: every line that is not accepted); null for "
                              "every line.", enum=[*VERDICTS, "not_accepted", None])
    page: int = doc("This page's number, from 1.")
    items: list[CheckCaseView] = doc("The cases (and extra lines), in the output's order.")


@dataclass(frozen=True, slots=True, kw_only=True)
class StandingView(View):
    name: str | None = doc("Who checked: the name of the API key; null for checks made in open mode.")
    checks: int = doc("The outputs this user checked against the job.")
    check_id: int = doc("The latest of them (GET /api/checks/{id}).")
    checked_at: datetime | None = doc("When the latest was made.", format="date-time")
    status: str = doc("The latest check's status.", enum=[s.value for s in CheckStatus])
    verdict: str | None = doc("The latest check's verdict; null until it is done.", enum=[*_OVERALL, None])
    accepted: int = doc("Its cases accepted.")
    presentation_error: int = doc("Its cases with a presentation error.")
    wrong_answer: int = doc("Its cases with a wrong answer.")
    missing: int = doc("Its cases missing (after the output's last line).")
    extra: int = doc("Its lines after the last case.")


@dataclass(frozen=True, slots=True, kw_only=True)
class StandingsPage(Page):
    job_id: int = doc("The job.")
    page: int = doc("This page's number, from 1.")
    items: list[StandingView] = doc("One row per user who checked an output against the job, by name.")
