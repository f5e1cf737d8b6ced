"""Alembic environment: the URL comes from the caller (see worker.migrate), the tables from worker.models."""

from __future__ import annotations

from alembic import context

from worker.db import get_engine
from worker.models import Base

url = context.config.get_main_option("sqlalchemy.url")
assert url, "worker.migrate sets sqlalchemy.url"

if context.is_offline_mode():
    context.configure(url=url, target_metadata=Base.metadata, literal_binds=True,
                      render_as_batch=url.startswith("sqlite"))
    with context.begin_transaction():
        context.run_migrations()
else:
    with get_engine(url).connect() as connection:
        context.configure(connection=connection, target_metadata=Base.metadata,
                          render_as_batch=connection.dialect.name == "sqlite")
        with context.begin_transaction():
            context.run_migrations()
