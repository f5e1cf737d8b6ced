"""Word when work is done: a job's or a check's callback (``notify_url``), POSTed when it ends.

The database is the source of truth (the columns of :class:`worker.store.models.Notified` on jobs and
checks): a callback is ``waiting`` until its row ends, when the lifecycle that ends it makes it ``due``
in the same transaction (``worker.jobs.lifecycle``, ``worker.checks.lifecycle``). Whoever ended it then
sends a message (``dealer.notify``, :func:`send_due`) once that commits; a message lost, a worker that
died mid-request and a retry's time come are all the sweep's (:func:`resend_due`: every due callback whose
``notify_next_at`` has passed). A send claims the row first (``notify_next_at`` moved past the request's
time), so two messages for one callback make one request at a time; a failed one is sent again after a
wait that doubles, until the waits add up to ``notify_retry_seconds``.

Only ``http``/``https`` URLs whose host resolves to public addresses are called, unless
``DEALER_NOTIFY_PRIVATE``: checked when the URL is given (:func:`refuse_unsafe`) and again when it is
called, against the address connected to: the host is resolved once, each of its addresses checked, and
the connection made to that address, with the name as the Host header and TLS server name, so that a
name which resolves elsewhere the second time (DNS rebinding) cannot turn the request inward. No
redirect is followed (an answer 3xx is a failed attempt).
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import ipaddress
import json
import socket
import ssl
from datetime import datetime, timedelta
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from worker.checks.queries import check_view
from worker.config import Settings
from worker.jobs.dispatch import Dispatcher, send_quietly
from worker.jobs.errors import Invalid
from worker.jobs.lifecycle import lock_job
from worker.jobs.queries import job_view
from worker.jobs.views import iso
from worker.states import FINISHED, NO_OUTPUT, CheckStatus, NotifyState
from worker.store.database import Database
from worker.store.models import NOTIFY_SECRET_LENGTH, NOTIFY_URL_LENGTH, Check, Job, utcnow

#: The rows a callback belongs to, by the ``kind`` its body names.
KINDS: dict[str, type[Job | Check]] = {"job": Job, "check": Check}
#: The header that carries the body's signature: ``sha256=`` and the hex HMAC-SHA256 of the body.
SIGNATURE = "X-Dealer-Signature"
#: A send claimed but never recorded (its process died) is sent again this long after its request's time.
LOST_AFTER_SECONDS = 30.0
#: Due callbacks one sweep sends at most (the rest at the next).
SWEEP_BATCH = 200
#: What the rule says, in every refusal.
RULE = ("only http and https URLs whose host resolves to public addresses are called "
        "(DEALER_NOTIFY_PRIVATE=true allows the others)")

#: Why an address is refused, the first test it meets (an IPv4-mapped IPv6 address is tested as IPv4).
_ADDRESS_RULES: tuple[tuple[str, Any], ...] = (
    ("a loopback address", lambda ip: ip.is_loopback),
    ("a link-local address", lambda ip: ip.is_link_local),
    ("a multicast address", lambda ip: ip.is_multicast),
    ("an unspecified address", lambda ip: ip.is_unspecified),
    ("a reserved address", lambda ip: ip.is_reserved),
    ("a private address", lambda ip: ip.is_private),
    ("not a public address", lambda ip: not ip.is_global),
)


class Refused(Invalid):
    """A callback URL the rules refuse (a ``400`` when it is given), saying which rule."""


class Target(NamedTuple):
    """Where a callback URL points: HTTPS or not, the host's name, the port, the path with its query."""

    tls: bool
    host: str
    port: int
    path: str


