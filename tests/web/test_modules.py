"""How webui's modules depend on each other: no cycle, even through an import inside a function, and no
module importing another's private names."""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

from tests.support.paths import ROOT

PACKAGE = ROOT / "webui"


def _module_name(path: Path) -> str:
    """``webui/seams/gunicorn.py`` -> ``webui.seams.gunicorn``; a package's ``__init__`` is the package."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(name: str) -> bool:
    """Whether ``name`` (``webui.api``, ``webui.seams``) is a module or package of webui."""
    path = ROOT.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _imports() -> dict[str, list[tuple[str, str]]]:
    """Each module of webui, its subpackages' included: the webui modules it imports (anywhere in it),
    with each name it takes."""
    found: dict[str, list[tuple[str, str]]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        found[module] = []
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "webui":
                for alias in node.names:
                    # "from webui import api" imports the module webui.api
                    if _is_module(f"{node.module}.{alias.name}"):
                        found[module].append((f"{node.module}.{alias.name}", ""))
                    else:
                        found[module].append((node.module, alias.name))
            elif isinstance(node, ast.Import):
                found[module] += [(alias.name, "") for alias in node.names if alias.name.split(".")[0] == "webui"]
    return found


def test_the_modules_import_each_other_without_a_cycle() -> None:
    imports = _imports()
    assert len(imports) >= 15 and {"webui.seams.gunicorn", "webui.seams.werkzeug"} <= set(imports)
    graph = {module: {target for target, _ in targets if target != module} for module, targets in imports.items()}
    try:
        order = list(TopologicalSorter(graph).static_order())
    except CycleError as error:
        raise AssertionError(f"an import cycle: {' -> '.join(error.args[1])}") from None
    assert order.index("webui.spec") < order.index("webui.api") < order.index("webui.openapi") < order.index("webui.app")


def test_no_module_imports_another_ones_private_names() -> None:
    private = [f"{module} imports {target}.{name}" for module, targets in _imports().items()
               for target, name in targets if name.startswith("_") and target != module]
    assert not private
