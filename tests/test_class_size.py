"""No class in ``worker/`` or ``webui/`` grows past :data:`MAX_PUBLIC` public methods (issue 43): a class
that does more is split by concept into objects it holds, so that a reader finds one idea in one place."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support.paths import ROOT

#: Public methods a class may define in its body, properties included.
MAX_PUBLIC = 15


def public_methods(node: ast.ClassDef) -> list[str]:
    """The methods ``node`` defines whose names do not start with ``_``."""
    return [item.name for item in node.body
            if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and not item.name.startswith("_")]


def oversized(roots: list[Path]) -> list[str]:
    """``path:line Class (n)`` of each class under ``roots`` with over :data:`MAX_PUBLIC` public methods."""
    found = []
    for root in roots:
        for path in sorted(root.rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.ClassDef) and len(methods := public_methods(node)) > MAX_PUBLIC:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({len(methods)})")
    return found


def test_the_count_sees_methods_and_properties_but_not_private_ones() -> None:
    body = "\n".join(f"    def m{k}(self): pass" for k in range(MAX_PUBLIC))
    source = f"class A:\n{body}\n    @property\n    def p(self): pass\n    def _q(self): pass\n"
    (node,) = ast.parse(source).body
    assert isinstance(node, ast.ClassDef)
    assert len(public_methods(node)) == MAX_PUBLIC + 1


def test_no_class_in_worker_or_webui_has_more_than_fifteen_public_methods() -> None:
    assert oversized([ROOT / "worker", ROOT / "webui"]) == []
