"""The ``dealer`` command line.

Commands that need the service (database, broker, web server) import it inside
their function, so that ``dealer solve`` starts as fast as Python allows.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import click

from worker import engines
from worker.engines.reading import Diagnostic, Faults, InputError
from worker.exits import HELP, Exit
from worker.generating.command import command as generate_command
from worker.packaging.rights import LICENSES

GAMES = click.Choice(engines.names())


@click.group(context_settings={"help_option_names": ["-h", "--help"]}, epilog=HELP)
@click.version_option(package_name="dealer")
def main() -> None:
    """Dealer solves judge files of 10-20-30, Accordian Patience and Chinese Mahjong."""


@main.command()
@click.option("--cores", is_flag=True, help="Print only one line on which core solves each game, and why "
              "not the native one where it does not (what `make install` prints).")
def games(cores: bool) -> None:
    """List the games Dealer can solve, and which core solves each (native or python)."""
    _configure_engines()
    if cores:
        from worker.engines.native import summary

        click.echo(summary())
        return
    rows = [(engine.slug, engine.core_name, engine.title, engine.summary) for engine in engines.all_engines()]
    # Columns as wide as their widest cell, so that every game's summary starts at the same place.
    widths = [max(len(row[k]) for row in rows) for k in range(3)]
    for row in rows:
        click.echo("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False)) + "  " + row[3])


@main.command()
@click.argument("game", type=GAMES)
@click.argument("file", type=click.File("rb"))
@click.option("--jobs", "-j", default=1, show_default=True, type=click.IntRange(1, 256),
              help="Processes to solve on; the output order does not change.")
@click.option("--traces", type=click.Path(dir_okay=False, writable=True, allow_dash=True),
              help="Write one JSON trace per case per line here (- for standard output).")
@click.option("--progress/--no-progress", default=None,
              help="Show a progress bar on stderr (default: when stderr is a terminal).")
def solve(game: str, file: IO[bytes], jobs: int, traces: str | None, progress: bool | None) -> None:
    """Solve FILE (- for standard input) locally and print the judge output.

    FILE is read through the service's screen, with its limits and messages (DEALER_MAX_LINE_BYTES)."""
    from worker.jobs.errors import Invalid
    from worker.jobs.intake import HeadKept, explain
    from worker.solving import TRACE_BUFFER, solve_file

    kept = HeadKept(_screened(file))  # for the message of a bad file (intake.explain)
    engine = engines.get(game)
    reading = kept.reading()
    warnings: list[Diagnostic] = []
    faults = Faults()
    if progress is None:
        progress = sys.stderr.isatty()
    out = sys.stdout
    try:
        with contextlib.ExitStack() as stack:
            # Records go to the kernel a MiB at a time (see TRACE_BUFFER); the file is closed,
            # and so written, also when the input turns out bad.
            records = None if traces is None else stack.enter_context(_open_traces(traces, TRACE_BUFFER))
            stream, advance = reading, None
            if progress:
                from worker.progress import file_progress

                stream, advance = stack.enter_context(file_progress(reading, f"solving {engine.unit}s"))
            solved = solve_file(engine, stream, out, jobs=jobs, traces=records, warnings=warnings, faults=faults,
                                on_batch=advance)
        out.flush()
        if faults:
            before = (f"the judge output printed is that of the {solved:,} {engine.unit}{'' if solved == 1 else 's'} "
                      "before the first fault" if solved else f"no {engine.unit} comes before the first fault, so "
                      "no judge output is printed")
            click.echo(f"dealer: error: {file.name} is no valid judge file ({faults.count:,} "
                       f"fault{'' if faults.count == 1 else 's'}, named below): {before}", err=True)
            _name_faults(file.name, game, faults, kept.head)
            sys.exit(Exit.BAD_INPUT)
    except InputError as error:
        out.flush()
        _name_faults(file.name, game, faults, kept.head)
        _fail(f"{file.name}: {explain(game, error, kept.head)}")
    except Invalid as error:
        out.flush()
        _fail(f"{file.name}: {error.message}")
    finally:
        for warning in warnings:
            click.echo(f"dealer: warning: {file.name}: {warning}", err=True)


@main.command()
@click.argument("arguments", nargs=-1, required=True, metavar="GAME INPUT OUTPUT | --job ID OUTPUT")
@click.option("--job", "job_id", type=click.IntRange(1), default=None,
              help="Check OUTPUT against this job of a running service instead (its judge output as stored: "
                   "nothing is solved again), e.g. one a teacher shared.")
