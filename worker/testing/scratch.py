"""A throwaway embedded database for doctests and quick experiments."""

from __future__ import annotations

import tempfile
from pathlib import Path

from worker.config import Settings
from worker.store.database import Database
from worker.store.migrate import upgrade


def scratch_database() -> Database:
    """A migrated SQLite database in a new temporary folder (left for the system to clean)."""
    db = Database(Settings.from_env({}, data_dir=Path(tempfile.mkdtemp(prefix="dealer-scratch-"))))
    upgrade(db)
    return db
