"""The guide's MkDocs hooks (``docs/hooks/``), loaded as MkDocs loads them: by path, not as a package."""

from __future__ import annotations

import importlib.util
from types import ModuleType

from tests.support.paths import ROOT


def hook(name: str) -> ModuleType:
    path = ROOT / "docs" / "hooks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"dealer_docs_hook_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
