"""Storage: the tables, the database connection built from the settings, how a chunk's cases are kept,
uploads in the database, and the schema's migrations. The store knows nothing of the games or of
the jobs' rules: it names no game and no outcome, and imports no floor above it."""
