"""MkDocs hook: the HTTP API page's table of operations, written from the service's OpenAPI document.

``docs/api.md`` holds the marker ``<!-- api-operations -->``; each build replaces it with every
operation of ``webui.openapi.document()`` (the document ``/api/openapi.json`` serves and ``/docs``
shows): method, path, summary and query parameters, so that no route is missing from the guide.
"""

from __future__ import annotations

from typing import Any

MARKER = "<!-- api-operations -->"
METHODS = ("get", "post", "patch", "delete")


def table() -> str:
    from webui.openapi import document

    rows = ["| request | answer | query parameters |", "|---|---|---|"]
    for path, item in document()["paths"].items():
        for method in METHODS:
            if method not in item:
                continue
            operation = item[method]
            names = ", ".join(f"`{p['name']}`" for p in operation.get("parameters", []) if p["in"] == "query")
            rows.append(f"| `{method.upper()} {path}` | {operation['summary']} | {names} |")
    return "\n".join(rows) + "\n"


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, table())
