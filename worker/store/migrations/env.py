"""Alembic environment: the connection comes from the caller (see worker.store.migrate), the tables from
worker.store.models."""

from __future__ import annotations

from alembic import context

from worker.store.models import Base

connection = context.config.attributes.get("connection")

if connection is None:  # offline mode (``alembic upgrade --sql``): SQL for the URL's dialect
    url = context.config.get_main_option("sqlalchemy.url")
    context.configure(url=url, target_metadata=Base.metadata, literal_binds=True,
                      render_as_batch=str(url).startswith("sqlite"))
    with context.begin_transaction():
        context.run_migrations()
else:
    context.configure(connection=connection, target_metadata=Base.metadata,
                      render_as_batch=connection.dialect.name == "sqlite")
    with context.begin_transaction():
        context.run_migrations()