@click.option("--show", default=5, show_default=True, type=click.IntRange(0, 10_000),
              help="How many differences to print.")
@click.option("--url", default="http://127.0.0.1:8000", show_default=True, envvar="DEALER_URL",
              show_envvar=True, help="With --job: the Dealer service.")
@click.option("--api-key", envvar="DEALER_API_KEY", default=None, show_envvar=True,
              help="With --job: the service's API key, when it has keys.")
def check(arguments: tuple[str, ...], job_id: int | None, show: int, url: str, api_key: str | None) -> None:
    """Solve INPUT locally and judge OUTPUT (a program's output for it) case by case; with --job, judge
    OUTPUT against that job of a running service.

    Prints the verdict, the counts and the first differences; the exit status is 0 when
    the output is accepted, 1 when it is not, 2 on bad input (INPUT is read as `dealer solve` reads it),
    3 when the service cannot be reached or refuses.
    """
    if job_id is not None:
        if len(arguments) != 1:
            raise click.UsageError("with --job, give only OUTPUT: the job holds the judge output")
        _check_against_job(job_id, click.Path(exists=True, dir_okay=False).convert(arguments[0], None, None),
                           url, api_key, show)
    if len(arguments) != 3:
        raise click.UsageError("give GAME INPUT OUTPUT (or --job ID OUTPUT)")
    game = GAMES.convert(arguments[0], None, None)
    input_file, output = (click.File("rb").convert(name, None, None) for name in arguments[1:])
    _check_locally(game, input_file, output, show)


def _check_locally(game: str, input_file: IO[bytes], output: IO[bytes], show: int) -> None:
    from worker.checks.compare import OutputError, judge_blocks
    from worker.jobs.errors import Invalid
    from worker.jobs.intake import HeadKept, explain

    kept = HeadKept(_screened(input_file))
    engine = engines.get(game)
    warnings: list[Diagnostic] = []

    def solved() -> Iterator[tuple[bytes, int]]:
        """The file's judge lines a block of cases at a time, solved as a job's chunks are."""
        first = 1
        for texts, count in engine.read_inputs(kept.reading(), warnings):  # each text ends in a newline
            yield engine.solve_chunk(texts[:-1], first, False).lines[:-1], count
            first += count

    try:
        report = judge_blocks(solved(), output, keep=max(show, 1))
    except InputError as error:
        _fail(f"{input_file.name}: {explain(game, error, kept.head)}")
    except Invalid as error:
        _fail(f"{input_file.name}: {error.message}")
    except OutputError as error:
        _fail(f"{output.name}: {error}")
    finally:
        for warning in warnings:
            click.echo(f"dealer: warning: {input_file.name}: {warning}", err=True)
    differences = [{"index": d.index, "line": d.line, "verdict": d.verdict, "expected": d.expected, "got": d.got,
                    "column": d.column} for d in report.differences[:show]]
    _print_check(report.verdict, report.counts, differences)
    sys.exit(Exit.DONE if report.verdict == "accepted" else Exit.NOT_ACCEPTED)


def _check_against_job(job_id: int, output: str, url: str, api_key: str | None, show: int) -> None:
    """``dealer check --job``: OUTPUT sent as a check of the service's job, printed once judged as a local
    check prints (the judge's lines only where the job's owner revealed them)."""
    from worker.client import Client, ClientError

    try:
        client = Client(url, api_key=api_key)
        made = client.check(job_id, output)
        click.echo(f"check {made['id']}", err=True)
        _print_service_check(client, client.wait_check(made["id"]), show)
    except ClientError as error:
        _fail(str(error), error.exit)


def _print_service_check(client: Any, found: dict[str, Any], show: int) -> None:
    """A check the service judged, printed as :func:`_print_check` prints a local one; exits with its verdict."""
    if found["status"] != "done":
        _fail(f"check {found['id']} {found['status']}: {found.get('error') or ''}".rstrip(": "), Exit.NOT_ACCEPTED)
    differences = [{"index": d["case"], "line": d["index"], "verdict": d["verdict"],
                    "expected": d["expected"], "got": d["got"], "column": d["column"]}
                   for d in client.differences(found["id"], show)] if show else []
    _print_check(found["verdict"], found["counts"], differences)
    sys.exit(Exit.DONE if found["verdict"] == "accepted" else Exit.NOT_ACCEPTED)


