"""Fixtures shared by every test folder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: The project's owner keeps problem statements, judge data and reference solutions beside the repo.
SHARED = Path(os.environ.get("DEALER_SHARED", ROOT.parent / "shared"))
JUDGE_DATA = SHARED / "judge-data"
GAME_DIRS = {"10-20-30": "10-20-30", "accordion": "accordion", "mahjong": "mahjong"}


def judge_files(game: str) -> list[Path]:
    """The ``.in`` files of one game's judge data (each has a matching ``.out``)."""
    return sorted((JUDGE_DATA / GAME_DIRS[game]).glob("*.in"))


@pytest.fixture(scope="session")
def judge_data() -> Path:
    if not JUDGE_DATA.is_dir():
        pytest.fail(f"judge data not found at {JUDGE_DATA} (set DEALER_SHARED)")
    return JUDGE_DATA


@pytest.fixture
def settings(tmp_path: Path):
    """Embedded settings in a fresh data folder, schema migrated."""
    from worker.config import Settings
    from worker.migrate import upgrade

    settings = Settings.from_env({}, data_dir=tmp_path / "data", chunk_size=7)
    upgrade(settings.database_url)
    return settings


@pytest.fixture
def dispatcher(settings):
    from tests.support import InlineDispatcher

    return InlineDispatcher(settings)


@pytest.fixture
def service(settings, dispatcher):
    from worker.service import JobService

    return JobService(settings, dispatcher)


@pytest.fixture
def app(settings, dispatcher):
    from webui import create_app

    return create_app(settings, dispatcher, config={"TESTING": True})


@pytest.fixture
def client(app):
    return app.test_client()
