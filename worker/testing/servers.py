"""The servers a live service runs against: the machine's PostgreSQL and Redis (a fresh database on
each for one run), private ones a fault scenario may stop and restart at will, and a second
"host" in a network namespace.

Whatever is missing raises :class:`ServiceMissing`; the test suite turns that into a skip
(or, where CI requires the services, a failure), a benchmark into its message.
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from worker.testing.waiting import until

PG_HOST, PG_PORT = "127.0.0.1", 5432
REDIS_HOST, REDIS_PORT = "127.0.0.1", 6379
PG_BIN = next(iter(sorted(Path("/usr/lib/postgresql").glob("*/bin"))), None)


class ServiceMissing(RuntimeError):
    """A server (or a tool) a harness needs is not there; the message says which."""


def _need(condition: bool, message: str) -> None:
    if not condition:
        raise ServiceMissing(message)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def listening(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


def need_listening(name: str, host: str, port: int) -> None:
    _need(listening(host, port), f"{name} is not running on {host}:{port}")


def create_postgres_database() -> str:
    """A fresh database on the machine's PostgreSQL; returns its URL (drop it with :func:`drop_postgres_database`)."""
    need_listening("PostgreSQL", PG_HOST, PG_PORT)
    import psycopg

    name = f"dealer_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(f"host={PG_HOST} port={PG_PORT} user=postgres dbname=postgres", autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return f"postgresql+psycopg://postgres@{PG_HOST}:{PG_PORT}/{name}"


#: Drops left to run beside the caller (see :func:`drop_postgres_database`), one at a time.
_DROPS = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dealer-drop-database")


