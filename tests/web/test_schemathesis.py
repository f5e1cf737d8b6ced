"""The live app fuzzed against its own OpenAPI document (schemathesis, seeded and bounded).

Every operation gets valid and invalid requests made from the document: no answer may be a
server error, every answer must be one the document states (status, content type, headers,
body schema), what the document calls invalid must be refused, and what it calls valid must
be accepted, but for the few rules it can only state in words (see ``accepted``).

The app holds one finished job per game, so that the smallest ids exist. A read (GET) changes
nothing, so the reads are fuzzed against one such app per database (tests/web/conftest.py's
``reading``, which checks that they changed nothing); a write gets an app of its own.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode, checks
from schemathesis.config import SchemathesisConfig

from tests.web.conftest import Reading
from webui.openapi import document
from worker.config import Settings
from worker.jobs.filters import DEFAULT_PER_PAGE, MAX_PAGED

#: Examples per operation and generation mode: enough to reach every parameter's edges, few enough for CI.
EXAMPLES = 25
#: The most cases a generated job of the write tests may hold (see the ``settings`` fixture).
GENERATED_CASES = 2_000

CONFIG = SchemathesisConfig.from_dict({"seed": 246, "generation": {"deterministic": True, "database": "none"}})


def no_server_error(ctx: Any, response: Any, case: Any) -> bool | None:
    """``not_a_server_error``, but for /healthz's documented 503: the test app has no worker."""
    if case.path == "/healthz" and response.status_code == 503:
        return None
    return checks.not_a_server_error(ctx, response, case)


def accepted(ctx: Any, response: Any, case: Any) -> bool | None:
    """``positive_data_acceptance``, but for the rules a JSON schema cannot hold, which the document
    states in words: the grammar of a judge file or of an input text, and page numbers that
    reach only the first results or that come with a cursor."""
    query = case.query or {}
    if case.body is not None or "input" in query:
        return None
    if "page" in query and case.path.endswith(("/cases", "/results")):
        page, per_page = int(query["page"]), int(query.get("per_page", DEFAULT_PER_PAGE))
        if page * per_page > MAX_PAGED or (page > 1 and {"after", "before", "last"} & set(query)):
            return None
    return checks.positive_data_acceptance(ctx, response, case)


def refused(ctx: Any, response: Any, case: Any) -> bool | None:
    """``negative_data_rejection``, but for the type of a multipart part: every part is bytes, so a
    "boolean" file is the four bytes ``true``, which is a file like any other."""
    if isinstance(case.body, dict) and "file" in case.body:
        return None
    return checks.negative_data_rejection(ctx, response, case)


CHECKS = [no_server_error, accepted, refused, checks.status_code_conformance, checks.content_type_conformance,
          checks.response_schema_conformance, checks.response_headers_conformance,
          checks.allow_header_conformance, checks.missing_required_header,
          checks.unsupported_method]


def _cases(reads: bool) -> list[Any]:
    """Every operation in both modes, the reads or the others; an operation that takes nothing has no
    invalid request to make."""
    found = []
    for path, item in document()["paths"].items():
        for method, operation in item.items():
            if method == "parameters" or (method == "get") != reads:
                continue
            takes = item.get("parameters") or operation.get("parameters") or operation.get("requestBody")
            for mode in GenerationMode if takes else [GenerationMode.POSITIVE]:
                found.append(pytest.param(path, method.upper(), mode, id=f"{mode.value}-{method.upper()} {path}"))
    return sorted(found, key=lambda param: param.id)


def loaded(app: Any) -> Any:
    """The app's document as schemathesis reads it, with the constants of the app's code it draws values
    from (found by reading the app's modules: a tenth of a second, kept with the loaded document)."""
    return schemathesis.openapi.from_wsgi("/api/openapi.json", app, config=CONFIG)


def fuzz(schema: Any, path: str, method: str, mode: GenerationMode) -> None:
    """Every answer to ``EXAMPLES`` requests made from the document must pass ``CHECKS``."""
    operation = schema[path][method]

    @given(operation.as_strategy(generation_mode=mode))
    @settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    def answers(case: Any) -> None:
        case.call_and_validate(checks=CHECKS)

    answers()


@pytest.fixture(scope="module")
def read_schema(reading: Reading) -> Any:
    """The reads' app, loaded once for all their tests on its database."""
    return loaded(reading.app)


@pytest.mark.slow
@pytest.mark.parametrize(("path", "method", "mode"), _cases(reads=True))
def test_every_answer_to_a_read_is_documented_and_no_input_is_a_server_error(
        read_schema: Any, path: str, method: str, mode: GenerationMode) -> None:
    fuzz(read_schema, path, method, mode)


@pytest.fixture(name="settings")
def capped_settings(settings: Settings) -> Settings:
    """The write tests' settings: ``POST /api/generate`` makes and solves its job inline, in the request,
    and the largest valid case counts would take minutes each; what the bound refuses is a documented
    ``400`` all the same."""
    return dataclasses.replace(settings, max_cases_per_job=GENERATED_CASES)


@pytest.mark.slow
@pytest.mark.parametrize(("path", "method", "mode"), _cases(reads=False))
def test_every_answer_to_a_write_is_documented_and_no_input_is_a_server_error(
        app: Any, three_jobs: dict[str, Any], path: str, method: str, mode: GenerationMode) -> None:
    fuzz(loaded(app), path, method, mode)
