"""The web pages: dashboard, upload, job, case with replay, history search, API reference.

Pages are rendered on the server from the job service (the same calls the JSON API
makes), so they show their data on first paint; small JavaScript modules in
``static/js`` then keep them live from the server's event streams (``webui/live.py``), or by
polling the JSON API where there is none.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from flask import Blueprint, redirect, render_template, request, url_for
from markupsafe import Markup, escape

from webui.auth import CONTENT_SECURITY_POLICY
from webui.context import case_queries, check_queries, dealer, overview_queries, queries, service, settings, viewer
from webui.errors import http_status
from webui.games import any_number_name, any_unit, game_views
from webui.params import JOBS_PER_PAGE, job_filters, present, whole_number
from webui.uploads import judge_file, program_output, receive_upload, takes_files
from worker.jobs.errors import ServiceError
from worker.jobs.filters import MAX_PER_PAGE
from worker.states import FINISHED, JobStatus
from worker.units import format_size

pages = Blueprint("pages", __name__)

#: Jobs others shared that the dashboard lists ("shared with you").
SHARED_SHOWN = 20
#: Rows of the job page's Class view (its CSV has them all).
CLASS_ROWS = MAX_PER_PAGE


def games() -> list[dict[str, Any]]:
    """What the pages need to know of each game (also handed to the scripts as JSON)."""
    return [game.to_dict() for game in game_views()]


def _page_arg() -> int:
    return whole_number("page", request.args.get("page") or "1", 1)


@pages.app_template_filter("size")
def _size(value: int | None) -> str:
    return format_size(value or 0)


@pages.app_template_filter("count")
def _count(value: int | float | None) -> str:
    return f"{int(value or 0):,}"


@pages.app_template_filter("seconds")
def _seconds(value: float | None) -> str:
    """A duration as people read it: ``850 ms``, ``4.2 s``, ``3 min 5 s``, ``1 h 2 min``."""
    if value is None:
        return "–"
    if value < 1:
        return f"{value * 1000:.0f} ms"
    if value < 60:
        return f"{value:.1f} s"
    minutes, seconds = divmod(int(value), 60)
    if minutes < 60:
        return f"{minutes} min {seconds} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"


@pages.app_template_filter("outcome_label")
def _outcome_label(outcome: str) -> str:
    """An outcome as a badge reads it.

    >>> _outcome_label("not-ready"), _outcome_label("win")
    ('Not ready', 'Win')
    """
    text = outcome.replace("-", " ")
    return text[:1].upper() + text[1:]


@pages.app_template_filter("micros")
def _micros(value: float | None) -> str:
    if value is None:
        return "–"
    if value < 1000:
        return f"{value:.0f} µs"
    if value < 1_000_000:
        return f"{value / 1000:.1f} ms"
    return f"{value / 1_000_000:.2f} s"


@pages.app_template_filter("when")
def _when(value: str | None) -> str:
    """An ISO time as ``2026-11-30 14:05:09 UTC`` (the scripts show it in local time)."""
    if not value:
        return "–"
    return datetime.fromisoformat(value.replace("Z", "+00:00")).strftime("%Y-%m-%d %H:%M:%S UTC")


@pages.app_template_filter("code")
def _code(text: str) -> Markup:
    """A game's text (:class:`worker.engines.Engine`) as HTML: what stands between backticks is code.

    >>> _code("a line `#` ends <the> file")
    Markup('a line <code>#</code> ends &lt;the&gt; file')
    """
    return Markup("").join(Markup("<code>%s</code>") % part if k % 2 else escape(part)
                           for k, part in enumerate(text.split("`")))


@pages.app_context_processor
def _globals() -> dict[str, Any]:
    return {"games": games(), "any_unit": any_unit(), "any_number_name": any_number_name(),
            "max_upload": settings().max_upload_bytes, "finished_statuses": sorted(FINISHED)}


@pages.get("/")
def dashboard() -> str:
    filters = job_filters(present(request.args))
    jobs = queries().jobs(_page_arg(), JOBS_PER_PAGE, **filters)
    overview = overview_queries().overview(dealer().dispatcher.queue_depth())
    # What others shared with this viewer: the class's judge files, to download and check against.
    me = viewer().name
    shared = [job.to_dict() for job in queries().jobs(1, SHARED_SHOWN, shared=True).items if job.owner != me]
    return render_template("dashboard.html", page_name="dashboard", jobs=jobs.to_dict(), overview=overview.to_dict(),
                           filters=filters, statuses=[s.value for s in JobStatus], shared_with_you=shared)


@pages.get("/workers")
def workers() -> str:
    return render_template("workers.html", page_name="workers", data=overview_queries().workers().to_dict())


@pages.route("/upload", methods=["GET", "POST"])
@takes_files(job_from="file", file=judge_file, expected=program_output)
def upload() -> Any:
    """The upload form; its script sends the file to ``POST /api/jobs`` with progress, and without
    JavaScript the form posts here and lands on the new job's page.

    Where a failed upload ends, for both: a refusal as the file arrives is shown on this page (its 4xx);
    a job made and failed later is shown on its job page (``static/js/upload-page.js`` says why)."""
    if request.method == "POST":
        try:
            job = receive_upload()
        except ServiceError as error:
            return render_template("upload.html", page_name="upload", error=error.message), http_status(error)
        if job.checks:  # with an output to check, its verdict is what the user came for
            return redirect(url_for("check_pages.check", check_id=job.checks[0]), code=303)
        return redirect(url_for("pages.job", job_id=job.id), code=303)
    return render_template("upload.html", page_name="upload", error=None)


@pages.get("/jobs/<id:job_id>")
def job(job_id: int) -> str:
    data = queries().job(job_id).to_dict()
    if not viewer().may_read(data["owner"]):  # shared with this viewer: its figures, its input, their checks
        return render_template("shared_job.html", page_name="job", job=data, game=_game(data["game"]))
    timings = queries().timings(job_id).to_dict()
    standings = check_queries().standings(job_id, 1, CLASS_ROWS).to_dict()
    return render_template("job.html", page_name="job", job=data, timings=timings, game=_game(data["game"]),
                           standings=standings, manages=viewer().may_manage(data["owner"]))


@pages.post("/jobs/<id:job_id>/sharing")
def share(job_id: int) -> Any:
    """The job page's sharing form (its boxes, each unticked when absent): on to the job page again."""
    form = present(request.form)
    service().share(job_id, shared="shared" in form, reveal_answers="reveal_answers" in form)
    return redirect(url_for("pages.job", job_id=job_id, _anchor="sharing"), code=303)


