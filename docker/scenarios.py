"""docker-compose.yml end to end, as an operator runs it: up, used, broken, scaled, upgraded.

Run by ``docker/test-compose`` (``make test-compose``), which prepares Docker and the base images
and removes everything afterwards. Every scenario is logged and asserted on its own; a failed one
prints the stack's state and the last lines of its logs, and the next scenario goes on.

Only Dealer's outside interfaces are used, so that refactors inside do not break this test: the
``dealer`` commands (``solve`` and ``submit`` on the host, ``db upgrade`` in ``migrate``, ``keys add`` in
``web``), the
environment variables, the HTTP API (``POST /api/jobs``, ``GET /api/jobs`` and ``/api/jobs/<id>``,
``/output``, ``/rerun``, ``/api/overview``, ``/healthz``) and, in one place (``stored``), SQL
queries through ``psql``.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import socket
import subprocess
import sys
import tarfile
import time
import traceback
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
COMPOSE_FILE = ROOT / "docker-compose.yml"
JUDGE = ROOT / "tests" / "data" / "judge"
#: The host's ``dealer``, beside the Python that runs this (the project's .venv).
DEALER = Path(sys.executable).parent / "dealer"
WORK = Path(os.environ.get("DEALER_COMPOSE_WORK", "/tmp/dealer-compose"))
PROJECT, UPGRADE_PROJECT = os.environ.get("DEALER_COMPOSE_PROJECTS", "dealer-compose-test dealer-compose-upgrade").split()
CURRENT_IMAGE, PREVIOUS_IMAGE = os.environ.get(
    "DEALER_COMPOSE_IMAGES", "dealer-compose-test:current dealer-compose-test:previous").split()
#: The release the upgrade starts from, run with its own compose file: the last before the web was
#: closed unless opened and private unless shared (its reads were public by default).
UPGRADE_FROM = os.environ.get("DEALER_UPGRADE_FROM", "8373e44")
#: Decks in each job a fault is made during (each of its own seed: no case comes from the result cache).
BIG_JOB_DECKS = int(os.environ.get("DEALER_COMPOSE_DECKS", "300000"))
FINAL = ("succeeded", "failed", "cancelled")


def log(message: str) -> None:
    print(f"compose: {message}", flush=True)


class Failed(AssertionError):
    """A scenario's assertion, with what was expected and what was found."""


def check(condition: bool, message: str) -> None:
    if not condition:
        raise Failed(message)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def run(command: list[str], *, env: dict[str, str] | None = None, input: bytes | None = None,
        timeout: float = 900) -> bytes:
    """Run a command; its standard output, or Failed with the end of what it printed."""
    done = subprocess.run(command, check=False, env=env, input=input, capture_output=True, timeout=timeout)
    if done.returncode != 0:
        tail = (done.stdout + done.stderr).decode(errors="replace").strip().splitlines()[-25:]
        raise Failed(f"`{' '.join(command[:6])}` exited {done.returncode}:\n    " + "\n    ".join(tail))
    return done.stdout


# --- the stack -------------------------------------------------------------------------------