def _screened(file: IO[bytes]) -> IO[bytes]:
    """A judge file read through the screen the service holds an upload to (``worker/jobs/screen.py``),
    the engines told which core to use: one program's limits, messages and verdicts."""
    from worker.jobs.screen import JudgeFileScreen, Screened

    settings = _read_settings()
    _configure_engines(settings)
    return Screened(file, JudgeFileScreen(settings.max_line_bytes)).reading()


def _print_check(verdict: str, counts: dict[str, int], differences: list[dict[str, Any]]) -> None:
    """A check's verdict, counts and differences, as ``dealer check`` and ``dealer submit --expected`` print them,
    in the pages' words (``worker.checks.wording``)."""
    from worker.checks.wording import place, verdict_label

    cases = sum(counts.values()) - counts["extra"]
    click.echo(f"{verdict_label(verdict)}: {counts['accepted']:,} of {cases:,} cases accepted")
    click.echo("  " + " · ".join(f"{verdict_label(name)} {count:,}" for name, count in counts.items()))
    for difference in differences:
        where = place(difference["line"], difference["column"])
        where = f"case {difference['index']:,}, {where}" if difference["index"] else f"{where}, after the last case"
        click.echo(f"{where}: {verdict_label(difference['verdict'])}")
        if difference["expected"] is not None:
            click.echo(f"  expected: {difference['expected']}")
        click.echo("  got:      " + (difference["got"] if difference["got"] is not None else "(the output ended)"))


def _open_traces(path: str, buffering: int) -> IO[bytes]:
    """The ``--traces`` file (``-``: standard output), or a clear error when it cannot be written."""
    try:
        return open(sys.stdout.fileno() if path == "-" else path, "wb", buffering=buffering, closefd=path != "-")
    except OSError as error:
        return _fail(f"{path}: {error.strerror}")  # type: ignore[no-any-return]


def _name_faults(name: str, game: str, faults: Faults, head: bytes) -> None:
    """The faults of a file read past, on standard error: the first of them, then how many more."""
    from worker.jobs.intake import explain

    for fault in faults.first:
        error = InputError(fault.message, fault.line, fault.column)
        click.echo(f"dealer: error: {name}: {explain(game, error, head)}", err=True)
    if faults.count > len(faults.first):
        click.echo(f"dealer: error: {name}: and {faults.count - len(faults.first):,} more faults", err=True)


def _fail(message: str, status: int = Exit.BAD_INPUT) -> Any:
    click.echo(f"dealer: error: {message}", err=True)
    sys.exit(status)


def _read_settings(data_dir: str | None = None) -> Any:
    """The settings from the environment (and ``--data-dir``), or a clear error naming the variable."""
    from worker.config import Settings

    try:
        return Settings.from_env(data_dir=data_dir)
    except ValueError as error:
        return _fail(str(error))


def _configure_engines(settings: Any = None) -> None:
    """Tell the engines which core to solve on, as the settings say (``DEALER_PURE_PYTHON``)."""
    engines.use_native_core(not (settings or _read_settings()).pure_python)


def _settings(data_dir: str | None = None) -> Any:
    """The settings from the environment (and ``--data-dir``), the engines told which core to use; an
    embedded database is brought up to date."""
    from worker.store.migrate import upgrade

    settings = _read_settings(data_dir)
    _configure_engines(settings)
    if settings.database_url.startswith("sqlite"):
        _make_data_folder(settings)
        with _database(settings) as database:
            upgrade(database)
    return settings


@contextlib.contextmanager
def _database(settings: Any) -> Iterator[Any]:
    """The database of a command's own, closed at the end: a process the command forks next (gunicorn's,
    Celery's) makes its own and inherits no connection."""
    from worker.store.database import Database

    database = Database(settings)
    try:
        yield database
    finally:
        database.close()


def _make_data_folder(settings: Any) -> None:
    """The embedded data folder made where the settings say (never the working directory: the same for
    every command, ``worker.config.default_data_dir``), or one line naming it and exit 2."""
    try:
        settings.data_dir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        _fail(f"cannot make the data folder {settings.data_dir}: {error.strerror}; name another with "
              "DEALER_DATA_DIR (or --data-dir)")


