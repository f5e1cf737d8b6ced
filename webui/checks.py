"""Checks over HTTP: the JSON API (``/api/jobs/<id>/checks``, ``/api/checks/<id>``, its cases) and the
pages (a job page's form for another output, the check page with its verdict and differences)."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, g, jsonify, redirect, render_template, request, url_for

from webui.context import check_queries, checks, queries, service
from webui.params import given, paging, present, whole_number
from webui.uploads import stored_file
from worker.checks.compare import VERDICTS, marks
from worker.checks.queries import DEFAULT_CHECK_CASES
from worker.checks.views import CheckView
from worker.jobs.errors import Invalid
from worker.store.uploads import UploadTooLarge, UploadWriter

check_api = Blueprint("check_api", __name__, url_prefix="/api")
check_pages = Blueprint("check_pages", __name__)

#: A check's cases per page on the check page.
CASES_PER_PAGE = 50
#: What the page calls each verdict.
VERDICT_LABELS = {"accepted": "Accepted", "presentation_error": "Presentation error", "wrong_answer": "Wrong answer",
                  "missing": "Missing", "extra": "Extra"}


def receive_check(job_id: int) -> CheckView:
    """A check of the request's ``file`` (stored while the form was read) against a job."""
    request.files  # noqa: B018 - parsing the form streams its files into the database
    writers: list[UploadWriter] = g.get("upload_writers", [])
    if any(writer.size > writer.limit for writer in writers):  # see receive_upload
        raise UploadTooLarge(writers[0].limit)
    found = stored_file("file")
    if found is None:
        raise Invalid("no output in the request: send it as the multipart field 'file'")
    try:
        return checks().create_check(job_id, *found)
    except BaseException:
        service().forget_upload(found[0])
        raise


@check_pages.app_template_global("checks_of")
def checks_of(job_id: int) -> list[dict[str, Any]]:
    """A job's checks, for its page."""
    return [check.to_dict() for check in check_queries().job_checks(job_id)]


@check_api.post("/jobs/<id:job_id>/checks")
def create_check(job_id: int) -> Any:
    check = receive_check(job_id)
    return jsonify(check.to_dict()), 201, {"Location": f"/api/checks/{check.id}"}


@check_api.get("/jobs/<id:job_id>/checks")
def job_checks(job_id: int) -> Any:
    return jsonify([check.to_dict() for check in check_queries().job_checks(job_id)])


@check_api.get("/checks/<id:check_id>")
def get_check(check_id: int) -> Any:
    return jsonify(check_queries().check(check_id).to_dict())


@check_api.get("/checks/<id:check_id>/cases")
def check_cases(check_id: int) -> Any:
    args = given(request.args)
    page, per_page = paging(args, DEFAULT_CHECK_CASES)
    return jsonify(check_queries().check_cases(check_id, args.get("verdict"), page, per_page).to_dict())


@check_pages.post("/jobs/<id:job_id>/checks")
def add_check(job_id: int) -> Any:
    """The job page's form (without JavaScript too): on to the new check's page."""
    check = receive_check(job_id)
    return redirect(url_for("check_pages.check", check_id=check.id), code=303)


@check_pages.get("/checks/<id:check_id>")
def check(check_id: int) -> str:
    args = present(request.args)
    verdict = args.get("verdict")
    page = whole_number("page", args.get("page", "1"), 1)
    found = check_queries().check(check_id)
    cases = check_queries().check_cases(check_id, verdict, page, CASES_PER_PAGE)
    rows = []
    for item in cases.items:
        row = item.to_dict()
        if item.verdict in ("presentation_error", "wrong_answer") and item.expected is not None \
                and item.got is not None:
            row["expected_runs"], row["got_runs"] = marks(item.expected, item.got)
        rows.append(row)
    job = queries().job(found.job_id)
    return render_template("check.html", page_name="check", check=found.to_dict(), job=job.to_dict(),
                           cases=cases.to_dict(), rows=rows, verdict=verdict, verdicts=VERDICTS,
                           labels=VERDICT_LABELS)