def drop_postgres_database(url: str, wait: bool = True) -> None:
    """Drop a database :func:`create_postgres_database` made. With ``wait=False`` a thread of its own
    drops it while the caller goes on: a drop of a database that a service used took 3-9 s on a busy
    server (the thread is joined before the process exits)."""
    if not wait:
        _DROPS.submit(drop_postgres_database, url).add_done_callback(_said_if_failed)
        return
    import psycopg

    name = url.rsplit("/", 1)[1]
    with psycopg.connect(f"host={PG_HOST} port={PG_PORT} user=postgres dbname=postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _said_if_failed(drop: Future[None]) -> None:
    if drop.exception() is not None:
        print(f"dealer: a test database was not dropped: {drop.exception()}", file=sys.stderr)


def redis_url(db: int = 0) -> str:
    need_listening("Redis", REDIS_HOST, REDIS_PORT)
    return f"redis://{REDIS_HOST}:{REDIS_PORT}/{db}"


#: The key that marks a Redis database as taken by a live service of some test run: ``host:pid``.
CLAIM_KEY = "dealer-test:claimed-by"


def fresh_redis_url() -> str:
    """A Redis database (1-15) no other live process of any test run on this machine holds, emptied and
    claimed for this process: several runs at once (two checkouts, a benchmark beside the suite) must
    not empty each other's queues. A claim lapses when its process is gone (or after a day)."""
    import redis

    me = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
    start = (os.getpid() + int(time.time() * 1000)) % 15
    for step in range(15):
        number = 1 + (start + step) % 15
        url = redis_url(number)
        client = redis.Redis(host=REDIS_HOST, port=REDIS_PORT, db=number)
        holder = client.get(CLAIM_KEY)
        if holder is not None and _alive(holder.decode()):
            continue
        if not client.set(CLAIM_KEY, me, ex=86400, nx=holder is None, xx=holder is not None):
            continue  # another run took it meanwhile
        for key in client.scan_iter(count=1000):
            if key != CLAIM_KEY.encode():
                client.delete(key)
        return url
    raise ServiceMissing("every Redis database 1-15 is held by another live test process")


def release_redis(url: str) -> None:
    """Give back a database :func:`fresh_redis_url` claimed (its claim would last as long as its process)."""
    import redis

    try:
        redis.Redis.from_url(url).delete(CLAIM_KEY)
    except redis.RedisError:
        pass  # the server is gone: so is the claim


def _alive(holder: str) -> bool:
    """Whether the process of a claim ``host:pid:tag`` still runs (one on another host is taken to)."""
    host, pid = holder.split(":")[:2] if holder.count(":") >= 2 else ("", "")
    if host != socket.gethostname() or not pid.isdigit():
        return True
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class PrivateRedis:
    def __init__(self, also_on: tuple[str, ...] = ()) -> None:
        _need(shutil.which("redis-server") is not None, "redis-server is not installed")
        self.port = free_port()
        self.addresses = ("127.0.0.1", *also_on)
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", *self.addresses, "--protected-mode", "no",
             "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        import redis

        def answers() -> bool:
            try:
                return bool(redis.Redis(port=self.port).ping())
            except redis.ConnectionError:
                return False

        until(answers, bool, "the private Redis to start", timeout=10, every=0.05)

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.kill()  # like a crash: the queue's contents are lost
            self.process.wait()

    def restart(self) -> None:
        self.stop()
        self.start()


def _as_postgres(*command: str) -> None:
    prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    subprocess.run([*prefix, *command], check=True, capture_output=True)


def _owned_by_postgres(folder: str) -> Path:
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres", "postgres")
    return Path(folder)


@functools.cache
def _fresh_cluster() -> Path:
    """A cluster just made by initdb, made once a process and copied (owner and modes kept) for each
    private server: an initdb cost a fault test seconds on a busy machine, a copy a fraction of one."""
    assert PG_BIN is not None
    folder = _owned_by_postgres(tempfile.mkdtemp(prefix="dealer-pg-template-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    _as_postgres(str(PG_BIN / "initdb"), "-D", str(folder / "data"), "-A", "trust", "-U", "postgres", "--no-sync")
    return folder


class PrivatePostgres:
    """A throw-away cluster owned by the postgres user (initdb refuses to run as root)."""

    def __init__(self, also_on: tuple[str, ...] = (), durable: bool = False, settings: tuple[str, ...] = ()) -> None:
        """``durable``: with ``fsync`` on, as a production server (a test's is off: nothing of it is kept);
        ``settings``: more ``name=value`` server settings."""
        _need(PG_BIN is not None, "PostgreSQL server binaries are not installed")
        self.addresses = ("127.0.0.1", *also_on)
        self.settings = ([] if durable else ["fsync=off"]) + list(settings)
        _need(os.geteuid() != 0 or shutil.which("runuser") is not None, "runuser is needed to run as postgres")
        self.port = free_port()
        self.dir = _owned_by_postgres(tempfile.mkdtemp(prefix="dealer-pg-"))
        subprocess.run(["cp", "-a", str(_fresh_cluster() / "data"), str(self.dir / "data")], check=True)
        with open(self.dir / "data" / "pg_hba.conf", "a") as hba:
            for address in also_on:
                hba.write(f"host all all {address}/24 trust\n")

    @property
    def url(self) -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres"

    def start(self) -> None:
        _as_postgres(str(PG_BIN / "pg_ctl"), "-D", str(self.dir / "data"), "-w", "-l", str(self.dir / "log"), "-o",
                     f"-p {self.port} -k {self.dir} -c listen_addresses={','.join(self.addresses)} "
                     + " ".join(f"-c {setting}" for setting in self.settings),
                     "start")

    def stop(self) -> None:
        _as_postgres(str(PG_BIN / "pg_ctl"), "-D", str(self.dir / "data"), "-w", "-m", "immediate", "stop")

    def destroy(self) -> None:
        try:
            self.stop()
        except subprocess.CalledProcessError:
            pass
        shutil.rmtree(self.dir, ignore_errors=True)


class NetworkNamespace:
    """A second "host": a network namespace joined to this one by a veth pair (iproute2).

    The host side is 10.213.N.1, the namespace side 10.213.N.2; ``cut()`` and ``mend()``
    take the link down and up, as a pulled cable would.
    """

    def __init__(self) -> None:
        suffix = uuid.uuid4().hex[:6]
        self.name = f"dealer-{suffix}"
        self.host_if, self.ns_if = f"dh{suffix}", f"dn{suffix}"
        net = 1 + int(suffix, 16) % 250
        self.host_ip, self.ns_ip = f"10.213.{net}.1", f"10.213.{net}.2"
        steps = [
            ["ip", "netns", "add", self.name],
            ["ip", "link", "add", self.host_if, "type", "veth", "peer", "name", self.ns_if],
            ["ip", "link", "set", self.ns_if, "netns", self.name],
            ["ip", "addr", "add", f"{self.host_ip}/30", "dev", self.host_if],
            ["ip", "link", "set", self.host_if, "up"],
            ["ip", "netns", "exec", self.name, "ip", "addr", "add", f"{self.ns_ip}/30", "dev", self.ns_if],
            ["ip", "netns", "exec", self.name, "ip", "link", "set", self.ns_if, "up"],
            ["ip", "netns", "exec", self.name, "ip", "link", "set", "lo", "up"],
        ]
        try:
            for step in steps:
                subprocess.run(step, check=True, capture_output=True)
        except (OSError, subprocess.CalledProcessError):
            self.remove()
            raise

    @staticmethod
    def available() -> str | None:
        """None when namespaces can be made here, else why not."""
        if os.geteuid() != 0:
            return "network namespaces need root"
        probe = f"dealer-probe-{os.getpid()}"
        try:
            subprocess.run(["ip", "netns", "add", probe], check=True, capture_output=True)
        except FileNotFoundError:
            return "iproute2's ip is not installed"
        except subprocess.CalledProcessError as error:
            return f"ip netns add is not allowed here: {error.stderr.decode().strip()}"
        subprocess.run(["ip", "netns", "delete", probe], capture_output=True)
        return None

    def run(self, command: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
        out = open(log, "ab")
        return subprocess.Popen(["ip", "netns", "exec", self.name, *command], env=env, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)

    def cut(self) -> None:
        subprocess.run(["ip", "link", "set", self.host_if, "down"], check=True, capture_output=True)

    def mend(self) -> None:
        subprocess.run(["ip", "link", "set", self.host_if, "up"], check=True, capture_output=True)

    def remove(self) -> None:
        subprocess.run(["ip", "link", "delete", self.host_if], capture_output=True)
        subprocess.run(["ip", "netns", "delete", self.name], capture_output=True)