HOST_HELP = "The address to listen on  [default: DEALER_WEB_ADDRESS, else 127.0.0.1]"


def _refuse_open_to_all(data_dir: str | None, address: str) -> None:
    """Refuse to serve ``address`` (``dealer web``, ``dealer serve``) where the service would be open to
    everyone who reaches it: no key made, none in ``DEALER_API_KEYS``, an address other than this
    machine's own, and ``DEALER_OPEN`` not saying it is meant to be open."""
    from sqlalchemy.exc import SQLAlchemyError

    from worker.store.keys import Keys

    settings = _read_settings(data_dir)
    if settings.open or _loopback(address) or any(key.strip() for key in settings.api_keys.split(",")):
        return
    try:
        with _database(_settings(data_dir)) as database:
            keyed = Keys(database).any_made()
    except SQLAlchemyError as error:
        _fail(f"cannot tell whether an API key was made: the database did not answer "
              f"({error.__class__.__name__}; is it up, and upgraded by dealer db upgrade?)", Exit.UNREACHABLE)
    if not keyed:
        _fail(f"refusing to serve {address} with no API key, open to anyone who reaches it: make a key "
              "(dealer keys add NAME), or set DEALER_OPEN=1 if it is meant to be open")


def _loopback(address: str) -> bool:
    """Whether ``address`` is this machine alone (127.0.0.0/8, ::1, localhost).

    >>> [_loopback(a) for a in ("127.0.0.1", "127.8.0.1", "::1", "[::1]", "localhost", "LocalHost")]
    [True, True, True, True, True, True]
    >>> [_loopback(a) for a in ("0.0.0.0", "", "::", "10.0.0.1", "dealer.example", "127.0.0.1.example")]
    [False, False, False, False, False, False]
    """
    import ipaddress

    if address.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(address.strip("[]")).is_loopback
    except ValueError:  # a host name: it may be any interface's
        return False


@main.command()
@click.option("--host", default=None, help=HOST_HELP)
@click.option("--port", default=8000, show_default=True, type=int)
@click.option("--data-dir", type=click.Path(file_okay=False), help="Where the embedded database and broker "
              "live (default: DEALER_DATA_DIR, else the user's data folder, whatever the working directory).")
@click.option("--concurrency", "-c", default=None, type=click.IntRange(1, 64),
              help="Worker processes (default: one per CPU).")
def serve(host: str | None, port: int, data_dir: str | None, concurrency: int | None) -> None:
    """Web UI, API and a worker in one command (embedded mode); Ctrl-C stops all of it."""
    import subprocess

    from webui.server import WebServer, leave_unless_free

    host = host if host is not None else _read_settings(data_dir).web_address
    _refuse_open_to_all(data_dir, host)
    leave_unless_free(host, port)  # before anything is made, the embedded database included
    settings = _settings(data_dir)
    command = [sys.executable, "-m", "worker.cli", "worker"]
    if concurrency:
        command += ["--concurrency", str(concurrency)]
    # The worker is another process: it learns the data folder the way any process does. In a session of
    # its own, a terminal's Ctrl-C reaches only this process, which then stops the worker once, below
    # (Celery told twice starts its shutdown over).
    beats = Path(settings.heartbeat_file or settings.data_dir / "worker.heartbeat")
    beats.unlink(missing_ok=True)
    worker = subprocess.Popen(command, env={**os.environ, "DEALER_DATA_DIR": str(settings.data_dir),
                                            "DEALER_HEARTBEAT_FILE": str(beats)}, start_new_session=True)
    threading.Thread(target=_say_when_ready, args=(worker, beats, f"http://{host}:{port}/", settings),
                     daemon=True).start()
    me = os.getpid()
    asked: list[float] = []

    def ask_worker_to_stop() -> None:
        """Told as soon as the web server is (not after it has stopped), so that both stop together."""
        if not asked and worker.poll() is None:
            asked.append(time.monotonic())
            worker.send_signal(signal.SIGTERM)

    status: int | None = None  # how gunicorn's arbiter ended, when it did
    try:
        WebServer(settings, host, port, graceful_seconds=SERVE_GRACE_SECONDS, on_stop=ask_worker_to_stop).run()
        status = 0
    except SystemExit as leaving:
        status = leaving.code if isinstance(leaving.code, int) else 0 if leaving.code is None else 1
        raise
    finally:
        # Gunicorn's web worker is a fork of this process and leaves through here too: it must leave
        # the Celery worker alone.
        if os.getpid() == me:
            ask_worker_to_stop()
            stop_worker(worker, (asked[0] if asked else time.monotonic()) + WORKER_GRACE_SECONDS)
            if status is not None:
                # Everything this process started is gone and the database has what was done: leave
                # without Python's teardown of the web app's modules, which took seconds of a Ctrl-C on
                # a loaded machine.
                logging.shutdown()
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(status)