@pages.get("/jobs/<id:job_id>/cases/<id:index>")
def job_case(job_id: int, index: int) -> str:
    return _case_page(case_queries().case_by_index(job_id, index).to_dict())


@pages.get("/cases/<case_id:case_id>")
def case(case_id: int) -> str:
    return _case_page(case_queries().case(case_id).to_dict())


def _case_page(data: dict[str, Any]) -> str:
    job = queries().job(data["job_id"]).to_dict()
    return render_template("case.html", page_name="case", case=data, job=job, game=_game(data["game"]))


@pages.get("/history")
def history() -> str:
    return render_template("history.html", page_name="history", args=request.args)


#: Swagger UI draws its icons as data: images; everything else it loads is the service's own.
DOCS_POLICY = CONTENT_SECURITY_POLICY.replace("img-src 'self'", "img-src 'self' data:")


@pages.get("/docs")
def docs() -> Any:
    return render_template("docs.html", page_name="docs"), {"Content-Security-Policy": DOCS_POLICY}


def _game(slug: str) -> dict[str, Any]:
    return next(g for g in games() if g["slug"] == slug)


@pages.app_template_filter("snippet")
def _snippet(fault: dict[str, Any]) -> Markup:
    """A fault's lines, its own marked from its column to the next space with a caret under it: the markup
    the upload page's script draws around a refused file's error (``snippet`` in ``static/js/upload.js``).

    >>> print(_snippet({"line": 2, "column": 3, "context": [{"line": 1, "text": "1 2"}, {"line": 2, "text": "4 X <"}]}))
    <pre class="snippet" tabindex="0"><span><span class="ln">1</span>1 2
    </span><span class="bad-line"><span class="ln">2</span>4 <mark class="bad">X</mark> &lt;</span><span class="caret"><span class="ln"></span>  ^</span></pre>
    """
    shown = []
    for near in fault.get("context") or []:
        number, text = near["line"], near["text"]
        column = fault.get("column") or 0
        if number != fault["line"] or not column:
            own = Markup(' class="bad-line"') if number == fault["line"] else Markup("")
            shown.append(Markup('<span%s><span class="ln">%s</span>%s\n</span>') % (own, number, text[:240]))
            continue
        end = column - 1
        while end < len(text) and not text[end].isspace():
            end += 1
        before, token, after = text[:column - 1], text[column - 1:max(end, column)], text[max(end, column):]
        shown.append(Markup('<span class="bad-line"><span class="ln">%s</span>%s<mark class="bad">%s</mark>%s</span>'
                            '<span class="caret"><span class="ln"></span>%s^</span>')
                     % (number, before, token or " ", after[:200], " " * len(before)))
    return Markup('<pre class="snippet" tabindex="0">%s</pre>') % Markup("").join(shown)


@pages.app_template_filter("sentence")
def _sentence(text: str) -> str:
    """A game's summary as a sentence.

    >>> _sentence("deal onto seven piles")
    'Deal onto seven piles.'
    """
    text = text.strip()
    return (text[:1].upper() + text[1:]).rstrip(".") + "." if text else text