@dataclass
class Stack:
    """One Compose project of docker-compose.yml, on host ports of its own."""

    project: str
    image: str
    workers: int = 2
    monitoring: bool = False
    env_file: Path | None = None
    #: Says the service is meant to be open (DEALER_OPEN=1): with no key made, the web refuses to start.
    open: bool = True
    compose_file: Path = COMPOSE_FILE
    web_port: int = field(default_factory=free_port)
    flower_port: int = field(default_factory=free_port)
    project_dir: Path = ROOT
    #: Every job a scenario finished, with its output: what must survive down/up.
    outputs: dict[int, bytes] = field(default_factory=dict)

    def env(self) -> dict[str, str]:
        env = {**os.environ, "DEALER_IMAGE": self.image, "DEALER_WEB_PORT": str(self.web_port),
               "DEALER_FLOWER_PORT": str(self.flower_port)}
        env["DEALER_ENV_FILE"] = str(self.env_file or WORK / "no-such.env")
        if self.open:
            env["DEALER_OPEN"] = "1"
        else:
            env.pop("DEALER_OPEN", None)
        return env

    def compose(self, *args: str, timeout: float = 900) -> bytes:
        profiles = ["--profile", "monitoring"] if self.monitoring else []
        return run(["docker", "compose", "-p", self.project, "-f", str(self.compose_file), "--project-directory",
                    str(self.project_dir), *profiles, *args], env=self.env(), timeout=timeout)

    def up(self, *args: str) -> float:
        """``up -d --wait`` with the stack's workers, until the web answers through the proxy; the seconds it
        took. ``--wait`` alone may go by a health the proxy had before the web was made again (its check
        runs every few seconds), while it still asks the web's old address."""
        start = time.monotonic()
        self.compose("up", "-d", "--wait", "--scale", f"worker={self.workers}", *args)
        deadline = start + 120
        while not self._answers():
            if time.monotonic() > deadline:
                raise Failed("the web does not answer through the proxy two minutes after up")
            time.sleep(0.2)
        return time.monotonic() - start

    def _answers(self) -> bool:
        try:
            return self.api.request("GET", "/api/openapi.json")[0] == 200
        except OSError:  # the published port not open yet
            return False

    def containers(self, service: str) -> list[str]:
        return self.compose("ps", "-q", service).decode().split()

    def states(self) -> dict[str, tuple[str, str, int]]:
        """Each container's (service, state, exit code), from ``docker inspect``, by name."""
        ids = self.compose("ps", "-aq").decode().split()
        found: dict[str, tuple[str, str, int]] = {}
        for item in json.loads(run(["docker", "inspect", *ids])) if ids else []:
            state = item["State"]
            # A stopped container keeps the last health it had: its state is what counts then.
            health = (state.get("Health") or {}).get("Status") if state["Status"] == "running" else None
            found[item["Name"].lstrip("/")] = (item["Config"]["Labels"]["com.docker.compose.service"],
                                               health or state["Status"], state["ExitCode"])
        return found

    def hostnames(self, service: str) -> set[str]:
        ids = self.containers(service)
        return set(run(["docker", "inspect", "-f", "{{.Config.Hostname}}", *ids]).decode().split()) if ids else set()

    def describe(self) -> str:
        """The stack's state and the last lines of its logs, for a failed scenario."""
        try:
            return (self.compose("ps", "-a").decode() + self.compose("logs", "--no-color", "--tail", "15").decode())
        except Failed as error:
            return str(error)

    @property
    def api(self) -> Api:
        return Api(f"http://127.0.0.1:{self.web_port}")

    def down(self, *args: str) -> None:
        self.compose("down", "--remove-orphans", "--timeout", "10", *args)