def _say_when_ready(worker: Any, beats: Path, url: str, settings: Any) -> None:
    """Say that ``dealer serve`` serves once its worker's first heartbeat came, which it sends once its
    pool processes are warm: a job sent from then is taken at once. It names the data folder where the
    database is one, the folder ``dealer keys`` and ``dealer db`` find too."""
    kept = f", its data in {settings.data_dir}" if settings.database_url.startswith("sqlite") else ""
    while worker.poll() is None:
        if beats.exists():
            click.echo(f"Dealer is serving on {url}{kept} (Ctrl-C stops it)", err=True)
            return
        time.sleep(0.05)


#: What ``dealer serve`` gives the web process to leave when it stops: its open requests, then Python's own
#: exit. Live streams end at once (``webui.server``), so it usually leaves in well under a second; on a busy
#: machine its exit alone took over the 1 s this once was, and gunicorn killed it and logged an error.
SERVE_GRACE_SECONDS = 5
#: What it gives the worker's warm shutdown before killing it.
WORKER_GRACE_SECONDS = 1.5


def stop_worker(worker: Any, deadline: float) -> None:
    """Wait for a Celery worker told to stop (SIGTERM: a warm shutdown) until ``deadline`` (monotonic),
    then kill it with its pool. Celery's own shutdown takes seconds even when idle (its consumer
    loop notices late), and nothing is lost by a kill: tasks are acknowledged late and the
    database says what is done (the next worker's sweep hands out again whatever was held)."""
    import subprocess

    try:
        worker.wait(timeout=max(0.0, deadline - time.monotonic()))
        return
    except subprocess.TimeoutExpired:
        pass
    with contextlib.suppress(ProcessLookupError):
        os.killpg(worker.pid, signal.SIGKILL)
    worker.wait()


@main.command()
@click.option("--host", default=None, help=HOST_HELP)
@click.option("--port", default=8000, show_default=True, type=int)
@click.option("--workers", "-w", default=2, show_default=True, type=click.IntRange(1, 64),
              help="Gunicorn worker processes.")
def web(host: str | None, port: int, workers: int) -> None:
    """The web UI and API alone (configured by DEALER_DATABASE_URL, DEALER_BROKER_URL)."""
    from webui.server import WebServer, leave_unless_free

    host = host if host is not None else _read_settings().web_address
    _refuse_open_to_all(None, host)
    leave_unless_free(host, port)
    settings = _settings()
    WebServer(settings, host, port, workers=workers).run()


@main.command(context_settings={"ignore_unknown_options": True})
@click.option("--concurrency", "-c", default=None, type=click.IntRange(1, 256),
              help="Worker processes (default: one per CPU).")
@click.option("--loglevel", "-l", default="INFO", show_default=True)
@click.argument("celery_args", nargs=-1, type=click.UNPROCESSED)
def worker(concurrency: int | None, loglevel: str, celery_args: tuple[str, ...]) -> None:
    """A Celery worker (configured by DEALER_DATABASE_URL, DEALER_BROKER_URL); extra arguments go to Celery."""
    import warnings

    from celery.exceptions import SecurityWarning

    from worker.broker import QUEUE
    from worker.engines.native import summary
    from worker.runner.tasks import create_worker_app

    # Celery warns a worker run as root (as in a container) that a pickled message could run code as root;
    # this one takes JSON alone (broker.create_celery), so the warning only adds noise to every start.
    warnings.filterwarnings("ignore", category=SecurityWarning)
    app = create_worker_app(_settings())
    click.echo(summary(), err=True)  # which core solves, at every start (make run's first lines)
    argv = ["worker", f"--loglevel={loglevel}", "-Q", QUEUE, "-n", "dealer@%h"]
    if concurrency:
        argv.append(f"--concurrency={concurrency}")
    app.worker_main([*argv, *celery_args])


@main.group()
def db() -> None:
    """Database schema commands."""


