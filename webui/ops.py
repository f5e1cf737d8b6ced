"""Operations endpoints outside the API prefix, each with its OpenAPI description: ``/healthz`` for load
balancers, ``/metrics`` for Prometheus."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import Any

from flask import Blueprint, Response, jsonify
from sqlalchemy.exc import SQLAlchemyError

from webui.auth import enabled
from webui.context import dealer, overview_queries
from webui.context import settings as current_settings
from webui.spec import Operations, json_body, ref
from worker import engines
from worker.jobs import monitor
from worker.jobs.monitor import Metrics
from worker.jobs.views import HealthView
from worker.store.models import SOLVE_BUCKETS_US

ops = Blueprint("ops", __name__)
operations = Operations(ops)

#: The content type of Prometheus' text exposition format.
PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8"


@operations.get("/healthz", "health", "Database and broker reachable, workers seen, jobs moving", tag="service",
                access="open",
                responses={"200": json_body(ref(HealthView), "Everything answers (status ok), or does but some job "
                                                             "has not moved for several stall periods (status "
                                                             "degraded: stuck_jobs names them)."),
                           "503": json_body(ref(HealthView), "Something does not (the database, the broker, or no "
                                                             "worker heard from lately); the body says what.")})
def healthz() -> Any:
    """200 when the database and the broker answer and a worker has been seen lately (degraded or not: a stuck
    job is for an operator, not a load balancer), else 503."""
    report = monitor.health(overview_queries(), dealer().dispatcher)
    if report.stuck_jobs and not _shared():
        report = replace(report, stuck_jobs=[])  # whose jobs they are is no visitor's to read: the status says it
    return jsonify(report.to_dict()), 200 if report.ok else 503


def _shared() -> bool:
    """Whether every visitor may read every job: the open service, or public reads. ``/healthz`` asks no key."""
    if current_settings().public_reads:
        return True
    try:
        return not enabled()
    except SQLAlchemyError:  # the database is down: nothing to name anyway
        return False


@operations.get("/metrics", "metrics",
                "Prometheus metrics: jobs by status, cases solved, solve-time histogram, queue depth", tag="service",
                responses={"200": {"description": "Prometheus' text exposition format.",
                                   "content": {"text/plain": {"schema": {"type": "string"}}}}})
def metrics() -> Response:
    return Response("".join(exposition(monitor.metrics(overview_queries(), dealer().dispatcher))), content_type=PROMETHEUS_TEXT)


def exposition(data: Metrics) -> Iterator[str]:
    """The service's figures in Prometheus' text format (one ``# HELP``/``# TYPE`` pair per family).

    >>> text = "".join(exposition(Metrics(jobs_by_status={"queued": 1}, cases_solved=[], workers=0,
    ...     solve_histograms={}, pending_chunks=0, queue_depth=None, broker_up=False)))
    >>> 'dealer_jobs{status="queued"} 1' in text, "dealer_broker_up 0" in text
    (True, True)
    """
    yield from _family("dealer_jobs", "gauge", "Jobs by status.",
                       (({"status": status}, count) for status, count in data.jobs_by_status.items()))
    yield from _family("dealer_cases_solved", "gauge",
                       "Solved cases stored, by game and outcome (falls when a job is deleted).",
                       (({"game": game, "outcome": outcome}, count) for game, outcome, count in data.cases_solved))
    yield from _histogram(data.solve_histograms)
    yield from _family("dealer_workers", "gauge", "Workers whose heartbeat is recent (DEALER_WORKER_TIMEOUT).",
                       [({}, data.workers)])
    yield from _family("dealer_pending_chunks", "gauge", "Chunks of cases waiting for or being solved.",
                       [({}, data.pending_chunks)])
    yield from _family("dealer_jobs_stuck", "gauge", "Unfinished jobs that have not moved for several stall periods "
                       "(/healthz names them): alert when above 0.", [({}, data.stuck_jobs)])
    depth = data.queue_depth
    yield from _family("dealer_broker_up", "gauge", "Whether the broker answered (1) or not (0).",
                       [({}, int(data.broker_up))])
    if depth is not None:
        yield from _family("dealer_queue_depth", "gauge", "Messages waiting in the broker's queue.",
                           [({}, depth)])


def _histogram(histograms: dict[str, dict[str, Any]]) -> Iterator[str]:
    name = "dealer_solve_seconds"
    yield f"# HELP {name} Time to solve one case (cases answered from the result cache are left out).\n"
    yield f"# TYPE {name} histogram\n"
    empty = {"count": 0, "sum_us": 0, "buckets": [0] * len(SOLVE_BUCKETS_US)}
    for game in sorted(set(engines.names()) | set(histograms)):
        figures = histograms.get(game, empty)
        for bound, count in zip(SOLVE_BUCKETS_US, figures["buckets"], strict=True):
            yield _sample(f"{name}_bucket", {"game": game, "le": _number(bound / 1e6)}, count)
        yield _sample(f"{name}_bucket", {"game": game, "le": "+Inf"}, figures["count"])
        yield _sample(f"{name}_sum", {"game": game}, figures["sum_us"] / 1e6)
        yield _sample(f"{name}_count", {"game": game}, figures["count"])


def _family(name: str, kind: str, help_text: str, samples: Iterable[tuple[dict[str, str], float]]) -> Iterator[str]:
    yield f"# HELP {name} {help_text}\n"
    yield f"# TYPE {name} {kind}\n"
    for labels, value in samples:
        yield _sample(name, labels, value)


def _sample(name: str, labels: dict[str, str], value: float) -> str:
    """One sample line, label values escaped.

    >>> print(_sample("x", {"a": 'say "hi"\\n'}, 1.5), end="")
    x{a="say \\"hi\\"\\n"} 1.5
    """
    if labels:
        inner = ",".join(f'{key}="{_escape(str(val))}"' for key, val in labels.items())
        return f"{name}{{{inner}}} {_number(value)}\n"
    return f"{name} {_number(value)}\n"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(value: float) -> str:
    """A sample value as Prometheus writes it.

    >>> _number(3), _number(0.00005), _number(2.5), _number(1.0)
    ('3', '5e-05', '2.5', '1')
    """
    if isinstance(value, int) or float(value).is_integer():
        return str(int(value))
    return repr(float(value))
