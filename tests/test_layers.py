"""The floors of ARCHITECTURE.md, as import-linter checks them: each floor imports only the floors below it,
floors that share a level do not import each other, the engines import nothing of the project, and no
modules of a package of ``worker/`` or ``webui/`` import each other in a circle.

The contracts are in ``pyproject.toml`` (``[tool.importlinter]``); here they are run as a developer
runs them, ``lint-imports``, and every module of ``worker/`` must stand on one of their floors, so
that a new module is placed on purpose.
"""

from __future__ import annotations

import pkgutil
import subprocess
import sys
import tomllib
from pathlib import Path

import worker
from tests.support.paths import ROOT

CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]


def _contract(ident: str) -> dict[str, object]:
    return next(contract for contract in CONFIG["contracts"] if contract["id"] == ident)


def test_every_contract_is_kept() -> None:
    lint = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run([str(lint), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"Contracts: {len(CONFIG['contracts'])} kept, 0 broken." in done.stdout


def test_every_module_of_worker_has_a_floor() -> None:
    floors = _contract("floors")["layers"]
    assert isinstance(floors, list)
    placed = {name.strip() for floor in floors for name in floor.split("|")}
    modules = {f"worker.{module.name}" for module in pkgutil.iter_modules(worker.__path__)}
    assert modules - placed == set(), "modules of worker/ on no floor of [tool.importlinter] in pyproject.toml"
    assert placed - modules - {"webui"} == set(), "floors that name no module"


def test_no_contract_is_kept_by_ignoring_imports() -> None:
    """Ignored imports would keep a contract that the code breaks."""
    assert all("ignore_imports" not in contract for contract in CONFIG["contracts"])
