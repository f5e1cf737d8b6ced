"""How work travels: the Celery application built from the settings (broker, queue, task names) and the
dispatcher that sends work through it by task name. Shared by the workers (:mod:`worker.runner`) and
by whoever sends them work: the web app only sends, and needs none of the task code.

Celery only carries work: tasks take ids, read what they need from the database
and ignore results. Messages are acknowledged after the task ran (``acks_late``),
so a worker that dies mid-task leaves its message to be delivered again.
"""

from __future__ import annotations

from collections.abc import Sequence

from celery import Celery
from kombu.exceptions import ChannelError

from worker.broker.seams.celery import PromptAMQP
from worker.broker.seams.kombu import ATOMIC_FILESYSTEM
from worker.config import Settings

QUEUE = "dealer"
SPLIT = "dealer.split"
SOLVE = "dealer.solve"
CHECK = "dealer.check"
NOTIFY = "dealer.notify"


def create_celery(settings: Settings) -> Celery:
    app = Celery("dealer", broker=settings.broker_url, set_as_current=False, amqp=PromptAMQP)
    app.conf.update(
        task_default_queue=QUEUE,
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        task_ignore_result=True,
        # One message waiting per process besides the one it runs: a process that finishes a chunk
        # starts the next at once instead of waiting for the broker (chunks are kept small,
        # worker.jobs.sizing, so holding one in reserve keeps no other worker waiting long).
        worker_prefetch_multiplier=2,
        worker_hijack_root_logger=False,
        broker_connection_retry_on_startup=True,
        broker_connection_max_retries=None,
        worker_cancel_long_running_tasks_on_connection_loss=False,
        task_serializer="json",
        accept_content=["json"],
        # No results are kept, yet every send reads the app's result backend. Celery keeps a backend per
        # thread unless told it is thread-safe (the disabled one keeps nothing), and the web's gevent makes
        # thread-locals per greenlet: each request that sent work made the backend anew, looking it up among
        # every installed distribution's entry points, a tenth of a web process's CPU as jobs were made.
        result_backend_thread_safe=True,
    )
    if settings.embedded:
        app.conf.broker_transport = ATOMIC_FILESYSTEM
        queue = settings.broker_dir / "queue"
        queue.mkdir(parents=True, exist_ok=True)
        app.conf.broker_transport_options = {
            "data_folder_in": str(queue),
            "data_folder_out": str(queue),
            "control_folder": str(settings.broker_dir / "control"),
            "store_processed": False,
            # The filesystem transport polls; the default second would add that much latency to every job, and
            # 50 ms made the first job's wait about that (a listing of a folder of few files 50 times a second
            # costs the worker nothing it would notice).
            "polling_interval": 0.02,
        }
    else:
        app.conf.broker_transport_options = {"visibility_timeout": 3600}
    return app


class CeleryDispatcher:
    """Sends work to the workers by task name (the sender needs none of the task code)."""

    def __init__(self, app: Celery) -> None:
        self.app = app

    @classmethod
    def for_settings(cls, settings: Settings) -> CeleryDispatcher:
        return cls(create_celery(settings))

    def prepare(self) -> None:
        """Make what a process's first send would make: Celery's task sender and the result backend it
        reads (even with results ignored). Done before a pool forks, every process inherits them."""
        # Each is made on first reading.
        self.app.backend, self.app.amqp.router, self.app.amqp.send_task_message  # noqa: B018

    def connect(self) -> None:
        """Open the broker connection the sends go through, with the queue declared, now rather than in
        the first send (which the first job's split would otherwise wait for)."""
        with self.app.producer_or_acquire() as producer:
            producer.connection.ensure_connection(max_retries=0)
            producer.maybe_declare(self.app.amqp.queues[QUEUE])

    def split(self, job_id: int) -> None:
        self.app.send_task(SPLIT, args=[job_id], queue=QUEUE)

    def solve(self, chunk_ids: Sequence[int]) -> None:
        with self.app.producer_or_acquire() as producer:
            for chunk_id in chunk_ids:
                self.app.send_task(SOLVE, args=[chunk_id], queue=QUEUE, producer=producer)

    def check(self, check_id: int) -> None:
        self.app.send_task(CHECK, args=[check_id], queue=QUEUE)

    def notify(self, kind: str, ident: int) -> None:
        self.app.send_task(NOTIFY, args=[kind, ident], queue=QUEUE)

    def queue_depth(self) -> int | None:
        try:
            with self.app.connection_for_write() as connection:
                # One attempt: a health check or a dashboard poll must not wait out kombu's retries.
                connection.ensure_connection(max_retries=0)
                try:
                    return int(connection.default_channel.queue_declare(queue=QUEUE, passive=True).message_count)
                except ChannelError as error:
                    # Redis keeps no key for an empty queue, so a passive declare answers NOT_FOUND:
                    # the broker answered, and nothing is waiting.
                    if str(getattr(error, "reply_code", "")) == "404" or "NOT_FOUND" in str(error):
                        return 0
                    raise
        except Exception:  # noqa: BLE001 - any broker trouble means "cannot tell"
            return None