@db.command("upgrade")
@click.argument("revision", default="head")
def db_upgrade(revision: str) -> None:
    """Bring the database schema up to REVISION (default: the newest)."""
    from worker.store.migrate import upgrade

    settings = _read_settings()
    if settings.database_url.startswith("sqlite"):
        _make_data_folder(settings)
    with _database(settings) as database:
        upgrade(database, revision)
    click.echo(f"database at {revision}", err=True)


@main.group()
def keys() -> None:
    """API keys: who may use the service, and as what (admin or user). Changes take effect at once."""


def _keys() -> Any:
    from worker.store.database import Database
    from worker.store.keys import Keys

    return Keys(Database(_settings()))


@keys.command("add")
@click.argument("name")
@click.option("--role", type=click.Choice(["user", "admin"]), default="user", show_default=True,
              help="admin sees and manages everything; user only what it made.")
def keys_add(name: str, role: str) -> None:
    """Make a key named NAME and print its token, once: only its digest is kept."""
    from worker.store.keys import KeyRefused

    try:
        token = _keys().add(name, role)
    except KeyRefused as error:
        _fail(str(error))
    click.echo(token)
    click.echo(f"key {name!r} ({role}) made: give it its token above; it is not shown again", err=True)


@keys.command("list")
def keys_list() -> None:
    """Every key: name, role, where it came from, when made, last used, and revoked."""

    def when(moment: Any) -> str:
        return moment.strftime("%Y-%m-%d %H:%M") if moment else "-"

    rows = [("NAME", "ROLE", "ORIGIN", "CREATED", "USED", "REVOKED")]
    rows += [(k.name, k.role, k.origin, when(k.created_at), when(k.used_at), when(k.revoked_at))
             for k in _keys().list()]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        click.echo("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())


@keys.command("revoke")
@click.argument("name")
def keys_revoke(name: str) -> None:
    """Revoke the key NAME: its requests and its pages' sessions stop working at once."""
    if not _keys().revoke(name):
        _fail(f"there is no active key named {name!r} (dealer keys list shows them)")
    click.echo(f"key {name!r} revoked", err=True)


@main.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False, allow_dash=False))
@click.option("--game", "-g", type=GAMES, help="The game (default: recognised from the content).")
@click.option("--url", default="http://127.0.0.1:8000", show_default=True, envvar="DEALER_URL",
              show_envvar=True, help="The Dealer service.")
@click.option("--wait", is_flag=True, help="Wait for the job to finish and print its judge output (with --expected, "
              "the check's verdict: exit status 0 when accepted, 1 when not).")
@click.option("--expected", type=click.Path(exists=True, dir_okay=False), default=None,
              help="A program's output for FILE, checked case by case against the job's once it has succeeded.")
@click.option("--progress/--no-progress", default=None, help="Progress bars on stderr (default: on a terminal).")
@click.option("--api-key", envvar="DEALER_API_KEY", default=None, show_envvar=True,
              help="The service's API key, when it has keys (sent as Authorization: Bearer <key>).")
@click.option("--show", "show_differences", default=5, show_default=True, type=click.IntRange(0, 500),
              help="With --expected: how many differences to print (as dealer check does).")
@click.option("--shared", is_flag=True, help="Share the job with every user of the service: they download its "
              "input and check their outputs against it (dealer check --job), its answers staying yours.")
def submit(file: str, game: str | None, url: str, wait: bool, expected: str | None, progress: bool | None,
           api_key: str | None, show_differences: int, shared: bool) -> None:
    """Upload FILE to a running service and print the job id (with --wait, the judge output, or with
    --expected the check's verdict)."""
    from worker.client import Client, ClientError

    show = sys.stderr.isatty() if progress is None else progress
    try:
        client = Client(url, api_key=api_key)
        job = client.submit(file, game, progress=show, expected=expected, shared=shared)
        # With --wait, standard output is the judge output alone, byte for byte.
        click.echo(f"job {job['id']}" if wait else job["id"], err=wait)
        if wait:
            job = client.wait(job["id"], progress=show)
            if job["status"] != "succeeded":
                _print_partial(client, job)
                _fail(f"job {job['id']} {job['status']}: {job.get('error') or ''}".rstrip(": "), Exit.NOT_ACCEPTED)
            if expected is not None:
                _print_service_check(client, client.wait_check(job["checks"][0]), show_differences)
            for piece in client.output(job["id"]):
                sys.stdout.write(piece)
    except ClientError as error:
        _fail(str(error), error.exit)


