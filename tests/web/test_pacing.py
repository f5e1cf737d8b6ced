"""The web process's connections (``webui.pacing``): a read of a body that is already buffered still lets
the other greenlets run (how gunicorn's worker is made to read through it: ``tests/test_seams.py``)."""

from __future__ import annotations

import gevent
import gevent.socket

from webui.pacing import PacedSocket


def test_every_read_lets_the_other_greenlets_run_though_the_bytes_are_there() -> None:
    client, server = gevent.socket.socketpair()
    turns = []

    def other() -> None:
        while True:
            turns.append(1)
            gevent.sleep(0)

    running = gevent.spawn(other)
    try:
        client.sendall(bytes(64 << 10))
        paced = PacedSocket(server)
        gevent.sleep(0)  # the other greenlet's first turn
        before = len(turns)
        for _ in range(10):  # each returns at once: the bytes are buffered
            assert len(paced.recv(1024)) == 1024
        assert len(turns) - before >= 10
    finally:
        running.kill()
        client.close()
        server.close()
