"""Judge files made to order by the service: ``POST /api/generate`` and the upload page's Generate form;
and problem packages of them: ``POST /api/package`` and the form's "Download a problem package".

Both read what is asked in the words of ``dealer generate`` (game, cases, seed, mix, layout,
honours) and hand it to :func:`worker.jobs.generated.generated_job`, which makes the file into an
upload and the job from it, as an upload's; the answer is the new job, as ``POST /api/jobs``'s.
A package is made as ``dealer package`` makes it (:mod:`worker.packaging`), within the request,
and answered as a zip: nothing is stored.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import Any

from flask import Blueprint, Response, jsonify, redirect, render_template, request, url_for

from webui.auth import client_id
from webui.context import service
from webui.errors import http_status
from webui.params import present, whole_number
from webui.spec import TOO_MANY, Operations, error, json_body, ref
from worker import engines
from worker.generating import MAX_CASES, GenerateError
from worker.jobs.errors import Invalid, ServiceError, TooLarge
from worker.jobs.generated import Request, generated_job, request_of
from worker.jobs.views import JobView
from worker.packaging.errors import PackageError
from worker.packaging.package import SHORT_NAMES, files, write_zip
from worker.packaging.recipes import defaults, recipe
from worker.packaging.rights import LICENSES, Rights

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


def _form_request(form: dict[str, str], most_cases: int) -> Request:
    """The Generate form's fields as a request for at most ``most_cases`` cases."""
    return Request(form.get("game", ""), whole_number("cases", form.get("cases", ""), 1, most_cases),
                   whole_number("seed", form["seed"], 0, MAX_SEED) if "seed" in form else None,
                   form.get("mix"), form.get("layout"), "no_honours" not in form)


@generate.post("/generate")
def generate_page() -> Any:
    """The upload page's Generate form: on to the new job's page, or the upload page again saying why not."""
    form = present(request.form)
    try:
        asked = _form_request(form, MAX_CASES)
        job = generated_job(service(), asked, client=client_id())
    except ServiceError as refused:
        return render_template("upload.html", page_name="upload", error=None, generate_error=refused.message,
                               generate_form=form), http_status(refused)
    return redirect(url_for("pages.job", job_id=job.id), code=303)


#: What a package made within a request holds at most: its recipes, and their cases together (a
#: larger one is ``dealer package``'s to make).
MAX_RECIPES = 8
MAX_PACKAGE_CASES = 2000

RECIPE_SCHEMA: dict[str, Any] = {
    "type": "object", "required": ["cases"], "additionalProperties": False,
    "properties": {name: REQUEST_SCHEMA["properties"][name] for name in ("cases", "seed", "mix", "layout", "honours")}
    | {"cases": {"type": "integer", "minimum": 1, "maximum": MAX_PACKAGE_CASES,
                 "description": f"How many cases the file holds ({MAX_PACKAGE_CASES:,} at most in all the recipes)."}}}
PACKAGE_SCHEMA: dict[str, Any] = {
    "type": "object", "required": ["game"], "additionalProperties": False, "properties": {
        "game": REQUEST_SCHEMA["properties"]["game"],
        "recipes": {"type": "array", "maxItems": MAX_RECIPES, "items": RECIPE_SCHEMA,
                    "description": "A secret test file for each, made as `dealer generate` makes it (the fields of "
                                   "POST /api/generate but the game). Left out: a few dozen cases of every outcome."},
        "license": {"type": "string", "enum": list(LICENSES),
                    "description": f"The package's license, as problem.yaml names it (default: {Rights.license})."},
        "rights_owner": {"type": "string", "minLength": 1, "maxLength": 200,
                         "description": f"Who owns its rights (default: {Rights.owner}; none for public domain)."},
    }}


@operations.post("/api/package", "packageProblem", "A problem package of a game, as a zip", tag="jobs",
                 description="Made as `dealer package` makes it, in the Kattis problem package format that DOMjudge "
                             "imports and Kattis' verifyproblem checks: problem.yaml, the statement, samples, the "
                             "--cover file and a file for each recipe with their answers, an input validator, an "
                             "accepted solution and the classic wrong ones. Nothing is stored.",
                 request_body={"required": True, "content": {"application/json": {"schema": PACKAGE_SCHEMA}}},
                 responses={"200": {"description": "The package, a zip with problem.yaml at its top.", "content": {
                                "application/zip": {"schema": {"type": "string", "contentMediaType": "application/zip"}}}},
                            "400": error("What is asked cannot be made: the message names the field (game, "
                                         "recipes[i].cases, .seed, .mix, .layout, .honours, license or rights_owner) "
                                         "and says why."),
                            "413": error("The request's body is over 64 KiB.")})
