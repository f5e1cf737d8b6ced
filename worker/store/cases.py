"""Case index rows in bulk, and earlier results found again by their input (the result cache).

This is the workers' hot path, written against the driver where the ORM's per-row work
would cost more than the database's.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import orjson
from sqlalchemy import BigInteger, Connection, String, any_, bindparam, func, select
from sqlalchemy.dialects.postgresql import ARRAY

from worker.store.chunks import chunks_holding, read_chunk
from worker.store.models import CaseRow

#: The columns of a case row, in the order :func:`insert_cases` takes them.
CASE_COLUMNS = ("job_id", "index", "outcome", "number", "input_hash", "solve_us", "cached")
_COLUMN_LIST = ", ".join(f'"{name}"' for name in CASE_COLUMNS)
_COPY_CASES = f"COPY cases ({_COLUMN_LIST}) FROM STDIN (FORMAT BINARY)"
_COPY_TYPES = ["int4", "int4", "int2", "int4", "int8", "int4", "bool"]
_INSERT_SQLITE = (f"INSERT INTO cases ({_COLUMN_LIST}) VALUES ({', '.join('?' * len(CASE_COLUMNS))}) "
                  'ON CONFLICT (job_id, "index") DO NOTHING')

#: A result found again: ``(outcome, number, detail, packed trace or None)``.
Known = tuple[str, int, list[Any] | None, bytes | None]


def insert_cases(connection: Connection, rows: Sequence[tuple[Any, ...]]) -> None:
    """Insert a chunk's case rows (tuples in :data:`CASE_COLUMNS` order).

    The chunk was claimed in this transaction, so no other delivery inserts them; the
    (job_id, index) key still refuses a duplicate if that ever failed. On PostgreSQL the
    rows go in with a binary COPY, some ten times faster than INSERTs.
    """
    if connection.dialect.name != "postgresql":
        connection.exec_driver_sql(_INSERT_SQLITE, list(rows))
        return
    driver = connection.connection.driver_connection
    assert driver is not None
    with driver.cursor() as cursor, cursor.copy(_COPY_CASES) as copy:
        copy.set_types(_COPY_TYPES)
        write = copy.write_row
        for row in rows:
            write(row)


def known_results(connection: Connection, hashes: Sequence[int], texts: Sequence[str],
                  need_traces: bool) -> dict[str, Known]:
    """Results already stored for these inputs in any job, by canonical input.

    The hash finds candidates (it covers the game); the input itself, read from the
    candidate's chunk, is compared before a result is used.
    """
    postgres = connection.dialect.name == "postgresql"
    unique = sorted(set(hashes))
    found_rows = connection.execute(_KNOWN_PG if postgres else _KNOWN, {
        "p_hashes": unique if postgres else orjson.dumps(unique).decode()}).all()
    if not found_rows:
        return {}
    wanted = set(texts)
    by_job: dict[int, list[int]] = defaultdict(list)
    for job_id, index in found_rows:
        by_job[job_id].append(index)
    by_chunk: dict[int, list[int]] = defaultdict(list)
    for job_id, indexes in by_job.items():
        for index, chunk in chunks_holding(connection, job_id, indexes).items():
            by_chunk[chunk.id].append(index - chunk.first_index)
    found: dict[str, Known] = {}
    for chunk_id, places in by_chunk.items():
        data = read_chunk(connection, chunk_id)
        for k in places:
            text, result = data.inputs[k], data.result(k)
            trace = data.trace(k)
            if (text in wanted and text not in found and result is not None and result.outcome is not None
                    and result.number is not None
                    and (trace is not None or not need_traces)):
                found[text] = (result.outcome, result.number, result.detail, trace)
    return found


_KNOWN_COLUMNS = select(CaseRow.job_id, CaseRow.index).where(CaseRow.outcome.is_not(None))
#: On PostgreSQL one array parameter: planned as fast as one value, where a list of
#: hundreds of parameters costs more to plan than to run.
_KNOWN_PG = _KNOWN_COLUMNS.where(CaseRow.input_hash == any_(bindparam("p_hashes", type_=ARRAY(BigInteger))))
#: On SQLite a JSON array in one parameter: the same statement every time, where hundreds of
#: parameters would be rendered into a new one for each chunk.
_HASHES = func.json_each(bindparam("p_hashes", type_=String)).table_valued("value")
_KNOWN = _KNOWN_COLUMNS.where(CaseRow.input_hash.in_(select(_HASHES.c.value)))