def resolve(host: str, port: int) -> list[str]:
    """The addresses ``host`` resolves to, in the resolver's order (the tests replace it)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def address_refusal(address: str) -> str | None:
    """Why a callback may not connect to ``address`` unless private ones are allowed; ``None``: it may.

    >>> address_refusal("127.0.0.1"), address_refusal("::ffff:10.0.0.1"), address_refusal("169.254.169.254")
    ('a loopback address', 'a private address', 'a link-local address')
    >>> address_refusal("93.184.216.34") is None, address_refusal("2606:4700::1111") is None
    (True, True)
    """
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return next((why for why, test in _ADDRESS_RULES if test(ip)), None)


def target(url: str) -> Target:
    """Where a callback URL points, or :class:`Refused` saying what is wrong with it."""
    if len(url) > NOTIFY_URL_LENGTH:
        raise Refused(f"notify_url is over {NOTIFY_URL_LENGTH} characters")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as error:
        raise Refused(f"notify_url {url!r} is no URL ({error})") from None
    if parts.scheme not in ("http", "https"):
        raise Refused(f"notify_url {url!r} is refused: {parts.scheme or 'no'} scheme; {RULE}")
    if not parts.hostname:
        raise Refused(f"notify_url {url!r} names no host")
    tls = parts.scheme == "https"
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return Target(tls, parts.hostname, port or (443 if tls else 80), path)


def address(where: Target, allow_private: bool) -> str:
    """The address to connect to for ``where``: its host resolved once, each address it has checked
    unless ``allow_private``; :class:`Refused` naming the rule an address breaks."""
    try:
        addresses = resolve(where.host, where.port)
    except OSError as error:
        raise Refused(f"notify_url's host {where.host} does not resolve ({error.strerror or error})") from None
    if not addresses:
        raise Refused(f"notify_url's host {where.host} does not resolve")
    if not allow_private:
        for found in addresses:
            why = address_refusal(found)
            if why is not None:
                shown = where.host if found == where.host else f"{where.host} ({found})"
                raise Refused(f"notify_url is refused: its host {shown} is {why}; {RULE}")
    return addresses[0]


def refuse_unsafe(url: str, secret: str | None, allow_private: bool) -> None:
    """Refuse (:class:`Refused`, a ``400``) a callback URL the rules do not allow, or a secret too long."""
    if secret is not None and len(secret) > NOTIFY_SECRET_LENGTH:
        raise Refused(f"notify_secret is over {NOTIFY_SECRET_LENGTH} characters")
    address(target(url), allow_private)


def signature(body: bytes, secret: str) -> str:
    """The ``X-Dealer-Signature`` of ``body``: what a receiver computes from the secret to verify it.

    >>> signature(b'{}', "s")
    'sha256=143ca8d517ba1b181025d732b1cf275d90104fca57bb02a565542978aa18c4b6'
    """
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


class _Pinned(http.client.HTTPConnection):
    """A connection to an address found beforehand, under the host's name (its Host header)."""

    def __init__(self, where: Target, to: str, timeout: float) -> None:
        super().__init__(where.host, where.port, timeout=timeout)
        self.to = to

    def connect(self) -> None:
        self.sock = socket.create_connection((self.to, self.port), self.timeout)


class _PinnedTLS(http.client.HTTPSConnection):
    """:class:`_Pinned` over TLS: the certificate is verified against the host's name (its SNI too)."""

    def __init__(self, where: Target, to: str, timeout: float) -> None:
        self.tls = ssl.create_default_context()
        super().__init__(where.host, where.port, timeout=timeout, context=self.tls)
        self.to = to

    def connect(self) -> None:
        self.sock = self.tls.wrap_socket(socket.create_connection((self.to, self.port), self.timeout),
                                         server_hostname=self.host)


def post(url: str, body: bytes, headers: dict[str, str], allow_private: bool, timeout: float) -> int:
    """POST ``body`` to a callback URL, checked again against the address connected to; the answer's
    status. :class:`Refused`, ``OSError`` or ``http.client.HTTPException`` when there is none."""
    where = target(url)
    connection = (_PinnedTLS if where.tls else _Pinned)(where, address(where, allow_private), timeout)
    try:
        connection.request("POST", where.path, body=body, headers=headers)
        return connection.getresponse().status
    finally:
        connection.close()


