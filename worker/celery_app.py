"""The Celery application: configuration shared by the workers and by whoever sends them work.

Celery only carries work: tasks take ids, read what they need from the database
and ignore results. Messages are acknowledged after the task ran (``acks_late``),
so a worker that dies mid-task leaves its message to be delivered again.
"""

from __future__ import annotations

from collections.abc import Sequence

from celery import Celery

from worker.config import Settings

QUEUE = "dealer"
SPLIT = "dealer.split"
SOLVE = "dealer.solve"


def create_celery(settings: Settings) -> Celery:
    app = Celery("dealer", broker=settings.broker_url, set_as_current=False)
    app.conf.update(
        task_default_queue=QUEUE,
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        task_ignore_result=True,
        worker_prefetch_multiplier=1,
        worker_hijack_root_logger=False,
        broker_connection_retry_on_startup=True,
        broker_connection_max_retries=None,
        worker_cancel_long_running_tasks_on_connection_loss=False,
        task_serializer="json",
        accept_content=["json"],
    )
    if settings.embedded:
        queue = settings.broker_dir / "queue"
        queue.mkdir(parents=True, exist_ok=True)
        app.conf.broker_transport_options = {
            "data_folder_in": str(queue),
            "data_folder_out": str(queue),
            "control_folder": str(settings.broker_dir / "control"),
            "store_processed": False,
            # The filesystem transport polls; the default second would add that much latency to every job.
            "polling_interval": 0.05,
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

    def split(self, job_id: int) -> None:
        self.app.send_task(SPLIT, args=[job_id], queue=QUEUE)

    def solve(self, chunk_ids: Sequence[int]) -> None:
        with self.app.producer_or_acquire() as producer:
            for chunk_id in chunk_ids:
                self.app.send_task(SOLVE, args=[chunk_id], queue=QUEUE, producer=producer)

    def queue_depth(self) -> int | None:
        try:
            with self.app.connection_for_write() as connection:
                return int(connection.default_channel.queue_declare(queue=QUEUE, passive=True).message_count)
        except Exception:  # noqa: BLE001 - any broker trouble means "cannot tell"
            return None
