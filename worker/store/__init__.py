"""Storage: the tables, the database connection built from the settings, how inputs and traces are
kept, uploads on disk, and the schema's migrations."""
