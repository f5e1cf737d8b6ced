"""The OpenAPI document matches the app: every route under /api, plus /healthz and /metrics."""

from __future__ import annotations

import re
from typing import Any

import pytest


def _documented_path(rule: str) -> str:
    return re.sub(r"<(?:[a-z]+:)?([a-z_]+)>", r"{\1}", rule)


def _routes(app: Any) -> dict[str, set[str]]:
    routes: dict[str, set[str]] = {}
    for rule in app.url_map.iter_rules():
        if rule.rule.startswith("/api/") or rule.rule in ("/healthz", "/metrics"):
            methods = {m.lower() for m in rule.methods or ()} - {"head", "options"}
            routes.setdefault(_documented_path(rule.rule), set()).update(methods)
    return routes


def test_every_route_is_documented_with_its_methods(app: Any, client: Any) -> None:
    doc = client.get("/api/openapi.json").get_json()
    routes = _routes(app)
    assert len(routes) >= 17
    for path, methods in routes.items():
        assert path in doc["paths"], f"{path} is not in the OpenAPI document"
        documented = set(doc["paths"][path]) - {"parameters", "summary", "description"}
        assert documented == methods, f"{path}: routes have {sorted(methods)}, the document {sorted(documented)}"
    assert set(doc["paths"]) == set(routes), "the document has paths the app does not serve"


def test_document_is_openapi_3_1_and_consistent(client: Any) -> None:
    doc = client.get("/api/openapi.json").get_json()
    assert doc["openapi"] == "3.1.0" and doc["info"]["title"] == "Dealer"
    schemas = doc["components"]["schemas"]
    operation_ids = []
    for path, item in doc["paths"].items():
        names = set(re.findall(r"{([a-z_]+)}", path))
        for method, operation in item.items():
            if method == "parameters":
                continue
            operation_ids.append(operation["operationId"])
            params = item.get("parameters", []) + operation.get("parameters", [])
            assert {p["name"] for p in params if p["in"] == "path"} == names, (path, method)
            assert operation["responses"], (path, method)
    assert len(operation_ids) == len(set(operation_ids))
    for ref in re.findall(r'"\$ref": "#/components/schemas/([A-Za-z]+)"', client.get("/api/openapi.json").get_data(as_text=True)):
        assert ref in schemas


@pytest.mark.parametrize("path", ["/api/jobs", "/api/results", "/api/jobs/{job_id}/cases"])
def test_query_parameters_are_described(client: Any, path: str) -> None:
    doc = client.get("/api/openapi.json").get_json()
    names = {p["name"] for p in doc["paths"][path]["get"]["parameters"]}
    assert {"page", "per_page"} <= names
