"""The pieces of the OpenAPI document, and the declarations that put each route next to its description.

A blueprint that answers the API makes an :class:`Operations` and registers each route through
it: the route goes on the blueprint, its description into the declarations, and
:mod:`webui.openapi` assembles the document from every blueprint's declarations (so a route
registered any other way is missing from the document, which ``tests/web/test_openapi.py``
catches). Response schemas name the typed views the routes answer with (:func:`ref`); the
document describes every view so named, and the views they hold, from the views' own fields.

>>> from flask import Blueprint
>>> from worker.jobs.views import OverviewView
>>> operations = Operations(Blueprint("example", __name__, url_prefix="/api"))
>>> @operations.get("/things/<id:job_id>", "getThing", "A thing", tag="jobs",
...                 responses={"200": json_body(ref(OverviewView), "The thing."), "404": NOT_FOUND})
... def thing(job_id: int) -> str:
...     return ""
>>> paths, views = assemble([operations])
>>> item = paths["/api/things/{job_id}"]
>>> [p["name"] for p in item["parameters"]], list(item["get"]["responses"]), list(views)
(['job_id'], ['200', '404', '503', '429', '401'], ['Overview'])
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields
from datetime import datetime
from types import UnionType
from typing import Any, Literal, TypeVar, Union, get_args, get_origin, get_type_hints

from flask import Blueprint

from webui.converters import MAX_CASE_ID
from worker.jobs.filters import DEFAULT_PER_PAGE, MAX_PAGED, MAX_PER_PAGE
from worker.jobs.views import View
from worker.store.models import MAX_INT

Route = TypeVar("Route", bound=Callable[..., Any])
#: Who may call an operation: anyone, a reader (with keys: a key's, or anyone with DEALER_PUBLIC_READS), a writer.
Access = Literal["open", "read", "write"]


# --- schemas ---------------------------------------------------------------------------------------


def component(view: type[View]) -> str:
    """A view's name in ``components/schemas``: ``JobView`` is ``Job``.

    >>> from worker.jobs.views import JobView, CasePage
    >>> component(JobView), component(CasePage)
    ('Job', 'CasePage')
    """
    return view.__name__.removesuffix("View")


class ViewRef(dict[str, str]):
    """``{"$ref": ...}`` to a view's schema that remembers the view, so that the document describes it."""

    def __init__(self, view: type[View]) -> None:
        super().__init__({"$ref": f"#/components/schemas/{component(view)}"})
        self.view = view


def ref(view: type[View]) -> dict[str, str]:
    """The schema of an answer that is ``view``."""
    return ViewRef(view)


#: What every error answer is.
ERROR_SCHEMA = {"type": "object", "required": ["error"], "additionalProperties": False,
                "properties": {"error": {"type": "string"}}}


def _type_schema(kind: Any, found: dict[str, type[View]]) -> dict[str, Any]:
    """The JSON Schema of a view field's type; views met on the way are added to ``found``."""
    if isinstance(kind, type) and issubclass(kind, View):
        found.setdefault(component(kind), kind)
        return {"$ref": f"#/components/schemas/{component(kind)}"}
    origin, args = get_origin(kind), get_args(kind)
    if origin in (UnionType, Union):
        options = [a for a in args if a is not type(None)]
        inner = _type_schema(options[0], found) if len(options) == 1 else {}
        if "type" in inner and isinstance(inner["type"], str):
            return {**inner, "type": [inner["type"], "null"]}
        return {"anyOf": [inner, {"type": "null"}]}
    if origin is list:
        return {"type": "array", "items": _type_schema(args[0], found)} if args else {"type": "array"}
    if origin is dict:
        return {"type": "object", "additionalProperties": _type_schema(args[1], found)}
    simple = {int: "integer", float: "number", str: "string", bool: "boolean", datetime: "string"}
    if kind in simple:
        return {"type": simple[kind]}
    return {}  # Any


def view_schema(view: type[View], found: dict[str, type[View]] | None = None) -> dict[str, Any]:
    """The JSON Schema of a view: every field, each required, nothing else allowed.

    >>> from worker.jobs.views import SlowestCase
    >>> schema = view_schema(SlowestCase)
    >>> schema["required"], schema["properties"]["solve_us"]["type"]
    (['id', 'index', 'solve_us'], 'integer')
    """
    found = {} if found is None else found
    hints = get_type_hints(view)
    properties: dict[str, Any] = {}
    for item in fields(view):  # type: ignore[arg-type]
        extra = {key: value for key, value in item.metadata["schema"].items() if key != "csv"}
        properties[item.name] = {**_type_schema(hints[item.name], found), **extra,
                                 "description": item.metadata["description"]}
    for name, (kind, description) in view.derived.items():
        properties[name] = {**_type_schema(kind, found), "description": description}
    return {"type": "object", "required": list(properties), "properties": properties,
            "additionalProperties": False}


