"""The seams (``webui/seams``, ``worker/broker/seams``): every override of a framework's internals lives in
one of them; each names the versions it was written against, which are the dependency's bounds and admit
the installed one; and each point holds to the behaviour it relies on, through the framework's own code
wherever it can be driven here (a request through gunicorn's worker and Werkzeug's parser, a signal to a
gunicorn worker, a broker tried again, a message through the filesystem queue, a ready Celery worker)."""

from __future__ import annotations

import ast
import importlib
import inspect
import io
import logging
import os
import pkgutil
import re
import signal
import tomllib
from collections.abc import Callable, Iterator
from importlib.metadata import version
from typing import IO, Any

import gevent
import gevent.socket
import pytest
from flask import Flask, request
from packaging.requirements import Requirement
from werkzeug.exceptions import HTTPException, RequestTimeout

import webui.seams
import worker.broker.seams
from tests.support.paths import ROOT
from webui import pacing
from webui.seams import gunicorn as gunicorn_seam
from webui.seams.werkzeug import FileFieldsRequest
from worker.broker.seams import celery as celery_seam
from worker.broker.seams import kombu as kombu_seam

SEAMS = [importlib.import_module(f"{package.__name__}.{module.name}")
         for package in (webui.seams, worker.broker.seams) for module in pkgutil.iter_modules(package.__path__)]
FRAMEWORKS = ("flask", "werkzeug", "gunicorn", "celery", "kombu")
#: The frameworks' classes made to be subclassed, as their documentation says: no seam needed.
EXTENSION_POINTS = {"werkzeug.routing.BaseConverter", "gunicorn.app.base.BaseApplication",
                    "werkzeug.exceptions.NotFound"}


@pytest.mark.parametrize("seam", SEAMS, ids=lambda seam: seam.__name__)
def test_a_seam_names_the_bounds_of_its_dependency_which_admit_the_installed_version(seam: Any) -> None:
    declared = {Requirement(text).name: Requirement(text)
                for text in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]}
    for requirement in map(Requirement, seam.WRITTEN_AGAINST):
        assert str(declared[requirement.name]) == str(requirement), "pyproject.toml's bounds are the seam's"
        assert requirement.specifier.contains(version(requirement.name)), f"{requirement.name} out of range"


def _framework_bases() -> Iterator[tuple[str, str]]:
    """Each class of worker/ and webui/ (the engines aside) derived from a framework's, as (module, base)."""
    for path in sorted([*ROOT.glob("webui/**/*.py"), *ROOT.glob("worker/**/*.py")]):
        if "engines" in path.parts:
            continue
        text = path.read_text()
        if not re.search(rf"^\s*from ({'|'.join(FRAMEWORKS)})\b", text, re.MULTILINE):
            continue
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        tree = ast.parse(text)
        imported = {alias.asname or alias.name: f"{node.module}.{alias.name}" for node in ast.walk(tree)
                    if isinstance(node, ast.ImportFrom) and node.module for alias in node.names}
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                for base in node.bases:
                    name = imported.get(ast.unparse(base).split(".")[0], "")
                    if name.split(".")[0] in FRAMEWORKS:
                        yield module, imported.get(ast.unparse(base), name)


def test_every_class_derived_from_a_frameworks_internals_is_in_a_seam() -> None:
    seams = {seam.__name__ for seam in SEAMS}
    outside = [f"{module}: {base}" for module, base in _framework_bases()
               if module not in seams and base not in EXTENSION_POINTS]
    assert not outside
    assert {module for module, _ in _framework_bases()} >= seams  # the search finds the seams' own


# gunicorn: a request through the worker's own connection and request handling.

def _app(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
    """Reads the body whole when asked to (``/read``), else answers before reading it; says which socket
    the request came on."""
    if environ["PATH_INFO"] == "/read":
        environ["wsgi.input"].read()
    body = type(environ[pacing.SOCKET_KEY]).__name__.encode()
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]


@pytest.fixture
def served() -> Iterator[gevent.socket.socket]:
    """A client connected to a :class:`PacedWorker` serving :func:`_app` on a gevent listener."""
    from gunicorn.config import Config
    from gunicorn.glogging import Logger

    config = Config()
    config.set("keepalive", pacing.HEADER_SECONDS)
    web = gunicorn_seam.PacedWorker(0, os.getppid(), [], None, 0, config, Logger(config))
    web.wsgi = _app
    listener = gevent.socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    client = gevent.socket.create_connection(listener.getsockname())
    client.settimeout(60)  # a connection left open where it should end fails the test, not hangs it
    connection, address = listener.accept()
    serving = gevent.spawn(web.handle, listener, connection, address)
    try:
        yield client
    finally:
        client.close()
        serving.join()
        listener.close()
        web.tmp.close()


