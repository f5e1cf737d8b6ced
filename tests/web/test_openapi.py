"""The OpenAPI document matches the app: every route under /api, plus /healthz and /metrics."""

from __future__ import annotations

import re
from typing import Any

import pytest


def _documented_path(rule: str) -> str:
    return re.sub(r"<(?:[a-z_]+:)?([a-z_]+)>", r"{\1}", rule)


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


def _validate(doc: dict[str, Any], schema: dict[str, Any], body: Any, where: str) -> None:
    import jsonschema

    root = {**schema, "components": doc["components"]}  # so that "#/components/..." resolves
    errors = sorted(jsonschema.Draft202012Validator(root).iter_errors(body), key=lambda e: list(e.path))
    assert not errors, f"{where}: {errors[0].message} at {list(errors[0].path)}"


def _requests(job: dict[str, Any], case_id: int) -> list[tuple[str, str, str]]:
    """(method, documented path, concrete path) for a request of every operation that answers JSON."""
    j = job["id"]
    return [
        ("get", "/api/jobs", "/api/jobs?per_page=2"), ("get", "/api/jobs/{job_id}", f"/api/jobs/{j}"),
        ("get", "/api/jobs/{job_id}", "/api/jobs/999999"),
        ("get", "/api/jobs/{job_id}/cases", f"/api/jobs/{j}/cases?per_page=3"),
        ("get", "/api/jobs/{job_id}/cases", f"/api/jobs/{j}/cases?sort=nonsense"),
        ("get", "/api/jobs/{job_id}/cases/{index}", f"/api/jobs/{j}/cases/1"),
        ("get", "/api/jobs/{job_id}/distribution", f"/api/jobs/{j}/distribution"),
        ("get", "/api/jobs/{job_id}/timings", f"/api/jobs/{j}/timings"),
        ("get", "/api/cases/{case_id}", f"/api/cases/{case_id}"), ("get", "/api/cases/{case_id}", "/api/cases/999999"),
        ("get", "/api/results", "/api/results?game=10-20-30"), ("get", "/api/results", "/api/results?outcome=nope"),
        ("get", "/api/overview", "/api/overview"), ("get", "/api/games", "/api/games"),
        ("get", "/healthz", "/healthz"), ("post", "/api/jobs/{job_id}/cancel", f"/api/jobs/{j}/cancel"),
        ("post", "/api/jobs/{job_id}/rerun", f"/api/jobs/{j}/rerun"),
        ("delete", "/api/jobs/{job_id}", "/api/jobs/999999"),
        ("get", "/api/jobs", "/api/jobs?filename=sample"), ("get", "/api/workers", "/api/workers"),
        ("get", "/api/jobs/{job_id}/throughput", f"/api/jobs/{j}/throughput"),
        ("get", "/api/jobs/{job_id}/throughput", "/api/jobs/999999/throughput"),
    ]


def test_real_responses_match_their_documented_schemas(client: Any, three_jobs: dict[str, Any]) -> None:
    """Every field the document promises is in the answer, and nothing it does not: the document is made
    from the same views the API answers with, and this keeps the two honest."""
    doc = client.get("/api/openapi.json").get_json()
    job = three_jobs["mahjong"]
    case_id = client.get(f"/api/jobs/{job['id']}/cases").get_json()["items"][0]["id"]
    seen = set()
    for method, documented, path in _requests(job, case_id):
        response = getattr(client, method)(path)
        responses = doc["paths"][documented][method]["responses"]
        status = str(response.status_code)
        assert status in responses, f"{method.upper()} {path} answered {status}, not documented"
        content = responses[status].get("content", {}).get("application/json")
        if content is not None:
            _validate(doc, content["schema"], response.get_json(), f"{method.upper()} {path} → {status}")
            seen.add(documented)
    assert len(seen) >= 10


def test_the_csv_export_has_the_documented_columns(client: Any, three_jobs: dict[str, Any]) -> None:
    import csv
    import io
    import json

    from worker.jobs.views import CSV_COLUMNS, CaseView

    for game in ("mahjong", "accordion", "10-20-30"):
        body = client.get(f"/api/results/export?format=csv&game={game}").get_data(as_text=True)
        header = body.splitlines()[0].split(",")
        assert tuple(header) == CSV_COLUMNS
        records = [json.loads(line) for line in client.get(f"/api/results/export?game={game}").get_data(as_text=True)
                   .splitlines()]
        for row, record in zip(csv.DictReader(io.StringIO(body)), records, strict=True):
            shown = {**record, "detail": " ".join(map(str, record["detail"] or [])), "cached": str(record["cached"])}
            assert row == {column: "" if shown[column] is None else str(shown[column]) for column in CSV_COLUMNS}
    documented = client.get("/api/openapi.json").get_json()["components"]["schemas"]["Case"]["properties"]
    assert set(header) <= set(documented) and set(header) <= set(CaseView.__dataclass_fields__)


def test_every_query_parameter_the_api_refuses_empty_is_documented_as_refused(
        client: Any, three_jobs: dict[str, Any]) -> None:
    """``name=`` (or spaces) is refused by the API (``params.given``): the document says so, else a client
    made from it sends one it allows and gets a 400 (Schemathesis found ``GET /api/jobs?filename=``)."""
    import jsonschema

    doc = client.get("/api/openapi.json").get_json()
    job = three_jobs["mahjong"]
    ids = {"job_id": job["id"], "index": 1, "check_id": 1,
           "case_id": client.get(f"/api/jobs/{job['id']}/cases").get_json()["items"][0]["id"]}
    tried = []
    for path, item in doc["paths"].items():
        operation = item.get("get")
        if operation is None:
            continue
        for parameter in operation.get("parameters", []):
            if parameter["in"] != "query":
                continue
            for empty in ("", "  "):
                answer = client.get(path.format(**ids), query_string={parameter["name"]: empty})
                if answer.status_code == 400:
                    tried.append(parameter["name"])
                    allowed = jsonschema.Draft202012Validator(parameter["schema"]).is_valid(empty)
                    assert not allowed, f"GET {path}?{parameter['name']}={empty!r} is refused, but documented valid"
    assert {"filename", "input"} <= set(tried)
    assert client.get("/api/jobs", query_string={"filename": ""}).status_code == 400


def test_without_keys_no_operation_asks_for_one(client: Any) -> None:
    """In open mode (no DEALER_API_KEYS) nothing asks for a key: the document says so (with keys,
    ``tests/web/test_access.py`` checks that writes declare them)."""
    doc = client.get("/api/openapi.json").get_json()
    for path, item in doc["paths"].items():
        for method, operation in item.items():
            if method != "parameters":
                assert operation["security"] == [{}], (path, method)
    assert client.post("/api/jobs/999999/cancel").status_code == 404  # asked for no key, answered


def test_no_description_loses_words_to_the_pages_markdown() -> None:
    """Swagger UI (/docs) renders descriptions as CommonMark and drops HTML it does not allow: a ``<key>``
    outside a code span would vanish ("Authorization: Bearer ;")."""
    from webui.openapi import document

    found: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("description", "summary") and isinstance(value, str):
                    if re.search(r"<[A-Za-z/!]", re.sub(r"`[^`]*`", "", value)):
                        found.append(value)
                elif key != "example":
                    walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(document(keyed=True))
    assert found == []
    assert "`Authorization: Bearer <key>`" in document(keyed=True)["info"]["description"]
