"""kombu, opened where it offers no hook: how often a lost broker is tried again when the caller (Celery's
consumer) says nothing of it, and a filesystem queue whose messages appear whole.

Written against kombu 5.6 (``Connection.ensure_connection``'s ``interval_*`` arguments, which Celery's
consumer leaves to their defaults; ``transport.filesystem.Channel._put``, which writes each message;
``transport.virtual.Transport.default_connection_params``).
"""

from __future__ import annotations

import os
import time
import uuid
from typing import Any

from kombu import Connection
from kombu.transport import filesystem
from kombu.utils.json import dumps

#: The bounds pyproject.toml sets on what this module reaches into (tests/test_seams.py holds them equal).
WRITTEN_AGAINST = ("kombu>=5.4,<5.7",)

#: How a lost broker is tried again (kombu's ``ensure_connection``): at once, then every half second, then
#: every second for as long as it is away. kombu's own (2 s, then 2 s more each time up to 30 s) kept a
#: worker from the broker ~5 s past a 15 s outage; an attempt at a broker that is down is a refused connect.
RECONNECT = {"interval_start": 0.0, "interval_step": 0.5, "interval_max": 1.0}


class PromptConnection(Connection):
    """kombu's connection, trying a lost broker again as :data:`RECONNECT` says unless the caller says
    otherwise: a worker's consumer (``celery.worker.consumer``) reconnects through it, giving no intervals."""

    def ensure_connection(self, *args: Any, **kwargs: Any) -> PromptConnection:
        for name, value in RECONNECT.items():
            kwargs.setdefault(name, value)
        return super().ensure_connection(*args, **kwargs)


class _AtomicFilesystemChannel(filesystem.Channel):
    """kombu's filesystem channel creates a message file and then writes it, so a worker polling
    the folder can take the file while it is still empty, fail to decode it, and stop
    ("Unrecoverable error: JSONDecodeError"). Here a message is written beside the queue under
    a name the consumer ignores and renamed into place once complete (a rename is atomic)."""

    def _put(self, queue: str, payload: Any, **kwargs: Any) -> None:
        name = f"{int(round(time.monotonic() * 1000))}_{uuid.uuid4()}.{queue}.msg"
        folder = self.data_folder_out
        # kombu takes any file whose name merely contains ".<queue>.msg": the partial one's must not.
        partial = os.path.join(folder, f".{uuid.uuid4()}.partial")
        with open(partial, "wb") as stream:
            stream.write(dumps(payload).encode())
        os.replace(partial, os.path.join(folder, name))


class AtomicFilesystemTransport(filesystem.Transport):
    Channel = _AtomicFilesystemChannel

    @property
    def default_connection_params(self) -> dict[str, Any]:
        # A folder has no host: without the virtual transports' default "localhost", kombu does not warn
        # "No hostname was supplied" in every process that connects.
        return {"port": self.default_port}


#: The transport's name as Celery's ``broker_transport`` setting takes it.
ATOMIC_FILESYSTEM = f"{__name__}:{AtomicFilesystemTransport.__name__}"
