"""The OpenAPI 3.1 document of the JSON API, served at ``/api/openapi.json`` (and shown at ``/docs``).

Each blueprint declares its operations next to its routes (:class:`webui.spec.Operations`); the
document is assembled from those declarations, in the order of :data:`DECLARED`, and every
response schema is made from the typed views the routes answer with. ``tests/web/test_openapi.py``
checks that every route is documented with its methods and that real responses match their
documented schemas field by field.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from flask import Blueprint, jsonify

from webui import api, checks, generate, ops, results
from webui.auth import enabled
from webui.spec import Operations, assemble, json_body, schemas

openapi = Blueprint("openapi", __name__)
operations = Operations(openapi)

#: Every blueprint's declarations, in the order the document lists their paths.
DECLARED = (api.operations, generate.operations, results.operations, checks.operations, operations, ops.operations)

INFO = {"title": "Dealer", "version": "1",
        "description": "Solves judge files of UVa 246 (10-20-30), 127 (Accordian Patience) and 11210 "
                       "(Chinese Mahjong). Errors are JSON {\"error\": \"...\"} with a fitting 4xx status."
                       " Once the service has API keys (dealer keys add, or DEALER_API_KEYS), every write"
                       " needs one, sent as `Authorization: Bearer <key>`; reads too unless DEALER_PUBLIC_READS"
                       " is true, and a user's key reads only its own jobs."}
TAGS = [{"name": "jobs"}, {"name": "results"}, {"name": "checks"}, {"name": "service"}]
SECURITY_SCHEMES = {
    "bearerAuth": {"type": "http", "scheme": "bearer", "description":
                   "An API key made by dealer keys add or given in DEALER_API_KEYS (dealer submit "
                   "sends DEALER_API_KEY)."},
    "sessionCookie": {"type": "apiKey", "in": "cookie", "name": "dealer_session", "description":
                      "The pages' login (/login); state-changing requests with it also need the "
                      "session's CSRF token in the X-CSRF-Token header."},
}


@operations.get("/api/openapi.json", "openapi", "This document", tag="service", access="open", database=False,
                responses={"200": json_body({"type": "object"}, "The OpenAPI 3.1 document.")})
def openapi_document() -> Any:
    return jsonify(served())


def served() -> dict[str, Any]:
    """The document as this service is set up: without API keys no operation asks for one."""
    return document(keyed=enabled())


@cache
def document(keyed: bool = True) -> dict[str, Any]:
    paths, views = assemble(DECLARED, keyed)
    return {"openapi": "3.1.0", "info": INFO, "tags": TAGS, "paths": with_examples(paths),
            "components": {"schemas": schemas(views), "securitySchemes": SECURITY_SCHEMES}}


#: Real answers of each operation (``tests/docs/record_examples.py`` records them; ``tests/docs`` holds
#: each to its schema), shown beside the schemas by ``/docs``.
EXAMPLES: dict[str, dict[str, Any]] = json.loads((resources.files("webui") / "examples.json").read_text())


def with_examples(paths: dict[str, Any]) -> dict[str, Any]:
    """``paths`` with each operation's recorded answer (and request) as the example of its content."""
    for item in paths.values():
        for operation in item.values():
            recorded = EXAMPLES.get(operation.get("operationId", "")) if isinstance(operation, dict) else None
            if recorded is None:
                continue
            content = operation["responses"].get(recorded["status"], {}).get("content", {})
            if recorded["type"] in content:
                content[recorded["type"]]["example"] = recorded["example"]
            if "request" in recorded:
                operation["requestBody"]["content"]["application/json"]["example"] = recorded["request"]
    return paths