#: The faults ``dealer submit --wait`` prints of a job that failed on them (the job lists more).
FAULTS_SHOWN = 10


def _print_partial(client: Any, job: dict[str, Any]) -> None:
    """A failed job's faults (the first few) on standard error, and its partial output, said to be partial."""
    faults = job.get("faults") or []
    for fault in faults[:FAULTS_SHOWN]:
        click.echo(f"dealer: fault: {fault['message']}", err=True)
    if job.get("fault_count", 0) > min(len(faults), FAULTS_SHOWN):
        click.echo(f"dealer: fault: and {job['fault_count'] - min(len(faults), FAULTS_SHOWN):,} more "
                   f"(GET /api/jobs/{job['id']} lists the first {len(faults)})", err=True)
    if job.get("partial_output"):
        for piece in client.output(job["id"], partial=True):
            sys.stdout.write(piece)
        sys.stdout.flush()
        after = faults and job["total"] > job.get("partial_cases", 0)
        kept = (f"; the judge lines of all its {job['total']:,} good cases, those after the fault too: "
                f"GET /api/jobs/{job['id']}/lines" if after else "")
        click.echo(f"dealer: the output is partial: job {job['id']} failed, and this is the judge output of "
                   + ("the cases before its file's first fault" if faults else "the cases it solved") + kept,
                   err=True)


@main.command(epilog="""\b
dealer package 10-20-30 tentwentythirty
dealer package mahjong mahjong --zip mahjong.zip --recipe="--cases 200 --seed 7 --mix ready=1,not-ready=1" \\
    --recipe="--cases 100 --seed 8 --layout sorted,crlf --no-honours"
verifyproblem tentwentythirty
""")
@click.argument("game", type=GAMES)
@click.argument("directory", metavar="[DIR]", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option("--zip", "zip_file", type=click.Path(dir_okay=False, writable=True, path_type=Path),
              help="Write the package as a zip here too (or only), as DOMjudge imports it.")
@click.option("--recipe", "recipes", multiple=True, metavar="OPTIONS",
              help="A secret test file made as dealer generate's options say (--cases, --seed, --mix, --layout, "
                   "--no-honours); repeat for more files (default: a few dozen cases of every outcome).")
@click.option("--license", "license_", type=click.Choice(LICENSES), default=None,
              help="The package's license, as problem.yaml names it (default: cc by).")
@click.option("--rights-owner", metavar="TEXT",
              help="Who owns the package's rights (default: the Dealer authors; none for public domain).")
def package(game: str, directory: Path | None, zip_file: Path | None, recipes: tuple[str, ...],
            license_: str | None, rights_owner: str | None) -> None:
    """Write a problem package for GAME into the new folder DIR, named by the problem's short name
    (lower-case letters and digits), in the Kattis problem package format: its statement, samples,
    the --cover file and generated files with their answers, an input validator, an accepted
    solution and the classic wrong ones."""
    from worker.generating import GenerateError
    from worker.packaging import package as packaging
    from worker.packaging.errors import PackageError
    from worker.packaging.recipes import defaults, parse
    from worker.packaging.rights import Rights

    if directory is None and zip_file is None:
        _fail("say where the package goes: a folder DIR, --zip FILE, or both")
    _configure_engines()
    try:
        rights = Rights.asked(license_, rights_owner)
        made = [parse(game, text) for text in recipes] or defaults(game)
        contents = packaging.files(game, made, rights)
        if directory is not None:
            contents = list(contents)  # made once, for the folder and the zip
            count = packaging.write(game, directory, contents)
        if zip_file is not None:
            with open(zip_file, "wb") as out:
                count = packaging.write_zip(out, contents)
    except GenerateError as error:
        _fail(f"--recipe: {error}")
    except PackageError as error:
        _fail(str(error))
    except OSError as error:  # the folder or the zip cannot be written
        _fail(f"{error.filename}: {error.strerror}")
    where = " and ".join(str(path) for path in (directory, zip_file) if path is not None)
    click.echo(f"dealer: {game}: {count} files in {where}, with {len(made) + 1} secret test files", err=True)


main.add_command(generate_command(_configure_engines, _fail))  # dealer generate: worker/generating/command.py


if __name__ == "__main__":
    main()
