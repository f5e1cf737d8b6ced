"""Record the OpenAPI document's examples from real answers: ``python -m tests.docs.record_examples``.

A service on a scratch SQLite database (the tests' inline dispatcher: each job finished when its
upload answers) takes a judge file of each game, a program's output to check and a generated file;
then every operation of the document is called once and its answer kept (lists cut to two items,
texts to three lines) in ``webui/examples.json``, which ``webui.openapi`` puts beside each answer's
schema. ``tests/docs/test_api_examples.py`` holds each example to its schema, so a view that changes
shape makes the test fail until the examples are recorded again.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from tests.support.http import post_file
from tests.support.inline import InlineDispatcher
from tests.support.paths import ROOT, judge
from tests.support.plugin import sqlite_settings
from worker.store.database import Database

EXAMPLES = ROOT / "webui" / "examples.json"
#: Items kept of each list of an answer.
KEEP = 2


def cut(value: Any) -> Any:
    """An answer made short enough to read in the reference: lists of two, nested alike."""
    if isinstance(value, list):
        return [cut(item) for item in value[:KEEP]]
    if isinstance(value, dict):
        return {key: cut(item) for key, item in value.items()}
    return value


def record() -> dict[str, dict[str, Any]]:
    from webui.app import create_app
    from webui.openapi import document

    with contextlib.ExitStack() as stack:
        folder = stack.enter_context(tempfile.TemporaryDirectory())
        settings = sqlite_settings(Path(folder))
        db = stack.enter_context(contextlib.closing(Database(settings)))
        dispatcher = InlineDispatcher(db, settings)
        client = create_app(settings, dispatcher, config={"TESTING": True}, db=db).test_client()
        jobs = {game: post_file(client, judge(game, "sample"), game, f"{game}.in").get_json()["id"]
                for game in ("10-20-30", "accordion", "mahjong")}
        job = jobs["accordion"]
        expected = client.get(f"/api/jobs/{job}/output").get_data(as_text=True).splitlines()
        expected[0] = expected[0].replace("remaining", "left")
        check = client.post(f"/api/jobs/{job}/checks", content_type="multipart/form-data",
                            data={"file": (io.BytesIO(("\n".join(expected) + "\n").encode()), "mine.out")})
        values = {"job_id": str(job), "index": "1", "check_id": str(check.get_json()["id"]),
                  "case_id": str(client.get(f"/api/jobs/{job}/cases/1").get_json()["id"])}
        found: dict[str, dict[str, Any]] = {}
        for path, item in document()["paths"].items():
            for method in ("get", "post", "patch", "delete"):
                if method not in item:
                    continue
                url = re.sub(r"{([a-z_]+)}", lambda match: values[match[1]], path)
                operation = item[method]
                if operation["operationId"] == "openapi":
                    continue  # the document as its own example says nothing
                if method != "get":
                    continue  # the writes are recorded below, each on a job it may change
                name = operation["operationId"]
                found[name] = answer(client.get(url + QUERIES.get(name, "")))
        found["createJob"] = answer(post_file(client, judge("mahjong", "sample"), "mahjong", "hands.in"))
        found["createCheck"] = answer(check)
        found["shareJob"] = answer(client.patch(f"/api/jobs/{job}", json={"shared": True}))
        found["shareJob"]["request"] = {"shared": True}
        found["generateJob"] = answer(client.post("/api/generate", json=GENERATE))
        found["packageProblem"] = answer(client.post("/api/package", json=PACKAGE))
        dispatcher.immediate = False  # a job still queued, to be cancelled
        waiting = post_file(client, judge("mahjong", "sample"), "mahjong", "hands.in").get_json()["id"]
        found["cancelJob"] = answer(client.post(f"/api/jobs/{waiting}/cancel"))
        found["rerunJob"] = answer(client.post(f"/api/jobs/{jobs['10-20-30']}/rerun"))
        found["generateJob"]["request"] = GENERATE
        found["packageProblem"]["request"] = PACKAGE
        return found


#: The query strings the reads are recorded with: what a reader of the reference would try first.
QUERIES = {"searchResults": "?game=accordion&number_min=2", "exportResults": "?game=accordion&format=ndjson",
           "checkCases": "?verdict=not_accepted", "jobCases": "?sort=-number"}
#: The generated file recorded: the README's example, smaller.
GENERATE = {"game": "10-20-30", "cases": 30, "seed": 2026, "mix": "win=1,loss=1,draw=1"}
#: The package recorded: a setter's two recipes.
PACKAGE = {"game": "mahjong", "recipes": [{"cases": 40, "seed": 7, "mix": "ready=3,not-ready=1"},
                                          {"cases": 20, "seed": 8, "layout": "sorted,crlf", "honours": False}]}


def answer(response: Any) -> dict[str, Any]:
    if response.mimetype == "application/json":
        body: Any = cut(response.get_json())
    elif response.mimetype == "application/zip":  # what it holds, as text
        with zipfile.ZipFile(io.BytesIO(response.data)) as opened:
            body = "a zip of " + ", ".join(opened.namelist()[:KEEP + 1]) + ", …"
    else:
        body = "".join(response.get_data(as_text=True).splitlines(keepends=True)[:3])
    return {"status": str(response.status_code), "type": response.mimetype, "example": body}


if __name__ == "__main__":
    EXAMPLES.write_text(json.dumps(record(), indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    print(f"examples written to {EXAMPLES}")