def schemas(views: dict[str, type[View]]) -> dict[str, Any]:
    """``components/schemas``: the error, ``views`` and every view they hold, by name."""
    found = dict(views)
    described: dict[str, Any] = {"Error": ERROR_SCHEMA}
    while missing := [name for name in found if name not in described]:
        for name in missing:
            described[name] = view_schema(found[name], found)
    return dict(sorted(described.items()))


# --- parameters and answers ------------------------------------------------------------------------


def json_body(schema: dict[str, Any], description: str) -> dict[str, Any]:
    """An answer in JSON."""
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def error(description: str) -> dict[str, Any]:
    """An error answer, ``{"error": ...}``."""
    return json_body({"$ref": "#/components/schemas/Error"}, description)


def query(name: str, description: str, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    """An optional query parameter (a string unless ``schema`` says otherwise)."""
    return {"name": name, "in": "query", "required": False, "description": description,
            "schema": schema or {"type": "string"}}


def path_parameter(name: str, description: str, maximum: int = MAX_INT) -> dict[str, Any]:
    """An id in the path, read by the ``id`` URL converter (:mod:`webui.converters`)."""
    return {"name": name, "in": "path", "required": True, "description": description + " An id that cannot "
            "exist (0, or past the largest the database holds) is answered 404 like any other.",
            "schema": {"type": "integer", "minimum": 1, "maximum": maximum}}


#: Every name a route's path takes a value by, described once: the document puts each on its paths.
PATH_PARAMETERS = {
    "job_id": path_parameter("job_id", "The job's id."),
    "index": path_parameter("index", "The case's number in the file, from 1."),
    "case_id": path_parameter("case_id", "The case's id (its job's id × 10⁹ + its index).", MAX_CASE_ID),
    "check_id": path_parameter("check_id", "The check's id."),
}

#: A text the API reads through :func:`webui.params.given`, which refuses an empty one (or one of spaces only).
TEXT = {"type": "string", "minLength": 1, "pattern": r"\S"}

#: A yes/no parameter as :func:`webui.params.flag` reads it.
FLAG = {"type": "string", "enum": ["1", "true", "yes", "0", "false", "no"]}


def paging_parameters(per_page: int = DEFAULT_PER_PAGE, deepest: int = MAX_INT) -> list[dict[str, Any]]:
    """``page`` and ``per_page`` (:func:`webui.params.paging`); ``deepest`` is the last page a number reaches."""
    return [query("page", "Page number, from 1." + (
                      f" Page numbers reach the first {MAX_PAGED:,} results (page × per_page ≤ {MAX_PAGED:,}; "
                      "a deeper page is refused with 400): past them, follow the pages' next and prev cursors."
                      if deepest == MAX_PAGED else ""),
                  {"type": "integer", "minimum": 1, "maximum": deepest, "default": 1}),
            query("per_page", f"Items per page (at most {MAX_PER_PAGE}).",
                  {"type": "integer", "minimum": 1, "maximum": MAX_PER_PAGE, "default": per_page})]


NOT_FOUND = error("No such job or case.")
BAD_REQUEST = error("A parameter is not valid; the message says which and why.")
RETRY_AFTER = {"Retry-After": {"schema": {"type": "integer"}, "description": "Seconds to wait."}}
TOO_MANY = {**error("The client (its API key, else its address) already has as many unfinished jobs as it may "
                    "(DEALER_MAX_ACTIVE_JOBS_PER_CLIENT), or created as many as it may in the last minute "
                    "(DEALER_MAX_JOBS_PER_MINUTE_PER_CLIENT), or its owner keeps as many jobs as its quota allows "
                    "(DEALER_QUOTA_JOBS); or, as for every operation, too many wrong keys."),
            "headers": RETRY_AFTER}

# What every operation may answer besides what it declares, by who may call it (added by assemble()).
UNAUTHORIZED = {**error("No valid API key (only when the service has keys, DEALER_API_KEYS): the answer "
                        "carries WWW-Authenticate: Bearer."),
                "headers": {"WWW-Authenticate": {"schema": {"type": "string"},
                                                 "description": 'Bearer realm="dealer"'}}}
FORBIDDEN = error("A request from the pages without their CSRF token, or one a browser marks as cross-site. "
                  "Requests with a bearer token need no CSRF token.")
THROTTLED = {**error("Too many wrong API keys from this address, or with this key's first characters "
                     "(DEALER_AUTH_FAILURES_ALLOWED): wait as long as Retry-After says."), "headers": RETRY_AFTER}
UNAVAILABLE = error("The database does not answer; try again in a moment.")
#: Writes need a key once the service has keys; reads too unless DEALER_PUBLIC_READS.
SECURITY: dict[Access, list[dict[str, list[str]]]] = {
    "open": [{}], "read": [{}, {"bearerAuth": []}, {"sessionCookie": []}],
    "write": [{"bearerAuth": []}, {"sessionCookie": []}]}


# --- declarations ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Operation:
    """One route's description, as declared next to it."""

    path: str
    method: str
    operation_id: str
    summary: str
    tag: str
    responses: dict[str, Any]
    parameters: list[dict[str, Any]]
    request_body: dict[str, Any] | None
    description: str | None
    access: Access
    #: Whether it reads the database (so may answer 503 when it is down).
    database: bool

    def described(self, keyed: bool = True) -> dict[str, Any]:
        """The operation as the document has it, with what its access and the database add; ``keyed``:
        whether the service has API keys (without them no operation asks for any)."""
        responses = dict(self.responses)
        if self.database:
            responses.setdefault("503", UNAVAILABLE)
        if self.access != "open":
            responses.setdefault("429", THROTTLED)
            responses.setdefault("401", UNAUTHORIZED)
            if self.access == "write":
                responses.setdefault("403", FORBIDDEN)
        found: dict[str, Any] = {"summary": self.summary}
        if self.description:
            found["description"] = self.description
        found.update(operationId=self.operation_id, tags=[self.tag])
        if self.parameters:
            found["parameters"] = self.parameters
        if self.request_body:
            found["requestBody"] = self.request_body
        found.update(responses=responses, security=SECURITY[self.access] if keyed else SECURITY["open"])
        return found


def openapi_path(rule: str) -> str:
    """A Flask rule as an OpenAPI path.

    >>> openapi_path("/api/jobs/<id:job_id>/cases/<id:index>")
    '/api/jobs/{job_id}/cases/{index}'
    """
    return re.sub(r"<(?:[a-z_]+:)?([a-z_]+)>", r"{\1}", rule)


class Operations:
    """A blueprint's routes, each registered with its OpenAPI description (see the module's docstring)."""

    def __init__(self, blueprint: Blueprint) -> None:
        self.blueprint = blueprint
        self.declared: list[Operation] = []

    def get(self, rule: str, operation_id: str, summary: str, **declared: Any) -> Callable[[Route], Route]:
        return self.route("get", rule, operation_id, summary, **declared)

    def post(self, rule: str, operation_id: str, summary: str, **declared: Any) -> Callable[[Route], Route]:
        return self.route("post", rule, operation_id, summary, **declared)

    def delete(self, rule: str, operation_id: str, summary: str, **declared: Any) -> Callable[[Route], Route]:
        return self.route("delete", rule, operation_id, summary, **declared)

    def patch(self, rule: str, operation_id: str, summary: str, **declared: Any) -> Callable[[Route], Route]:
        return self.route("patch", rule, operation_id, summary, **declared)

    def route(self, method: str, rule: str, operation_id: str, summary: str, *, tag: str,
              responses: dict[str, Any], parameters: Iterable[dict[str, Any]] = (),
              request_body: dict[str, Any] | None = None, description: str | None = None,
              access: Access | None = None, database: bool = True) -> Callable[[Route], Route]:
        """Register the decorated function as the route ``method rule`` and describe it. ``access``
        defaults to ``write`` for POST, PATCH and DELETE, ``read`` for GET: what :mod:`webui.auth` asks of them."""
        operation = Operation(openapi_path((self.blueprint.url_prefix or "") + rule), method, operation_id, summary,
                              tag, responses, list(parameters), request_body, description,
                              access or ("read" if method == "get" else "write"), database)

        def register(view: Route) -> Route:
            self.blueprint.add_url_rule(rule, view_func=view, methods=[method.upper()])
            self.declared.append(operation)
            return view

        return register


def assemble(declarations: Iterable[Operations], keyed: bool = True) -> tuple[dict[str, Any], dict[str, type[View]]]:
    """The document's ``paths`` from the blueprints' declarations, in the order declared, and the views
    their answers name, for a service with API keys or without (``keyed``). Each path takes its path
    parameters from :data:`PATH_PARAMETERS`."""
    paths: dict[str, Any] = {}
    views: dict[str, type[View]] = {}
    for operations in declarations:
        for operation in operations.declared:
            if operation.path not in paths:
                names = re.findall(r"{([a-z_]+)}", operation.path)
                unknown = [name for name in names if name not in PATH_PARAMETERS]
                if unknown:
                    raise LookupError(f"{operation.path}: describe {', '.join(unknown)} in spec.PATH_PARAMETERS")
                paths[operation.path] = {"parameters": [PATH_PARAMETERS[name] for name in names]} if names else {}
            if operation.method in paths[operation.path]:
                raise LookupError(f"{operation.method.upper()} {operation.path} is declared twice")
            paths[operation.path][operation.method] = operation.described(keyed)
    return _plain(paths, views), views


def _plain(value: Any, views: dict[str, type[View]]) -> Any:
    """A copy of ``value`` in plain JSON types, noting the views its schemas name in ``views``."""
    if isinstance(value, ViewRef):
        views.setdefault(component(value.view), value.view)
        return dict(value)
    if isinstance(value, dict):
        return {key: _plain(item, views) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item, views) for item in value]
    return value
