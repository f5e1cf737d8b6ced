"""Case rows in bulk: how a solved chunk goes into ``cases``, and how earlier results are found again.

This is the workers' hot path, written against the driver where the ORM's per-row work
would cost more than the database's.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import orjson
from sqlalchemy import BigInteger, Connection, String, any_, bindparam, func, select
from sqlalchemy.dialects.postgresql import ARRAY

from worker.store.models import CaseRow

#: The columns of a case row as the solve path builds it (without ``solved_at``, added here).
CASE_COLUMNS = ("job_id", "index", "game", "input", "input_hash", "outcome", "number", "detail", "line", "trace",
                "error", "cached", "solve_us", "worker", "solved_at")
_DETAIL = CASE_COLUMNS.index("detail")
_COLUMN_LIST = ", ".join(f'"{name}"' for name in CASE_COLUMNS)
_COPY_CASES = f"COPY cases ({_COLUMN_LIST}) FROM STDIN (FORMAT BINARY)"
_COPY_TYPES = ["int4", "int4", "varchar", "text", "int8", "varchar", "int4", "json", "text", "bytea", "text", "bool",
               "int4", "varchar", "timestamp"]
_INSERT_SQLITE = (f"INSERT INTO cases ({_COLUMN_LIST}) VALUES ({', '.join('?' * len(CASE_COLUMNS))}) "
                  'ON CONFLICT (job_id, "index") DO NOTHING')

#: A stored result: ``(outcome, number, detail, stored trace)``.
Known = tuple[str, int, list[Any], bytes | None]


def insert_cases(connection: Connection, rows: list[tuple[Any, ...]], now: datetime) -> None:
    """Insert a chunk's case rows (tuples in :data:`CASE_COLUMNS` order, without ``solved_at``).

    The chunk was claimed in this transaction, so no other delivery inserts them; the
    unique (job_id, index) key still refuses a duplicate if that ever failed. On
    PostgreSQL the rows go in with a binary COPY, some ten times faster than INSERTs
    (and a tenth cheaper for the server than a text one, which spells traces in hex).
    """
    if connection.dialect.name != "postgresql":
        # The driver's own executemany, with values made as SQLAlchemy's types would make them:
        # its per-value processing took longer than SQLite's work.
        moment = now.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
        connection.exec_driver_sql(_INSERT_SQLITE, [
            (*row[:_DETAIL], None if row[_DETAIL] is None else orjson.dumps(row[_DETAIL]).decode(),
             *row[_DETAIL + 1 :], moment) for row in rows])
        return
    naive = now.replace(tzinfo=None)  # the column holds UTC without a zone (see UTCDateTime)
    driver = connection.connection.driver_connection
    assert driver is not None
    with driver.cursor() as cursor, cursor.copy(_COPY_CASES) as copy:
        copy.set_types(_COPY_TYPES)
        write = copy.write_row
        for row in rows:
            write((*row, naive))


def known_results(connection: Connection, game: str, hashes: list[int], texts: list[str],
                  need_traces: bool) -> dict[str, Known]:
    """Results already stored for these inputs in any job, by canonical input."""
    wanted = set(texts)
    found: dict[str, Known] = {}
    postgres = connection.dialect.name == "postgresql"
    unique = sorted(set(hashes))
    query = _KNOWN_PG if postgres else _KNOWN
    for text, outcome, number, detail, trace in connection.execute(
            query, {"p_game": game, "p_hashes": unique if postgres else orjson.dumps(unique).decode()}):
        if outcome is not None and text in wanted and text not in found and (trace is not None or not need_traces):
            found[text] = (outcome, number, detail, trace)
    return found


_KNOWN_COLUMNS = select(CaseRow.input, CaseRow.outcome, CaseRow.number, CaseRow.detail, CaseRow.trace)
# (Unsolved cases are skipped in Python: a condition on outcome can lead SQLite's planner
# to the (game, outcome, number) index, which reads every case of the game.)
_KNOWN_WHERE = (CaseRow.game == bindparam("p_game"),)
#: On PostgreSQL one array parameter: planned as fast as one value, where a list of
#: hundreds of parameters costs more to plan than to run.
_KNOWN_PG = _KNOWN_COLUMNS.where(
    *_KNOWN_WHERE, CaseRow.input_hash == any_(bindparam("p_hashes", type_=ARRAY(BigInteger))))
#: On SQLite a JSON array in one parameter: the same statement every time, where hundreds of
#: parameters would be rendered into a new one for each chunk.
_HASHES = func.json_each(bindparam("p_hashes", type_=String)).table_valued("value")
_KNOWN = _KNOWN_COLUMNS.where(*_KNOWN_WHERE, CaseRow.input_hash.in_(select(_HASHES.c.value)))