def _answer(client: gevent.socket.socket) -> bytes:
    """One answer (its head and a body of its Content-Length), or what came before the connection's end."""
    data = b""
    while b"\r\n\r\n" not in data:
        more = client.recv(65536)
        if not more:
            return data
        data += more
    head, body = data.split(b"\r\n\r\n", 1)
    length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length")))
    while len(body) < length:
        body += client.recv(65536)
    return data


def _post(path: str, body: bytes, length: int | None = None) -> bytes:
    return (f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body) if length is None else length}\r\n\r\n"
            .encode() + body)


def test_an_answer_before_the_body_is_read_closes_its_connection_the_rest_unread(served: Any) -> None:
    served.sendall(_post("/early", b"x" * 1000, length=1 << 20))
    answer = _answer(served)
    assert answer.startswith(b"HTTP/1.1 200") and b"Connection: close" in answer
    assert answer.endswith(b"PacedSocket")  # the worker reads every request through the paced socket
    assert served.recv(1) == b""  # the end of the stream, while the client still owes most of the body


def test_a_body_read_to_its_end_keeps_its_connection(served: Any) -> None:
    for _ in range(2):
        served.sendall(_post("/read", b"x" * 1000))
        answer = _answer(served)
        assert answer.startswith(b"HTTP/1.1 200") and b"Connection: keep-alive" in answer


def test_a_head_that_does_not_come_whole_in_time_ends_the_connection(served: Any,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pacing, "HEADER_SECONDS", 0.1)  # what timeout_ctx gives gunicorn's wait for a head
    served.sendall(b"GET / HTTP/1.1\r\nHost: ")
    assert served.recv(1) == b""  # closed, unanswered


def _request(raw: bytes) -> Any:
    from gunicorn.config import Config
    from gunicorn.http.parser import RequestParser

    return next(RequestParser(Config(), io.BytesIO(raw), ("127.0.0.1", 1)))


def test_whether_an_answer_closes_its_connection_follows_how_much_of_the_body_was_read() -> None:
    body = b"0123456789" * 1000
    request = _request(b"POST /api/jobs HTTP/1.1\r\nHost: x\r\nContent-Length: 10000\r\n\r\n" + body)
    gunicorn_seam.closes_when_body_unread(request)
    assert request.should_close()
    assert request.body.read(4) == b"0123"
    assert request.should_close()
    assert request.body.read() == body[4:]
    assert not request.should_close()  # read to its end: the connection serves the next request