def package_problem() -> Any:
    if (request.content_length or 0) > MAX_BODY:
        raise TooLarge(f"the body is larger than {MAX_BODY >> 10} KiB: a request for a package is a few fields")
    request.max_content_length = MAX_BODY
    body = request.get_json(silent=True)
    if not isinstance(body, dict):
        raise Invalid('the body must be a JSON object, e.g. {"game": "mahjong", "recipes": [{"cases": 100}]}')
    unknown = sorted(set(body) - set(PACKAGE_SCHEMA["properties"]))
    if unknown:
        raise Invalid(f"{unknown[0]}: no such field ({', '.join(PACKAGE_SCHEMA['properties'])})")
    game = body.get("game")
    if not isinstance(game, str) or game not in engines.names():
        raise Invalid(f"game: must be one of {', '.join(engines.names())}, not {game!r:.40}")
    recipes = body.get("recipes")
    if recipes is not None and (not isinstance(recipes, list) or len(recipes) > MAX_RECIPES):
        raise Invalid(f"recipes: must be a list of at most {MAX_RECIPES} recipes")
    asked = []
    for number, fields in enumerate(recipes or []):
        if not isinstance(fields, dict):
            raise Invalid(f"recipes[{number}]: must be an object, e.g. {{\"cases\": 100}}")
        if "game" in fields:
            raise Invalid(f"recipes[{number}].game: the package's game is given once, beside the recipes")
        try:
            asked.append(_request({"game": game, **fields}))
        except Invalid as refused:
            raise Invalid(f"recipes[{number}].{refused.message}") from None
    for name in ("license", "rights_owner"):
        if not isinstance(body.get(name), str | None):
            raise Invalid(f"{name}: must be a string")
    try:
        rights = Rights.asked(body.get("license"), body.get("rights_owner"))
    except PackageError as refused:  # named as the body names the field
        raise Invalid(str(refused).replace("rights owner:", "rights_owner:", 1)) from None
    return _package(game, asked, api=True, rights=rights)


@generate.post("/generate/package")
def package_page() -> Any:
    """The Generate form's "Download a problem package": its file as the package's one recipe."""
    form = present(request.form)
    try:
        asked = _form_request(form, MAX_PACKAGE_CASES)
        if asked.game not in engines.names():
            raise Invalid(f"game: must be one of {', '.join(engines.names())}")
        return _package(asked.game, [asked], api=False)
    except ServiceError as refused:
        return render_template("upload.html", page_name="upload", error=None, generate_error=refused.message,
                               generate_form=form), http_status(refused)


@generate.app_template_global()
def package_fields(filename: str) -> dict[str, Any] | None:
    """The Generate form's fields that make a generated job's file again, for its page's "Problem package";
    ``None`` for a job of no generated file, or of one too large to package within a request."""
    asked = request_of(filename)
    if asked is None or asked.cases > MAX_PACKAGE_CASES:
        return None
    fields = {"game": asked.game, "cases": asked.cases, "seed": asked.seed, "mix": asked.mix, "layout": asked.layout}
    return {name: value for name, value in fields.items() if value is not None} | (
        {} if asked.honours else {"no_honours": "on"})


def _package(game: str, asked: list[Request], api: bool, rights: Rights = Rights()) -> Response:
    """The package of ``asked`` as a zip download; a refusal names its field as the API's body or the
    form has it (``api``)."""
    if sum(one.cases for one in asked) > MAX_PACKAGE_CASES:
        raise Invalid(f"{'recipes' if api else 'cases'}: a package made here holds at most {MAX_PACKAGE_CASES:,} "
                      "cases in all; dealer package makes larger ones")
    recipes = []
    for number, one in enumerate(asked):
        try:
            recipes.append(recipe(game, one.cases, one.seed, one.mix, one.layout, one.honours))
        except GenerateError as refused:
            raise Invalid(f"recipes[{number}].{refused}" if api else str(refused)) from None
    out = io.BytesIO()
    write_zip(out, files(game, recipes or defaults(game), rights))
    return Response(out.getvalue(), mimetype="application/zip",
                    headers={"Content-Disposition": f'attachment; filename="{SHORT_NAMES[game]}.zip"'})
