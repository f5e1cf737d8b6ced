"""Callbacks over HTTP: the ``notify_url`` and ``notify_secret`` fields of ``POST /api/jobs`` and ``POST
/api/jobs/<id>/checks`` (:mod:`worker.checks.notify` checks, keeps and sends them).

The body's ``url``, the job's or check's page, starts with ``DEALER_PUBLIC_URL`` when it is set, else
with the address the request that set the callback came to (``request.url_root``, which trusted proxies'
``X-Forwarded-*`` headers make the client's: ``DEALER_PROXY_HOPS``).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from flask import g, request

from webui.context import dealer, settings
from worker.checks.notify import RULE, refuse_unsafe
from worker.jobs.errors import Invalid
from worker.store.models import NOTIFY_SECRET_LENGTH, NOTIFY_URL_LENGTH

#: The form fields, as the OpenAPI document describes them.
FIELDS: dict[str, Any] = {
    "notify_url": {"type": "string", "maxLength": NOTIFY_URL_LENGTH, "description": (
        "Optional: a URL POSTed a JSON body when the job or check ends (kind, id, status, error, counts, url: its "
        f"page; a job's total, done and failed_cases, a check's job_id and verdict; attempt), sent again with "
        f"waits that double for a few minutes until it answers 2xx; its last outcome is the view's notify. "
        f"Refused (400) unless {RULE}, checked again against the address connected to; redirects are not "
        f"followed.")},
    "notify_secret": {"type": "string", "maxLength": NOTIFY_SECRET_LENGTH, "description": (
        "Optional, with notify_url: the body is then signed, its header `X-Dealer-Signature: sha256=HEX` where "
        "HEX is the hex HMAC-SHA256 of the body with this secret.")},
}


class Asked(NamedTuple):
    url: str
    secret: str | None


def asked() -> Asked | None:
    """The callback the request's form asks for, refused (``400``, naming the rule) when the rules do not
    allow it; ``None``: none. Kept for :func:`watch`."""
    url, secret = request.form.get("notify_url") or None, request.form.get("notify_secret") or None
    if url is None:
        if secret is not None:
            raise Invalid("notify_secret is given without a notify_url")
        return None
    refuse_unsafe(url, secret, settings().notify_private)
    g.notify = Asked(url, secret)
    return g.notify


def send_due(job_id: int) -> None:
    """Send the callbacks a job's end made due here (a cancel: the workers send those of the ends they make)."""
    dealer().notices.send_due(job_id=job_id)


def watch(kind: str, ident: int) -> bool:
    """Set the callback :func:`asked` took on the new job or check (``kind``) ``ident``; whether there was one."""
    wanted: Asked | None = g.get("notify")
    if wanted is None:
        return False
    base = (settings().public_url or request.url_root).rstrip("/")
    page = f"{base}/{'jobs' if kind == 'job' else 'checks'}/{ident}"
    dealer().notices.watch(kind, ident, wanted.url, wanted.secret, page)
    return True