def test_a_chunked_body_is_read_to_its_end_with_its_last_chunk() -> None:
    request = _request(b"POST /api/jobs HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                       b"4\r\nabcd\r\n0\r\n\r\n")
    gunicorn_seam.closes_when_body_unread(request)
    assert request.should_close()
    assert request.body.read() == b"abcd"
    assert not request.should_close()


def test_a_request_without_a_body_keeps_its_connection_unless_it_asks_otherwise() -> None:
    request = _request(b"GET /api/jobs HTTP/1.1\r\nHost: x\r\n\r\n")
    gunicorn_seam.closes_when_body_unread(request)
    assert not request.should_close()
    closing = _request(b"GET /api/jobs HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    gunicorn_seam.closes_when_body_unread(closing)
    assert closing.should_close()


def test_the_arbiter_looks_up_its_handler_as_each_stop_signal_comes() -> None:
    from gunicorn.arbiter import Arbiter

    assert "handle_%s" in Arbiter.run.__code__.co_consts  # an instance's handler is the one called
    told: list[str] = []
    arbiter = Arbiter.__new__(Arbiter)  # its handlers of a stop need no running arbiter
    arbiter.stop = lambda graceful=True: told.append(f"stopped, graceful: {graceful}")
    gunicorn_seam.first_when_arbiter_told_to_stop(arbiter, lambda: told.append("told"))
    for number in gunicorn_seam.STOP_SIGNALS:
        with pytest.raises(StopIteration):
            getattr(arbiter, f"handle_{Arbiter.SIG_NAMES[number]}")()
    # Ctrl-C and SIGQUIT stop at once, SIGTERM (its stop comes later, from the main loop's end) gracefully
    assert told == ["told", "stopped, graceful: False", "told", "told", "stopped, graceful: False"]


def test_a_worker_has_its_stop_handlers_before_post_worker_init_and_calls_the_hook_first() -> None:
    from gunicorn.config import Config
    from gunicorn.glogging import Logger
    from gunicorn.workers.base import Worker

    steps = inspect.getsource(Worker.init_process)
    assert steps.index("self.init_signals()") < steps.index("self.cfg.post_worker_init(self)")
    config = Config()
    web = Worker(0, os.getppid(), [], None, 0, config, Logger(config))
    web.PIPE = os.pipe()
    for end in web.PIPE:
        os.set_blocking(end, False)
    handlers = {number: signal.getsignal(number) for number in Worker.SIGNALS}
    wakeup = signal.set_wakeup_fd(-1)
    told: list[int] = []
    try:
        web.init_signals()
        gunicorn_seam.first_when_worker_told_to_stop(told.append)
        os.kill(os.getpid(), signal.SIGTERM)  # gunicorn's handler: stop once the requests in hand are done
        assert told == [signal.SIGTERM] and not web.alive
    finally:
        for number, handler in handlers.items():
            signal.signal(number, handler)
        signal.set_wakeup_fd(wakeup)
        for end in web.PIPE:
            os.close(end)
        web.tmp.close()


# Werkzeug and Flask: uploads through a real request.

class _Recording(FileFieldsRequest):
    opened: list[tuple[str, str | None]] = []

    def open_file(self, field: str, filename: str | None, total_content_length: int | None) -> IO[bytes]:
        assert total_content_length == self.content_length
        self.opened.append((field, filename))
        return io.BytesIO()

    def cut_short(self) -> HTTPException | None:
        return RequestTimeout("too slow") if request.path == "/late" else None


@pytest.fixture
def uploads() -> Any:
    app = Flask(__name__)
    app.request_class = _Recording

    @app.post("/")
    @app.post("/late")
    def files() -> dict[str, Any]:
        return {field: [storage.stream.getvalue().decode(), storage.filename]
                for field, storage in request.files.items()}

    _Recording.opened = []
    return app.test_client()


def test_each_uploaded_file_is_opened_knowing_its_field(uploads: Any) -> None:
    answer = uploads.post("/", data={"file": (io.BytesIO(b"a deck"), "decks.in"),
                                     "output": (io.BytesIO(b"an output"), "out.txt"), "note": "a field"})
    assert answer.json == {"file": ["a deck", "decks.in"], "output": ["an output", "out.txt"]}
    assert _Recording.opened == [("file", "decks.in"), ("output", "out.txt")]


def test_a_body_cut_short_is_answered_as_the_request_says(uploads: Any) -> None:
    whole = (b"--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"decks.in\"\r\n\r\n" + b"x" * 1000)
    for path, status in (("/late", 408), ("/", 400)):
        answer = uploads.post(path, input_stream=io.BytesIO(whole), content_type="multipart/form-data; boundary=b",
                              environ_overrides={"CONTENT_LENGTH": str(len(whole) + 1000)})
        assert answer.status_code == status


def test_werkzeugs_multipart_parsing_is_the_one_the_seam_copies_but_for_its_parser() -> None:
    from werkzeug.formparser import FormDataParser, MultiPartParser

    from webui.seams.werkzeug import _FormParser

    theirs = set(FormDataParser._parse_multipart.__code__.co_names) - {"MultiPartParser"}
    ours = set(_FormParser._parse_multipart.__code__.co_names) - {"_FieldsParser", "open_file"}
    assert theirs == ours
    assert list(inspect.signature(FormDataParser._parse_multipart).parameters) == list(
        inspect.signature(_FormParser._parse_multipart).parameters)
    # every limit Werkzeug's parser takes is passed on (one more would go unset)
    assert set(inspect.signature(MultiPartParser.__init__).parameters) == {
        "self", "stream_factory", "max_form_memory_size", "cls", "buffer_size", "max_form_parts"}


# kombu and Celery.

def test_a_lost_broker_is_tried_again_at_once_then_every_half_second_then_every_second() -> None:
    from kombu.exceptions import OperationalError

    waits: list[float] = []
    with kombu_seam.PromptConnection("redis://127.0.0.1:1//") as connection, pytest.raises(OperationalError):
        connection.ensure_connection(errback=lambda _, wait: waits.append(wait), max_retries=3)
    assert waits == [0.0, 0.5, 1.0]


def test_celerys_connections_and_its_consumers_reconnection_go_through_the_prompt_connection() -> None:
    from celery import Celery
    from celery.worker.consumer.consumer import Consumer

    app = Celery("seams", broker="redis://127.0.0.1:1//", set_as_current=False, amqp=celery_seam.PromptAMQP)
    assert isinstance(app.connection_for_read(), kombu_seam.PromptConnection)
    assert isinstance(app.connection_for_write(), kombu_seam.PromptConnection)
    code = Consumer.ensure_connected.__code__
    assert "ensure_connection" in code.co_names
    assert not any("interval" in str(constant) for constant in code.co_consts)  # the intervals left to it


def test_a_message_goes_through_the_filesystem_queue_whole(tmp_path: Any, caplog: pytest.LogCaptureFixture) -> None:
    from kombu import Connection

    queue_folder = tmp_path / "queue"
    queue_folder.mkdir()
    folders = {"data_folder_in": str(queue_folder), "data_folder_out": str(queue_folder),
               "control_folder": str(tmp_path / "control")}
    with caplog.at_level(logging.WARNING), Connection(transport=kombu_seam.ATOMIC_FILESYSTEM,
                                                      transport_options=folders) as connection:
        # A queue of its own: kombu keeps the bindings it has made in the process, whatever the folders.
        name = f"seams-{tmp_path.name}"
        queue = connection.SimpleQueue(name)
        queue.put({"job": 7})
        assert [path.name.endswith(f".{name}.msg") for path in queue_folder.iterdir()] == [True]  # no partial left
        assert queue.get(timeout=5).payload == {"job": 7}
        queue.close()
    assert "No hostname was supplied" not in caplog.text


def test_the_consumer_starts_its_steps_again_after_its_connection_step_when_it_reconnects() -> None:
    from celery.utils.imports import symbol_by_name
    from celery.worker.consumer.consumer import Consumer

    back: list[bool] = []
    step = celery_seam.reconnection_step(lambda: back.append(True))
    assert all(symbol_by_name(name) for name in step.requires)
    assert "restart" in Consumer.start.__code__.co_names  # a lost connection restarts the steps
    started = step(object())
    started.start(object())
    assert back == []  # the first start is the first connection
    started.start(object())
    assert back == [True]


@pytest.mark.parametrize(("pool", "forks"), [("prefork", True), ("solo", False), ("threads", False)])
def test_a_ready_worker_says_its_pool(pool: str, forks: bool) -> None:
    from celery import Celery
    from celery.apps.worker import Worker
    from celery.signals import worker_ready

    app = Celery("seams", broker="memory://", set_as_current=False)
    said: list[tuple[int, bool]] = []

    def ready(sender: Any = None, **_: Any) -> None:
        said.append(celery_seam.pool_of(sender))

    worker_ready.connect(ready, weak=False)
    try:
        # The worker as built, nothing started; told its consumer is ready as `dealer worker`'s is (the
        # command's worker class, without the process-wide set-up its own building does).
        built = app.WorkController(concurrency=3, pool_cls=pool)
        Worker.on_consumer_ready(built, built.consumer)
    finally:
        worker_ready.disconnect(ready)
    assert said == [(3, forks)]


def test_the_task_loggers_are_celerys() -> None:
    import celery.app.trace
    import celery.worker.strategy

    assert (celery.worker.strategy.logger.name, celery.app.trace.logger.name) == celery_seam.TASK_LOGGERS
    assert celery.app.trace.LOG_RECEIVED.startswith("Task ") and celery.app.trace.LOG_SUCCESS.startswith("Task ")


def test_swagger_ui_resolves_an_opened_operation_through_the_function_docs_narrows() -> None:
    """/docs (webui/static/js/api-reference.js) gives Swagger UI a ``fn.resolveSubtree(spec, path, options)``
    that passes on the document without the paths but the opened one: the vendored bundle must resolve
    what is opened through that function, with those arguments, or the narrowing is lost without a word
    (the reference would only open slower)."""
    bundle = (ROOT / "webui" / "static" / "vendor" / "swagger-ui" / "swagger-ui-bundle.js").read_text()
    taken = re.search(r"fn:\{resolveSubtree:(\w+),", bundle)
    assert taken, "Swagger UI no longer takes fn.resolveSubtree where it resolves an opened operation"
    called = re.search(rf"await {re.escape(taken[1])}\(\w+,\w+,\{{baseDoc:", bundle)
    assert called, "Swagger UI no longer calls it with (spec, path, options)"
    script = (ROOT / "webui" / "static" / "js" / "api-reference.js").read_text()
    assert re.search(r"plugins: \[[^\]]*\bresolveTheOpenedPathAlone\b", script)
