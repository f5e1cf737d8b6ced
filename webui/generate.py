"""Judge files made to order by the service: ``POST /api/generate`` and the upload page's Generate form.

Both read what is asked in the words of ``dealer generate`` (game, cases, seed, mix, layout,
honours) and hand it to :func:`worker.jobs.generated.generated_job`, which makes the file into an
upload and the job from it, as an upload's; the answer is the new job, as ``POST /api/jobs``'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flask import Blueprint, jsonify, redirect, render_template, request, url_for

from webui.auth import client_id
from webui.context import service
from webui.errors import http_status
from webui.params import present, whole_number
from webui.spec import BAD_REQUEST, TOO_MANY, Operations, error, json_body, ref
from worker import engines
from worker.generating import MAX_CASES
from worker.jobs.errors import Invalid, ServiceError, TooLarge
from worker.jobs.generated import Request, generated_job
from worker.jobs.views import JobView

generate = Blueprint("generate", __name__)
operations = Operations(generate)

#: The largest seed (SplitMix64's state is 64 bits).
MAX_SEED = 2**64 - 1
#: The longest mix or layout text taken (the longest sensible one is far shorter).
MAX_TEXT = 1000
#: The largest body taken (it is read whole; what it holds fits in far less).
MAX_BODY = 64 << 10

REQUEST_SCHEMA: dict[str, Any] = {
    "type": "object", "required": ["game", "cases"], "additionalProperties": False, "properties": {
        "game": {"type": "string", "enum": engines.names(), "description": "The game."},
        "cases": {"type": "integer", "minimum": 1, "maximum": MAX_CASES,
                  "description": "How many cases the file holds: at most the per-job limit "
                                 "(DEALER_MAX_CASES_PER_JOB, 10,000,000 unless set otherwise)."},
        "seed": {"type": "integer", "minimum": 0, "maximum": MAX_SEED,
                 "description": "The file's seed: the same request and seed make the same bytes (as `dealer "
                                "generate --seed` does). Left out: one is chosen, and the job's file name says it."},
        "mix": {"type": "string", "maxLength": MAX_TEXT,
                "description": "Shares of outcomes, as `dealer generate --mix`: win=1,loss=1,draw=1; accordion "
                               "1=1,2-5=2,6+=1 (piles left); mahjong ready=3,not-ready=1 or waits 0-9. Left out: "
                               "random cases."},
        "layout": {"type": "string", "maxLength": MAX_TEXT,
                   "description": "As `dealer generate --layout`: per-line=13,flow,ragged,sorted,crlf,"
                                  "no-terminator,no-final-newline (each where the game allows it)."},
        "honours": {"type": "boolean", "default": True,
                    "description": "false: mahjong hands without DONG … BAI (`--no-honours`)."},
    }}


@operations.post("/api/generate", "generateJob", "Make a judge file to order and start a job on it", tag="jobs",
                 description="The file is made as `dealer generate` makes it, stored as an upload (the same size "
                             "limit) and solved as one; its job's file name says its plan (game, cases, seed, mix, "
                             "layout), from which `dealer generate` makes the same bytes. It is made within the "
                             "request: one that would take longer than DEALER_GENERATE_SECONDS (many cases of a "
                             "rare mix) is refused with 400.",
                 request_body={"required": True, "content": {"application/json": {"schema": REQUEST_SCHEMA}}},
                 responses={"201": json_body(ref(JobView), "The new job."),
                            "400": error("What is asked cannot be made: the message names the field (game, cases, "
                                         "seed, mix, layout, honours) and says why, or the file would take too long "
                                         "to make within the request."),
                            "413": error("The file would be over the upload limit (DEALER_MAX_UPLOAD_BYTES), or the "
                                         "request's body is over 64 KiB."), "429": TOO_MANY})
def generate_job() -> Any:
    if (request.content_length or 0) > MAX_BODY:
        raise TooLarge(f"the body is larger than {MAX_BODY >> 10} KiB: a request to generate is a few fields")
    request.max_content_length = MAX_BODY  # a body sent without its length is cut there too
    body = request.get_json(silent=True)
    if not isinstance(body, dict):
        raise Invalid('the body must be a JSON object, e.g. {"game": "10-20-30", "cases": 1000}')
    job = generated_job(service(), _request(body), client=client_id())
    return jsonify(job.to_dict()), 201, {"Location": f"/api/jobs/{job.id}"}


def _request(body: Mapping[str, Any]) -> Request:
    """The JSON body as a :class:`Request`, each field of its type (the generator checks the values)."""
    unknown = sorted(set(body) - set(REQUEST_SCHEMA["properties"]))
    if unknown:
        raise Invalid(f"{unknown[0]}: no such field (game, cases, seed, mix, layout, honours)")
    for name in ("game", "cases"):
        if body.get(name) is None:
            raise Invalid(f"{name}: missing")
    for name, kind in _TYPES.items():
        value = body.get(name)
        if value is not None and (not isinstance(value, kind) or (kind is int and isinstance(value, bool))):
            raise Invalid(f"{name}: must be {_NAMES[kind]}, not {value!r:.40}")
        if isinstance(value, str) and len(value) > MAX_TEXT:
            raise Invalid(f"{name}: longer than {MAX_TEXT:,} characters")
    return Request(body["game"], body["cases"], body.get("seed"), body.get("mix"), body.get("layout"),
                   body.get("honours") is not False)


_TYPES: dict[str, type] = {"game": str, "cases": int, "seed": int, "mix": str, "layout": str, "honours": bool}
_NAMES: dict[type, str] = {str: "a string", int: "a whole number", bool: "true or false"}


@generate.post("/generate")
def generate_page() -> Any:
    """The upload page's Generate form: on to the new job's page, or the upload page again saying why not."""
    form = present(request.form)
    try:
        asked = Request(form.get("game", ""), whole_number("cases", form.get("cases", ""), 1, MAX_CASES),
                        whole_number("seed", form["seed"], 0, MAX_SEED) if "seed" in form else None,
                        form.get("mix"), form.get("layout"), "no_honours" not in form)
        job = generated_job(service(), asked, client=client_id())
    except ServiceError as refused:
        return render_template("upload.html", page_name="upload", error=None, generate_error=refused.message,
                               generate_form=form), http_status(refused)
    return redirect(url_for("pages.job", job_id=job.id), code=303)