class Api:
    """Dealer's HTTP API, as any client calls it."""

    def __init__(self, url: str, key: str | None = None) -> None:
        self.url = url
        self.key = key

    def request(self, method: str, path: str, body: bytes | None = None,
                headers: dict[str, str] | None = None) -> tuple[int, bytes, dict[str, str]]:
        headers = dict(headers or {})
        if self.key:
            headers["Authorization"] = f"Bearer {self.key}"
        request = urllib.request.Request(self.url + path, data=body, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=120) as answer:
                return answer.status, answer.read(), dict(answer.headers)
        except urllib.error.HTTPError as error:
            return error.code, error.read(), dict(error.headers)

    def get(self, path: str, unavailable_for: float = 90) -> Any:
        """GET a JSON answer; a 503 (the database away for a moment) is asked again, as a client should."""
        deadline = time.monotonic() + unavailable_for
        while True:
            status, body, _ = self.request("GET", path)
            if status != 503 or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        check(status == 200, f"GET {path}: {status} {body[:300]!r}")
        return json.loads(body)

    def post_job(self, path: Path, game: str | None = None) -> tuple[int, dict[str, Any]]:
        """POST /api/jobs with the file (multipart); the status and the answer. A 429 is waited out."""
        boundary = uuid.uuid4().hex
        fields = [(b'name="file"; filename="' + path.name.encode() + b'"', path.read_bytes())]
        if game:
            fields.append((b'name="game"', game.encode()))
        body = b"".join(b"--%s\r\nContent-Disposition: form-data; %s\r\n\r\n%s\r\n" % (boundary.encode(), name, value)
                        for name, value in fields) + b"--%s--\r\n" % boundary.encode()
        while True:
            status, answer, headers = self.request(
                "POST", "/api/jobs", body, {"Content-Type": f"multipart/form-data; boundary={boundary}"})
            if status != 429:
                return status, json.loads(answer)
            wait = float(headers.get("Retry-After", "1"))
            log(f"  429 (the per-client limit): waiting {wait:.0f} s as Retry-After says")
            time.sleep(wait)

    def submit(self, path: Path, game: str | None = None) -> int:
        status, job = self.post_job(path, game)
        check(status == 201, f"POST /api/jobs {path.name}: {status} {job}")
        return int(job["id"])

    def job(self, job_id: int) -> dict[str, Any]:
        return self.get(f"/api/jobs/{job_id}")  # type: ignore[no-any-return]

    def wait(self, job_id: int, until: Callable[[dict[str, Any]], bool] = lambda job: job["status"] in FINAL,
             timeout: float = 600) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            job = self.job(job_id)
            if until(job):
                return job
            check(job["status"] not in FINAL, f"job {job_id} ended {job['status']} {job.get('error') or ''}")
            check(time.monotonic() < deadline, f"job {job_id} still {job['status']} ({job['done']}/{job['total']}) "
                  f"after {timeout:.0f} s")
            time.sleep(0.2)

    def output(self, job_id: int) -> bytes:
        status, body, _ = self.request("GET", f"/api/jobs/{job_id}/output")
        if status == 503:
            self.get(f"/api/jobs/{job_id}")  # waits the database out
            status, body, _ = self.request("GET", f"/api/jobs/{job_id}/output")
        check(status == 200, f"GET /api/jobs/{job_id}/output: {status} {body[:300]!r}")
        return body

    def wait_ready(self, workers: int, timeout: float = 180) -> None:
        """Until the web answers and ``/api/overview`` counts ``workers`` workers up."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if len(self.get("/api/overview")["workers"]) >= workers:
                    return
            except (OSError, Failed):
                pass
            time.sleep(0.5)
        raise Failed(f"{self.url}: {workers} workers not up after {timeout:.0f} s")


# --- data ------------------------------------------------------------------------------------


def judge_files() -> list[tuple[str, Path, bytes]]:
    """Every judge file kept in the repository with its expected output: (game, input, output)."""
    return [(folder.name, path, path.with_suffix(".out").read_bytes())
            for folder in sorted(JUDGE.iterdir()) if folder.is_dir()
            for path in sorted(folder.glob("*.in")) if path.with_suffix(".out").exists()]


def random_decks(count: int, seed: int) -> Path:
    """A 10-20-30 judge file of ``count`` shuffled decks, one a line."""
    path = WORK / "data" / f"decks-{count}-{seed}.in"
    path.parent.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    deck = [value for value in range(1, 10) for _ in range(4)] + [10] * 16
    with open(path, "w") as out:
        for _ in range(count):
            rng.shuffle(deck)
            out.write(" ".join(map(str, deck)) + "\n")
        out.write("0\n")
    return path


def solved_here(path: Path) -> bytes:
    """The judge output ``dealer solve`` prints on the host: what the service must serve."""
    return run([str(DEALER), "solve", "10-20-30", str(path)])


def stored(stack: Stack, job_id: int) -> dict[str, Any]:
    """What PostgreSQL holds of a job: its stored cases (``rows``: the cases of its done chunks,
    ``distinct`` indexes among them, ``first`` and ``last`` index) and its chunks by status
    (``chunks``: status -> [chunks, cases]).

    The one place that knows the table layout (``chunks``: a row per chunk with its status, its
    first case's index and its count of cases, the results kept in it): update these queries
    when the storage changes.
    """
    def query(sql: str) -> list[list[str]]:
        out = stack.compose("exec", "-T", "postgres", "psql", "-U", "dealer", "-d", "dealer", "-tAF,", "-c", sql)
        return [line.split(",") for line in out.decode().split()]

    rows, distinct, first, last = (int(value or 0) for value in query(
        "select count(*), count(distinct i), min(i), max(i) from chunks, generate_series(first_index, "
        f"first_index + count - 1) i where job_id = {job_id} and status = 'done'")[0])
    chunks = {status: [int(count), int(cases or 0)] for status, count, cases in query(
        f"select status, count(*), sum(count) from chunks where job_id = {job_id} group by status")}
    return {"rows": rows, "distinct": distinct, "first": first, "last": last, "chunks": chunks}


def assert_complete(stack: Stack, job_id: int, expected: bytes) -> dict[str, Any]:
    """The job succeeded with every case stored once and its output byte for byte ``expected``."""
    job = stack.api.wait(job_id)
    check(job["status"] == "succeeded", f"job {job_id} {job['status']}: {job.get('error')}")
    total = expected.count(b"\n")
    check(job["total"] == job["done"] == total, f"job {job_id}: total {job['total']}, done {job['done']}, "
          f"expected {total}")
    found = stored(stack, job_id)
    check((found["rows"], found["distinct"], found["first"], found["last"]) == (total, total, 1, total),
          f"job {job_id}: {found}; expected {total} case rows, indexes 1..{total}")
    output = stack.api.output(job_id)
    if output != expected:
        lines = output.splitlines()
        differs = next((n for n, (a, b) in enumerate(zip(lines, expected.splitlines()), 1) if a != b), len(lines) + 1)
        time.sleep(3)
        again = "the same" if stack.api.output(job_id) == output else "another"
        raise Failed(f"job {job_id}: the output differs from dealer solve's from line {differs} ({len(output):,} "
                     f"bytes, expected {len(expected):,}; asked again 3 s later: {again}); stored: {stored(stack, job_id)}")
    stack.outputs[job_id] = output
    log(f"  job {job_id}: succeeded, {total:,} cases stored once ({found['rows']:,} rows, indexes 1..{found['last']:,}; "
        f"chunks {found['chunks']}), output byte-exact ({len(output):,} bytes)")
    return job


@contextmanager
def big_job(stack: Stack, seed: int, decks: int = BIG_JOB_DECKS, fault_after: float = 0.05) -> Iterator[int]:
    """A job of ``decks`` decks, yielded once a share of it is solved (the fault goes there);
    afterwards it must succeed with every case stored once, byte-exact against ``dealer solve``."""
    path = random_decks(decks, seed)
    expected = solved_here(path)
    job_id = stack.api.submit(path, "10-20-30")
    job = stack.api.wait(job_id, until=lambda job: job["status"] == "solving" and job["done"] >= fault_after * job["total"]
                         and job["total"] > 0)
    check(job["done"] < job["total"], f"job {job_id} finished before the fault: give it more decks")
    log(f"  job {job_id}: {job['done']:,} of {job['total']:,} decks solved: the fault now")
    start = time.monotonic()
    yield job_id
    assert_complete(stack, job_id, expected)
    log(f"  job {job_id}: ended {time.monotonic() - start:.1f} s after the fault")


# --- the scenarios ---------------------------------------------------------------------------

SCENARIOS: list[tuple[str, Callable[[Stack], None]]] = []


def scenario(title: str) -> Callable[[Callable[[Stack], None]], Callable[[Stack], None]]:
    def register(function: Callable[[Stack], None]) -> Callable[[Stack], None]:
        SCENARIOS.append((title, function))
        return function
    return register


@scenario("build once, up --wait: every service healthy, migrate exited 0")
def every_service_healthy(stack: Stack) -> None:
    start = time.monotonic()
    stack.compose("build")
    log(f"  image {stack.image} built in {time.monotonic() - start:.1f} s")
    log(f"  up --wait with {stack.workers} workers: {stack.up():.1f} s")
    states = stack.states()
    for name, (service, state, code) in sorted(states.items()):
        log(f"  {name}: {state}" + (f" (exit {code})" if state == "exited" else ""))
        if service == "migrate":
            check(state == "exited" and code == 0, f"{name}: {state}, exit {code}")
        else:
            check(state == "healthy", f"{name} is {state}")
    services = {service for service, _, _ in states.values()}
    check(services == {"postgres", "redis", "migrate", "web", "proxy", "worker"}, f"services: {sorted(services)}")
    used = set(run(["docker", "inspect", "-f", "{{.Image}}", *stack.compose("ps", "-q", "web", "worker").decode().split(),
                    *stack.compose("ps", "-aq", "migrate").decode().split()]).decode().split())
    check(len(used) == 1, f"web, worker and migrate run {len(used)} different images")
    bound = stack.compose("port", "proxy", "80").decode().strip()
    check(bound == f"127.0.0.1:{stack.web_port}", f"the proxy is published on {bound}")
    ports = run(["docker", "inspect", "-f", "{{json .NetworkSettings.Ports}}", *stack.containers("web")]).decode()
    check("HostPort" not in ports, f"the web is published on the host too: {ports.strip()}")
    health = stack.api.get("/healthz")
    check(health["ok"] and health["workers"]["seen"] == stack.workers, f"/healthz: {health}")


@scenario("dealer submit --wait from the host, one file a game")
def dealer_submit(stack: Stack) -> None:
    for game in ("10-20-30", "accordion", "mahjong"):
        path = JUDGE / game / "random-2000.in"
        out = run([str(DEALER), "submit", str(path), "--game", game, "--wait", "--no-progress",
                   "--url", stack.api.url])
        check(out == path.with_suffix(".out").read_bytes(), f"dealer submit {game}: the output differs")
        log(f"  {game}/random-2000.in: byte-exact ({len(out):,} bytes)")


def read_until(sock: socket.socket, wanted: bytes, seconds: float) -> bytes:
    """What ``sock`` receives until ``wanted`` is among it, the connection closes or ``seconds`` pass."""
    sock.settimeout(seconds)
    received = b""
    deadline = time.monotonic() + seconds
    with contextlib.suppress(TimeoutError, ConnectionResetError):
        while wanted not in received and time.monotonic() < deadline:
            data = sock.recv(65536)
            if not data:
                break
            received += data
    return received


@scenario("through nginx: a live stream unbuffered, an export streamed, slow heads dropped by nginx")
def through_the_proxy(stack: Stack) -> None:
    host, port = "127.0.0.1", stack.web_port
    served = stack.api.request("GET", "/api/openapi.json")[2].get("Server", "")
    check(served.startswith("nginx"), f"the published port is served by {served!r}, not nginx")
    # A live stream's first events come through at once (nginx buffers no answer): the page's updates.
    with socket.create_connection((host, port), timeout=30) as sock:
        sock.sendall(f"GET /events/dashboard HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
        events = read_until(sock, b"event: jobs", 20)
    check(b"text/event-stream" in events and b"event: overview" in events and b"event: jobs" in events,
          f"the dashboard's live stream through nginx: {events[:300]!r}")
    # An upload streamed through (no request buffering) and its export streamed back.
    path = JUDGE / "mahjong" / "sample.in"
    job = stack.api.wait(stack.api.submit(path, "mahjong"))
    check(job["status"] == "succeeded", f"job {job['id']}: {job['status']}")
    status, body, headers = stack.api.request("GET", f"/api/results/export?job_id={job['id']}&format=csv")
    check(status == 200 and body.count(b"\n") == job["total"] + 1, f"the export: {status} {body[:200]!r}")
    # Heads sent a byte a second: nginx holds them, not the web, and drops them after its header
    # timeout (client_header_timeout), while the API answers all the while.
    slow = [socket.create_connection((host, port), timeout=60) for _ in range(200)]
    try:
        for sock in slow:
            sock.sendall(b"GET /api/jobs HTTP/1.1\r\nX-Slow: ")
        asked = 0
        open_ = slow
        deadline = time.monotonic() + 120
        while open_ and time.monotonic() < deadline:
            stack.api.get("/api/jobs")
            asked += 1
            for sock in open_:
                with contextlib.suppress(OSError):
                    sock.send(b"a")
            time.sleep(1)
            open_ = [sock for sock in open_ if not closed(sock)]
        check(not open_, f"{len(open_)} of {len(slow)} slow heads still open after 120 s")
    finally:
        for sock in slow:
            sock.close()
    log(f"  Server: {served}; the live stream's first events came through at once; an upload and its CSV "
        f"export ({len(body):,} bytes); {len(slow)} slow heads dropped by nginx while GET /api/jobs answered "
        f"{asked} times")


def closed(sock: socket.socket) -> bool:
    """Whether the other end closed ``sock`` (whatever it sent before is read and dropped)."""
    sock.setblocking(False)
    try:
        while data := sock.recv(65536):
            del data
        return True
    except BlockingIOError:
        return False
    except OSError:
        return True
    finally:
        sock.setblocking(True)


@scenario("judge files of the three games, byte-exact through POST /api/jobs")
def judge_files_through_the_api(stack: Stack) -> None:
    files = judge_files()
    games = {game for game, _, _ in files}
    check(games == {"10-20-30", "accordion", "mahjong"}, f"judge files for {sorted(games)}")
    for game, path, expected in files:
        job_id = stack.api.submit(path)  # the game recognised from the content
        job = stack.api.wait(job_id)
        check(job["status"] == "succeeded", f"{game}/{path.name}: job {job_id} {job['status']}: {job.get('error')}")
        check(job["game"] == game, f"{game}/{path.name}: recognised as {job['game']}")
        check(stack.api.output(job_id) == expected, f"{game}/{path.name}: job {job_id}'s output differs from {path.stem}.out")
        stack.outputs[job_id] = expected
    log(f"  {len(files)} files ({', '.join(sorted(games))}): every output byte-exact")


@scenario(f"a worker container killed (docker kill) mid-job of {BIG_JOB_DECKS:,} decks")
def worker_killed(stack: Stack) -> None:
    with big_job(stack, seed=1):
        victim = stack.containers("worker")[0]
        run(["docker", "kill", victim])
        log(f"  killed worker container {victim[:12]}; the job goes on with the other")
    state = run(["docker", "inspect", "-f", "{{.State.Status}}", victim]).decode().strip()
    # restart: unless-stopped takes `docker kill` for a stop: the container stays down until `up`.
    log(f"  the killed container is {state}; up --wait brings it back: {stack.up():.1f} s")


@scenario(f"--scale worker=4 mid-job of {3 * BIG_JOB_DECKS:,} decks: the new workers take chunks")
def scale_up(stack: Stack) -> None:
    first = stack.containers("worker")
    before = stack.hostnames("worker")
    with big_job(stack, seed=2, decks=3 * BIG_JOB_DECKS) as job_id:
        # Once the split has sent every chunk, the first workers' main processes are stopped (SIGSTOP):
        # they hand out no more tasks, so past what their pool processes had in hand only the new
        # workers can move the job, however fast the machine solves (a race with the job's end
        # proved nothing on a fast one). `docker pause` would do the same, but Compose refuses to
        # scale a service with a paused container.
        job = stack.api.wait(job_id, until=lambda job: job["total_known"])
        in_hand = 4 * job["chunk_size"]  # 2 workers of 2 pool processes, a chunk each
        check(job["total"] - job["done"] > in_hand + job["chunk_size"],
              f"job {job_id} had {job['total'] - job['done']:,} decks left at the scale-up: give it more decks")
        run(["docker", "kill", "--signal", "SIGSTOP", *first])
        try:
            frozen = stack.api.job(job_id)["done"]
            log(f"  the first workers stopped (SIGSTOP) at {frozen:,} of {job['total']:,} decks")
            stack.workers = 4
            start = time.monotonic()
            # No --wait: the stopped workers' health checks fail; the new ones are awaited by the job moving.
            stack.compose("up", "-d", "--no-recreate", "--no-deps", "--scale", "worker=4", "worker")
            new = stack.hostnames("worker") - before
            check(len(new) == 2, f"{len(new)} new worker containers")
            job = stack.api.wait(job_id, until=lambda job: job["done"] > frozen + in_hand, timeout=300)
            log(f"  {job['done'] - frozen:,} decks solved in {time.monotonic() - start:.1f} s with the first "
                f"workers stopped: the new workers take chunks")
        finally:
            run(["docker", "kill", "--signal", "SIGCONT", *first])
            stack.workers = 2
    log(f"  up --scale worker=2: {stack.up():.1f} s")


@scenario("the postgres container restarted mid-job")
def postgres_restarted(stack: Stack) -> None:
    with big_job(stack, seed=3):
        start = time.monotonic()
        stack.compose("restart", "postgres")
        log(f"  postgres restarted in {time.monotonic() - start:.1f} s")


@scenario("Flower (profile monitoring) sees every worker")
def flower(stack: Stack) -> None:
    stack.monitoring = True
    log(f"  up --profile monitoring: {stack.up():.1f} s")
    workers = {f"dealer@{host}" for host in stack.hostnames("worker")}
    url = f"http://127.0.0.1:{stack.flower_port}/workers?json=1"
    deadline = time.monotonic() + 30
    while True:
        try:
            with urllib.request.urlopen(url, timeout=10) as answer:
                seen = {item["hostname"] for item in json.load(answer)["data"] if item.get("status")}
        except OSError:
            seen = set()
        if seen >= workers or time.monotonic() > deadline:
            break
        time.sleep(1)
    check(seen >= workers, f"Flower lists {sorted(seen)}, the workers are {sorted(workers)}")
    log(f"  Flower lists every worker: {', '.join(sorted(workers))}")


def jobs_listed(stack: Stack) -> list[tuple[int, str, int, int]]:
    """Every job GET /api/jobs lists: (id, status, total, done)."""
    jobs, page = [], 1
    while True:
        answer = stack.api.get(f"/api/jobs?per_page=100&page={page}")
        jobs += [(job["id"], job["status"], job["total"], job["done"]) for job in answer["items"]]
        if len(jobs) >= answer["total"] or not answer["items"]:
            return jobs
        page += 1


@scenario("down, then up: the stored jobs and their outputs are still there")
def down_and_up(stack: Stack) -> None:
    check(len(stack.outputs) > 3, f"{len(stack.outputs)} jobs finished before down")
    listed = jobs_listed(stack)
    stack.down()
    check(not stack.compose("ps", "-aq").decode().split(), "containers left after down")
    log(f"  down, up again: {stack.up():.1f} s")
    check(jobs_listed(stack) == listed, "GET /api/jobs lists other jobs after down and up")
    for job_id, output in stack.outputs.items():
        check(stack.api.output(job_id) == output, f"job {job_id}'s output changed across down and up")
    log(f"  {len(listed)} jobs listed as before; the outputs of the {len(stack.outputs)} jobs the scenarios "
        f"finished byte-identical ({sum(map(len, stack.outputs.values())):,} bytes)")


@scenario("API keys from an env file: writes need a key")
def keys_from_env_file(stack: Stack) -> None:
    key = uuid.uuid4().hex
    stack.env_file = WORK / "dealer.env"
    stack.env_file.write_text(f"DEALER_API_KEYS=ci:{key}\n")
    log(f"  up with {stack.env_file.name} (DEALER_API_KEYS; no DEALER_SECRET_KEY: the web makes one in /data): "
        f"{stack.up():.1f} s")
    sample = JUDGE / "mahjong" / "sample.in"
    status, answer = stack.api.post_job(sample)
    check(status == 401, f"an upload without a key: {status} {answer}")
    status, answer = Api(stack.api.url, key="x" * 32).post_job(sample)
    check(status == 401, f"an upload with a wrong key: {status} {answer}")
    keyed = Api(stack.api.url, key=key)
    job = keyed.wait(keyed.submit(sample))
    check(job["status"] == "succeeded", f"with the key: {job}")
    out = run([str(DEALER), "submit", str(sample), "--wait", "--no-progress", "--url", stack.api.url],
              env={**os.environ, "DEALER_API_KEY": key})
    check(out == sample.with_suffix(".out").read_bytes(), "dealer submit with DEALER_API_KEY: the output differs")
    secret = stack.compose("exec", "-T", "web", "stat", "-c", "%U %a", "/data/secret_key").decode().strip()
    check(secret == "dealer 600", f"/data/secret_key: {secret}")
    log(f"  no key: 401, a wrong key: 401, the key: 201 and succeeded; dealer submit with DEALER_API_KEY: "
        f"byte-exact; /data/secret_key made ({secret})")


@scenario(f"upgrade: the stack of {UPGRADE_FROM} (its own compose file) with keys made and "
          "DEALER_PUBLIC_READS=true, a finished job, then up --build of this code")
def upgrade(_: Stack) -> None:
    previous = WORK / "previous"
    previous.mkdir(parents=True, exist_ok=True)
    archive = run(["git", "-C", str(ROOT), "archive", "--format=tar", UPGRADE_FROM])
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(previous, filter="data")
    # A deployment that made keys and set public reads explicitly (the release's default then), in the
    # env file both releases read: after the upgrade (public reads now off by default) reads without a
    # key still succeed, and writes still need a key.
    env_file = WORK / "upgrade.env"
    env_file.write_text("DEALER_PUBLIC_READS=true\n")
    old = Stack(UPGRADE_PROJECT, PREVIOUS_IMAGE, workers=1, env_file=env_file, open=False, project_dir=previous,
                compose_file=previous / "docker-compose.yml")
    start = time.monotonic()
    old.compose("build", "migrate")
    log(f"  {UPGRADE_FROM} built from git archive in {time.monotonic() - start:.1f} s")
    old.up()
    key = old.compose("exec", "-T", "web", "dealer", "keys", "add", "operator", "--role", "admin").decode().strip()
    check(len(key) >= 20, f"dealer keys add printed {key!r}")
    keyed = Api(old.api.url, key=key)
    # That release's web processes learned that a key exists up to 2 s after it was made (its cache):
    # until each has, a write without a key went through. A rerun of no job is a write that makes nothing.
    refused, deadline = 0, time.monotonic() + 60
    while refused < 10 and time.monotonic() < deadline:
        refused = refused + 1 if old.api.request("POST", "/api/jobs/999999/rerun")[0] == 401 else 0
        time.sleep(0.5)
    check(refused == 10, f"{UPGRADE_FROM}: a write without a key was not refused once a key was made")
    path = JUDGE / "accordion" / "random-2000.in"
    status, answer = old.api.post_job(path)
    check(status == 401, f"{UPGRADE_FROM}: an upload without a key: {status} {answer}")
    job_id = keyed.submit(path)
    check(old.api.wait(job_id)["status"] == "succeeded", f"job {job_id} on {UPGRADE_FROM} did not succeed")
    output = old.api.output(job_id)
    check(output == path.with_suffix(".out").read_bytes(), f"job {job_id} on {UPGRADE_FROM}: the output differs")
    log(f"  {UPGRADE_FROM}: a key made (dealer keys add); an upload without it 401; job {job_id} with it "
        f"succeeded, its output read without a key byte-exact")
    new = Stack(UPGRADE_PROJECT, CURRENT_IMAGE, workers=1, env_file=env_file, open=False, web_port=old.web_port,
                flower_port=old.flower_port)
    log(f"  up --build of this code (no DEALER_OPEN: the key made lets the web start): {new.up('--build'):.1f} s")
    migrate = [state for name, state in new.states().items() if state[0] == "migrate"]
    check(migrate == [("migrate", "exited", 0)], f"migrate: {migrate}")
    migrate_log = new.compose("logs", "--no-color", "migrate").decode()
    check("database at head" in migrate_log, f"migrate's log: {migrate_log[-500:]}")
    used = run(["docker", "inspect", "-f", "{{.Config.Image}}", *new.containers("web")]).decode().split()
    check(used == [CURRENT_IMAGE], f"the web runs {used}")
    job = new.api.job(job_id)  # without a key: reads are public, as the deployment set them
    check(job["status"] == "succeeded", f"job {job_id} after the upgrade: {job['status']}")
    check(new.api.output(job_id) == output, f"job {job_id}'s output changed across the upgrade (read without a key)")
    check(any(item["id"] == job_id for item in new.api.get("/api/jobs")["items"]),
          f"GET /api/jobs without a key does not list job {job_id}")
    status, body, _headers = new.api.request("POST", f"/api/jobs/{job_id}/rerun")
    check(status == 401, f"a rerun without a key after the upgrade: {status} {body[:300]!r}")
    status, answer = new.api.post_job(path)
    check(status == 401, f"an upload without a key after the upgrade: {status} {answer}")
    keyed = Api(new.api.url, key=key)
    status, body, _headers = keyed.request("POST", f"/api/jobs/{job_id}/rerun")
    check(status == 201, f"rerun of job {job_id} with the key: {status} {body[:300]!r}")
    rerun = json.loads(body)["id"]
    check(new.api.wait(rerun)["status"] == "succeeded", f"the rerun, job {rerun}, did not succeed")
    check(new.api.output(rerun) == output, f"the rerun, job {rerun}: the output differs")
    log(f"  migrate exited 0 ('database at head'); without a key job {job_id}, its output and the list of jobs "
        f"are still served, a rerun and an upload are 401; with the key made before, the rerun (job {rerun}) "
        "succeeded byte-exact")
    new.down("--volumes")


def main() -> int:
    WORK.mkdir(parents=True, exist_ok=True)
    stack = Stack(PROJECT, CURRENT_IMAGE)
    log(f"project {PROJECT}: web on 127.0.0.1:{stack.web_port}, Flower on 127.0.0.1:{stack.flower_port}; "
        f"images: python {os.environ.get('PYTHON_IMAGE', 'python:3.11-slim')}, "
        f"postgres {os.environ.get('POSTGRES_IMAGE', 'postgres:16')}, redis {os.environ.get('REDIS_IMAGE', 'redis:7')}")
    results: list[tuple[str, bool, float]] = []
    # DEALER_COMPOSE_ONLY=words[,words...]: the scenarios whose titles hold any of them, after the first
    # (it brings the stack up): a scenario re-run while it is being fixed, not the whole half hour of a
    # loaded machine.
    only = [words for words in os.environ.get("DEALER_COMPOSE_ONLY", "").split(",") if words]
    for number, (title, function) in enumerate(SCENARIOS, 1):
        if only and number > 1 and not any(words in title for words in only):
            continue
        log(f"[{number}/{len(SCENARIOS)}] {title}")
        start = time.monotonic()
        try:
            function(stack)
            passed = True
        except Exception as error:  # noqa: BLE001 - every scenario is reported, whatever broke it
            passed = False
            detail = str(error) if isinstance(error, Failed) else traceback.format_exc()
            log(f"  FAILED: {detail}")
            log("  the stack now:\n" + stack.describe())
            try:
                log(f"  up --wait, for the next scenario: {stack.up():.1f} s")
            except Failed as again:
                log(f"  up --wait failed too: {again}")
        seconds = time.monotonic() - start
        results.append((title, passed, seconds))
        log(f"[{number}/{len(SCENARIOS)}] {'PASS' if passed else 'FAIL'} ({seconds:.1f} s): {title}")
    try:
        stack.down("--volumes")
    except Failed as error:
        log(f"down --volumes failed: {error}")
    log("results:")
    for title, passed, seconds in results:
        log(f"  {'PASS' if passed else 'FAIL'}  {seconds:6.1f} s  {title}")
    failed = sum(not passed for _, passed, _ in results)
    summary = f"compose: {len(results) - failed} passed, {failed} failed\n"
    (WORK / "summary").write_text(summary)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