class Notices:
    """The callbacks' commands: set one on a new job or check, send those due, send one."""

    def __init__(self, db: Database, settings: Settings, dispatcher: Dispatcher) -> None:
        self.settings, self.dispatcher, self.db = settings, dispatcher, db

    def watch(self, kind: str, ident: int, url: str, secret: str | None, page: str) -> None:
        """Call ``url`` (checked by :func:`refuse_unsafe`) when the job or check ``ident`` ends (``page``: its
        page's address); sent at once when it has ended already (it may have, since it was made)."""
        with self.db.session() as session:
            # The lock that ends a job: it cannot end unseen meanwhile (a check's end locks its row).
            job_id = ident if kind == "job" else session.scalar(select(Check.job_id).where(Check.id == ident))
            job = lock_job(session, job_id) if job_id is not None else None
            row = job if kind == "job" else session.get(Check, ident, with_for_update=True)
            if job is None or row is None:
                return
            ended = (job.status in FINISHED if kind == "job"
                     else row.status != CheckStatus.PENDING or job.status in NO_OUTPUT)
            row.notify_url, row.notify_secret, row.notify_page = url, secret or None, page
            row.notify_state = NotifyState.DUE if ended else NotifyState.WAITING
            row.notify_next_at = utcnow() if ended else None
            row.notify_attempts, row.notify_code, row.notify_error, row.notify_delivered_at = 0, None, None, None
        if ended:
            send_quietly(lambda: self.dispatcher.notify(kind, ident))

    def send_due(self, job_id: int | None = None, check_id: int | None = None) -> None:
        """Send the callbacks a job's end (its own, its checks' when it has no output) or a check's made due."""
        with self.db.session(write=False) as session:
            due = []
            if job_id is not None:
                due += [("job", i) for i in session.scalars(select(Job.id).where(
                    Job.id == job_id, Job.notify_state == NotifyState.DUE))]
                due += [("check", i) for i in session.scalars(select(Check.id).where(
                    Check.job_id == job_id, Check.notify_state == NotifyState.DUE))]
            if check_id is not None:
                due += [("check", i) for i in session.scalars(select(Check.id).where(
                    Check.id == check_id, Check.notify_state == NotifyState.DUE))]
        for kind, ident in due:
            send_quietly(lambda kind=kind, ident=ident: self.dispatcher.notify(kind, ident))

    def resend_due(self, now: datetime) -> int:
        """The sweep's part: send every due callback whose time has come (a retry's, or a send lost); how many."""
        with self.db.session(write=False) as session:
            due = [(kind, ident) for kind, model in KINDS.items() for ident in session.scalars(
                select(model.id).where(model.notify_state == NotifyState.DUE, model.notify_next_at <= now)
                .order_by(model.notify_next_at).limit(SWEEP_BATCH))]
        for kind, ident in due:
            send_quietly(lambda kind=kind, ident=ident: self.dispatcher.notify(kind, ident))
        return len(due)

    def send(self, kind: str, ident: int, now: datetime | None = None) -> bool:
        """Make the request of a due callback whose time has come and record its outcome; whether it was
        delivered (``False`` too when it was not this send's to make)."""
        model, settings = KINDS[kind], self.settings
        now = now or utcnow()
        with self.db.session() as session:
            row = lock_job(session, ident) if kind == "job" else session.get(Check, ident, with_for_update=True)
            if row is None or row.notify_state != NotifyState.DUE or row.notify_url is None or (
                    row.notify_next_at is not None and row.notify_next_at > now):
                return False
            row.notify_attempts += 1
            row.notify_next_at = now + timedelta(seconds=settings.notify_timeout_seconds + LOST_AFTER_SECONDS)
            attempt, url, secret = row.notify_attempts, row.notify_url, row.notify_secret
            body = json.dumps(_body(session, kind, row), separators=(",", ":")).encode()
        headers = {"Content-Type": "application/json", "User-Agent": "Dealer"}
        if secret:
            headers[SIGNATURE] = signature(body, secret)
        code: int | None = None
        try:
            code = post(url, body, headers, settings.notify_private, settings.notify_timeout_seconds)
            error = None if 200 <= code < 300 else f"answered {code}"
        except Refused as refused:
            error = str(refused)
        except (OSError, http.client.HTTPException) as failure:
            error = f"no answer: {failure or type(failure).__name__}"
        done = utcnow()
        values: dict[str, Any] = {"notify_code": code, "notify_error": error}
        if error is None:
            values |= {"notify_state": NotifyState.DELIVERED, "notify_next_at": None, "notify_delivered_at": done}
        elif settings.notify_backoff_seconds * (2 ** attempt - 1) >= settings.notify_retry_seconds:
            values |= {"notify_state": NotifyState.FAILED, "notify_next_at": None}
        else:
            values["notify_next_at"] = done + timedelta(seconds=settings.notify_backoff_seconds * 2 ** (attempt - 1))
        with self.db.session() as session:
            session.execute(update(model).where(model.id == ident, model.notify_state == NotifyState.DUE,
                                                model.notify_attempts == attempt).values(**values))
        return error is None


def _body(session: Session, kind: str, row: Job | Check) -> dict[str, Any]:
    """What a callback POSTs: the job's or check's status and counts, and its page."""
    if isinstance(row, Job):
        job = job_view(row)
        return {"kind": kind, "id": job.id, "status": job.status, "error": job.error, "counts": job.counts,
                "total": job.total, "done": job.done, "failed_cases": job.failed_cases,
                "finished_at": iso(job.finished_at), "url": row.notify_page, "attempt": row.notify_attempts}
    check = check_view(row, session.scalar(select(Job.status).where(Job.id == row.job_id)) or "")
    return {"kind": kind, "id": check.id, "job_id": check.job_id, "status": check.status, "error": check.error,
            "verdict": check.verdict, "counts": check.counts.to_dict(), "finished_at": iso(check.finished_at),
            "url": row.notify_page, "attempt": row.notify_attempts}
