"""Settings, read from the environment once per process: the one place that reads it (besides the
command line's own options).

Every setting is a field of :class:`Settings` with a ``DEALER_`` variable (the field's name in
capitals: ``pure_python`` is ``DEALER_PURE_PYTHON``). Without any, Dealer runs embedded: a
SQLite file and a broker folder under the data folder, no server needed. The data folder is the same
wherever a command runs (:func:`default_data_dir`), so that ``dealer keys add`` reaches the database
``dealer serve`` uses.

>>> s = Settings.from_env({"DEALER_DATA_DIR": "/tmp/d"})
>>> s.database_url, s.broker_url
('sqlite:////tmp/d/dealer.db', 'filesystem://')
>>> s.embedded, Settings.from_env({"DEALER_PURE_PYTHON": "1"}).pure_python
(True, True)
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import platformdirs

#: The checkout the code runs from (an editable install: ``make install``), or the folder that holds the
#: installed packages; before the data folder became the user's, ``make run`` kept it under ``data/`` here.
PROJECT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class PerRole:
    """A number per role of an owner: ``30`` for everyone, ``user=30,admin=365`` per role, ``user=30,365``
    per role with the rest at 365; ``None`` where none is given (no limit). Sizes may end in a unit.

    >>> PerRole.parse("DEALER_KEEP_DAYS", "user=30,admin=365").of("user"), PerRole.parse("X", "30").of(None)
    (30.0, 30.0)
    >>> days = PerRole.parse("X", "user=30")
    >>> days.of("admin"), days.named("user"), days.named("admin")
    (None, True, False)
    >>> PerRole.parse("X", "user=2GiB,admin=1.5k").of("user"), PerRole.parse("X", "user=2GiB,admin=1.5k").of("admin")
    (2147483648.0, 1536.0)
    """

    roles: tuple[tuple[str, float], ...] = ()
    rest: float | None = None

    @classmethod
    def parse(cls, name: str, raw: str) -> PerRole:
        roles: dict[str, float] = {}
        rest = None
        for item in filter(None, (part.strip() for part in raw.split(","))):
            role, _, value = item.rpartition("=")
            number = _number(name, value.strip())
            if role:
                roles[role.strip()] = number
            else:
                rest = number
        return cls(tuple(sorted(roles.items())), rest)

    def of(self, role: str | None) -> float | None:
        """The number for an owner of ``role`` (``None``: no owner, open mode)."""
        return dict(self.roles).get(role, self.rest) if role is not None else self.rest

    def named(self, role: str) -> bool:
        return role in dict(self.roles)

    def __bool__(self) -> bool:
        return bool(self.roles) or self.rest is not None


_UNITS = {"": 1, "k": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mib": 1 << 20, "g": 1 << 30, "gib": 1 << 30,
          "t": 1 << 40, "tib": 1 << 40}


def _number(name: str, value: str) -> float:
    digits = value.rstrip("kKmMgGtTiIbB")
    unit = value[len(digits):].lower()
    try:
        if unit not in _UNITS or float(digits) < 0:
            raise ValueError
        return float(digits) * _UNITS[unit]
    except ValueError:
        raise ValueError(f"{name}={value!r}: expected a number (sizes may end in K, M, G or T), or "
                         "ROLE=NUMBER items separated by commas, e.g. user=30,admin=365") from None


@dataclass(frozen=True)
class Settings:
    #: The embedded mode's SQLite database and broker folder, and the pages' session secret when
    #: ``secret_key`` is not given (uploads live in the database). Default: the user's data folder
    #: (``~/.local/share/dealer`` on Linux), whatever the working directory; a checkout whose ``data/``
    #: holds a ``dealer.db`` from an earlier version keeps using that one.
    data_dir: Path
    #: The database (``postgresql+psycopg://…`` in production); default: SQLite in the data folder.
    database_url: str
    #: The Celery broker (``redis://…`` in production); default: a folder of files, no server.
    broker_url: str
    #: Cases per solve task; 0 sizes them from the upload: about forty chunks a job, each of
    #: 1,000 to 10,000 cases (``worker.jobs.sizing``).
    chunk_size: int = 0
    #: Bytes one upload may hold, a whole number; a larger one is refused with ``413``.
    max_upload_bytes: int = 4 << 30
    #: A file solved before (an earlier job of the same file, game and traces succeeded) is copied, not solved.
    result_cache: bool = True
    #: Keep each case's trace (the moves the replay page plays); off, only results are stored.
    store_traces: bool = True
    #: A worker writes its heartbeat this often...
    heartbeat_seconds: float = 2.0
    #: ...and one not heard of for this long is gone: the chunks and splits it held are handed out again.
    worker_timeout: float = 10.0
    #: A file a worker touches at each heartbeat that reached the database, for a container's health
    #: check to read its age (docker-compose.yml); empty: none.
    heartbeat_file: str = ""
    #: A running chunk whose (living) worker has not finished it in this long is handed out again.
    lease_seconds: int = 300
    #: The chunks of a job that made no progress for this long, with an empty queue, are sent again.
    stall_seconds: int = 10
    #: How often each worker looks for work to hand out again (the recovery sweep).
    sweep_seconds: float = 4.0
    #: A solve task goes on taking its job's next pending chunks from the database for this long after the
    #: one it was sent, sparing each the broker's round trip; 0: one chunk a task.
    solve_run_seconds: float = 1.0
    #: A job is split while its file arrives; its split waits for the file at most this long in all, then
    #: lets its worker process go until the file has come (a slow client must not hold a worker long).
    split_patience_seconds: float = 5.0
    #: Time budgets: a case over its budget fails with a reason; a chunk over its budget fails
    #: its remaining cases. Either way the worker moves on (0 turns a budget off).
    case_seconds: float = 60.0
    chunk_seconds: float = 900.0
    #: PostgreSQL ends a session left idle inside a transaction this long, or whose answers have gone
    #: unacknowledged this long, releasing its locks: a worker cut off from the network mid-transaction
    #: must not hold up the others.
    db_idle_timeout: float = 10.0
    #: Solve on the pure-Python engines even where the native core is built (the process's builder
    #: tells the engines: ``worker.engines.use_native_core``).
    pure_python: bool = False

    # --- limits (0 turns one off) ---
    #: Cases (decks or hands) one job may hold; the split fails a job with more.
    max_cases_per_job: int = 10_000_000
    #: Bytes one line of an upload may hold; the split fails a job with a longer line.
    max_line_bytes: int = 1 << 20
    #: Jobs one client (its API key, else its address) may have queued, splitting or solving at once.
    max_active_jobs_per_client: int = 20
    #: Jobs one client may create (upload or re-run) in any minute.
    max_jobs_per_minute_per_client: int = 30
    #: Seconds a generated file (``POST /api/generate``) may take to make within its request; one that
    #: would take longer is refused (``worker.jobs.generated``).
    generate_seconds: float = 30.0

    # --- quotas per owner (with keys; see worker/jobs/quotas.py) ---
    #: Bytes of files one owner may keep (its jobs' files, its checks' outputs, its uploads arriving and
    #: those refused in the last hour), per role as ``keep_days`` (``user=10G``); an admin has no
    #: limit unless ``admin`` is named; empty: no limit.
    quota_bytes: PerRole = field(default_factory=lambda: PerRole())
    #: Jobs one owner may keep (not deleted), per role in the same way.
    quota_jobs: PerRole = field(default_factory=lambda: PerRole())

    # --- retention and deletes (see worker/jobs/retention.py, worker/store/purge.py) ---
    #: The upload of a job that failed or was cancelled is removed this many hours after the job ended
    #: (a re-run then reads the job's cases, when it was split); 0 keeps it.
    keep_uploads_hours: float = 24.0
    #: Finished jobs are deleted this many days after they ended: a number for every job, or one per
    #: owner's role, ``user=30,admin=365`` (a role not named, and a job without an owner, kept unless
    #: a bare number is given too: ``user=30,365``); empty keeps every job.
    keep_days: PerRole = field(default_factory=lambda: PerRole())
    #: A delete removes rows in transactions of at most this many rows and this many bytes of blobs
    #: (one row at least), so that no write waits long behind one.
    delete_batch_rows: int = 64
    delete_batch_bytes: int = 4 << 20
    #: On PostgreSQL the purge vacuums the tables it removed rows from each time it has removed this many
    #: bytes of blobs, and when it is done (``worker/store/purge.py``), so that the next rows stored take
    #: their space: the database holds what its live jobs need plus about this much. 0: only when done.
    vacuum_bytes: int = 64 << 20

    # --- access (see webui/auth.py) ---
    #: The address ``dealer web`` and ``dealer serve`` listen on (their ``--host`` overrides it): this
    #: machine alone unless told otherwise (``0.0.0.0``: every network the host is on).
    web_address: str = "127.0.0.1"
    #: Say that a service with no key is meant to be open to whoever reaches it: without it (or a key),
    #: ``dealer web`` and ``dealer serve`` refuse to listen on any address but this machine's own.
    open: bool = False
    #: Comma-separated API keys, each ``token``, ``name:token`` or ``name:token:user``, seeded into the
    #: keys table at start; empty: only the keys ``dealer keys add`` made. Until a first key is made the
    #: service is open; once one is, it never reopens by itself (revoking every key leaves it closed).
    api_keys: str = field(default="", repr=False)
    #: With keys: whether everyone (a user, and a request with no key) reads every job, check and
    #: figure; off: each user reads only its own, and a request with no key nothing. Writes always need
    #: a key, and touch only the writer's own (an admin's: all).
    public_reads: bool = False
    #: Signs the pages' session cookies; empty: generated once and kept in the data folder.
    secret_key: str = field(default="", repr=False)
    #: Send the session cookie over HTTPS only (set when the service is served over HTTPS).
    secure_cookies: bool = False
    #: How long a login on the pages lasts (logging out ends it at once, everywhere).
    session_hours: float = 12.0
    #: Wrong keys (bearer or login) one client address may send before it must wait;
    #: each further one doubles the wait, up to ``auth_block_max_seconds`` (0 turns throttling off).
    auth_failures_allowed: int = 5
    auth_block_max_seconds: float = 300.0
    #: Live event streams (``/events/…``) one client (its address and its key or login) may hold open on a
    #: web process at once; beyond them its pages poll the JSON API. A browser holds one or two a tab
    #: (0: no share, the process's ceiling alone).
    live_streams_per_client: int = 100
    #: Reverse proxies in front of the web app whose X-Forwarded-For/-Proto/-Host are trusted.
    proxy_hops: int = 0

    # --- callbacks when work ends (notify_url; see worker/checks/notify.py) ---
    #: Call ``notify_url`` addresses on this machine and private networks too (loopback, private,
    #: link-local, reserved): off, a URL whose host resolves to one is refused when given, and an
    #: address that becomes one is not connected to.
    notify_private: bool = False
    #: The service's address as its users reach it (``https://dealer.example.org/``), which the pages'
    #: links in a callback's body start with; empty: the address the request that set the callback came to.
    public_url: str = ""
    #: Seconds a callback's request may take (connecting, sending, the answer's status) before it counts
    #: as failed.
    notify_timeout_seconds: float = 10.0
    #: A failed callback is sent again after this many seconds, each further wait twice the last, while
    #: the waits add up to at most ``notify_retry_seconds``; then it is given up (its last outcome kept).
    notify_backoff_seconds: float = 5.0
    notify_retry_seconds: float = 300.0

    @property
    def embedded(self) -> bool:
        return self.broker_url.startswith("filesystem://")

    @property
    def broker_dir(self) -> Path:
        return self.data_dir / "broker"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        env = os.environ if env is None else env
        given = overrides.pop("data_dir", None) or env.get("DEALER_DATA_DIR")
        data_dir = Path(given).resolve() if given else default_data_dir()
        values: dict[str, Any] = {
            "data_dir": data_dir,
            "database_url": env.get("DEALER_DATABASE_URL") or f"sqlite:///{data_dir / 'dealer.db'}",
            "broker_url": env.get("DEALER_BROKER_URL") or "filesystem://",
        }
        for item in fields(cls):
            name = f"DEALER_{item.name.upper()}"
            if item.name not in values and name in env:
                values[item.name] = _convert(name, env[name], item.type)
        return replace(cls(**values), **overrides)


def default_data_dir(project: Path | None = None) -> Path:
    """The data folder when neither ``DEALER_DATA_DIR`` nor ``--data-dir`` names one: never the working
    directory, so that every command finds the database the service uses. The user's data folder
    (``platformdirs``: ``$XDG_DATA_HOME/dealer``, ``~/Library/Application Support/dealer``, …), unless the
    checkout's ``data/`` already holds a database (``make run`` made it there before): that one is kept.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     checkout = Path(folder)
    ...     _ = (checkout / "pyproject.toml").write_text("")
    ...     fresh = default_data_dir(checkout)
    ...     (checkout / "data").mkdir()
    ...     _ = (checkout / "data" / "dealer.db").write_bytes(b"")
    ...     kept = default_data_dir(checkout)
    >>> fresh.name, fresh == default_data_dir(Path("/nowhere")), kept == checkout / "data"
    ('dealer', True, True)
    """
    project = PROJECT if project is None else project
    earlier = project / "data"
    if (project / "pyproject.toml").is_file() and (earlier / "dealer.db").is_file():
        return earlier
    return Path(platformdirs.user_data_dir("dealer", appauthor=False)).resolve()


def _convert(name: str, raw: str, kind: Any) -> Any:
    if kind in ("PerRole", PerRole):
        return PerRole.parse(name, raw)
    if kind in ("bool", bool):
        if raw.lower() in ("1", "true", "yes", "on"):
            return True
        if raw.lower() in ("0", "false", "no", "off"):
            return False
        raise ValueError(f"{name}={raw!r}: expected 1/0, true/false, yes/no or on/off")
    if kind in ("float", float):
        try:
            return float(raw)
        except ValueError:
            raise ValueError(f"{name}={raw!r}: expected a number") from None
    if kind in ("int", int):
        try:
            return int(raw)
        except ValueError:
            raise ValueError(f"{name}={raw!r}: expected a whole number") from None
    return raw
