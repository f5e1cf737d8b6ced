"""The API reference's examples: every operation that answers with a body has a real answer as its
example (``tests/docs/record_examples.py`` records them into ``webui/examples.json``), and every example
is what its schema says, so that a view changing shape fails here until they are recorded again."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from webui.openapi import EXAMPLES, document

METHODS = ("get", "post", "patch", "delete")


def operations() -> list[tuple[str, dict[str, Any]]]:
    return [(operation["operationId"], operation) for item in document()["paths"].values()
            for method, operation in item.items() if method in METHODS]


def test_every_operation_that_answers_with_a_body_has_an_example() -> None:
    without = [name for name, operation in operations()
               if any(status.startswith("2") and "content" in answer
                      for status, answer in operation["responses"].items())
               and not any("example" in content for answer in operation["responses"].values()
                           for content in answer.get("content", {}).values())]
    assert without == ["openapi"], "record them: python -m tests.docs.record_examples"
    assert EXAMPLES.keys() <= {name for name, _ in operations()}


@pytest.mark.parametrize("name, operation", operations(), ids=[name for name, _ in operations()])
def test_each_example_is_what_its_schema_says(name: str, operation: dict[str, Any]) -> None:
    doc = document()
    for status, answer in operation["responses"].items():
        for kind, content in answer.get("content", {}).items():
            if "example" in content:
                root = {**content["schema"], "components": doc["components"]}
                errors = list(jsonschema.Draft202012Validator(root).iter_errors(content["example"]))
                assert not errors, f"{name} {status} {kind}: {errors[0].message}"
    if "requestBody" in operation:
        for content in operation["requestBody"]["content"].values():
            if "example" in content:
                root = {**content["schema"], "components": doc["components"]}
                assert jsonschema.Draft202012Validator(root).is_valid(content["example"]), name
