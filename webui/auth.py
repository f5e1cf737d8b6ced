"""Who may do what: API keys, the pages' login, CSRF tokens and the security headers of every answer.

Keys are kept in the database (:mod:`worker.store.keys`: ``dealer keys add|list|revoke``, or the
admin's ``/keys`` page), and ``DEALER_API_KEYS`` seeds them at start-up (``name:token`` is an
admin, ``name:token:user`` a user). Until a first key is made the service is open to everyone
(``dealer web`` and ``dealer serve`` then listen on this machine alone unless ``DEALER_OPEN=1``);
only writes from another site's page are refused (what the browser says of it: ``Sec-Fetch-Site``,
else ``Origin``, else ``Referer``; a request with none is a script's). Once a key was made the
service never reopens by itself: with every key revoked it stays closed.

With keys, every request is made by a viewer (:class:`worker.store.owners.Viewer`, put in ``g``
for :mod:`webui.context`): an admin sees and manages everything; a user what it made. Every write
(upload, cancel, rerun, delete, check) needs a key:

- scripts send ``Authorization: Bearer <key>`` (``dealer submit`` sends ``DEALER_API_KEY``);
  a missing or wrong key is a ``401`` with ``WWW-Authenticate``;
- people log in on ``/login`` with a key as the password; the session cookie then stands
  for the key, and every state-changing request from the pages (forms and the scripts'
  ``fetch`` calls alike) must carry the session's CSRF token, in the ``csrf_token`` field
  or the ``X-CSRF-Token`` header (``403`` otherwise). Bearer requests need no CSRF token:
  a browser never adds that header by itself.

Reads are private unless ``DEALER_PUBLIC_READS=true``: a user sees only what it made (another's
job is a ``404``, as if it did not exist), its own figures and activity alone, and a request with
no key nothing but the login, the API's document and ``/healthz``. Keys are kept only as SHA-256
digests, looked up by digest, and never logged or stored: a job row names its owner and
client by the key's name (``alice``, ``key:alice``), never by the key.

Guessing is throttled (:mod:`worker.store.throttle`), without ever refusing a right key: a key
is checked first, and only wrong keys are counted, per client address; after
``DEALER_AUTH_FAILURES_ALLOWED`` of them that address's wrong keys are answered ``429`` (with
``Retry-After``) for a while. Sessions are kept by the server (:mod:`worker.store.sessions`):
logging out, or revoking the key, ends every copy of the cookie; a session lasts
``DEALER_SESSION_HOURS``.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import logging
import math
import os
import re
import secrets
import tempfile
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from flask import (
    Blueprint,
    Flask,
    Response,
    current_app,
    g,
    redirect,
    render_template,
    request,
    session,
    url_for,
)

from sqlalchemy.exc import InterfaceError, OperationalError

from webui.context import settings as current_settings
from webui.context import viewer
from webui.errors import error_response, wants_json
from worker.config import Settings
from worker.store.database import Database
from worker.store.keys import NAME, Identity, Keys, Role, Seed, digest_of
from worker.store.owners import EVERYTHING, Viewer
from worker.store.sessions import Sessions
from worker.store.throttle import Throttle

log = logging.getLogger("dealer.web")

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
CSRF_HEADER = "X-CSRF-Token"
CSRF_FIELD = "csrf_token"
MIN_KEY_LENGTH = 16
#: Reachable without a key even when reads are private: logging in, assets, the load balancer's check, and
#: the API's description (the document and its reference page: how to use the API is no one's data).
OPEN_ENDPOINTS = frozenset({"auth.login", "auth.logout", "static", "ops.healthz", "openapi.openapi_document",
                            "pages.docs"})
#: Answered without asking the keys (which live in the database): the assets, and the load balancer's
#: check, which must say what is down when the database is (it shows no job).
UNGUARDED = frozenset({"static", "ops.healthz"})
#: Pages that are only of use to someone who may write: asking for one means "log me in".
WRITE_PAGES = frozenset({"pages.upload"})
_TOKEN = re.compile(r"[\x21-\x7e]+")

CONTENT_SECURITY_POLICY = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
                           "font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; "
                           "form-action 'self'; frame-ancestors 'none'")
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=(), payment=()",
}
#: Sent only where a browser honours it, a trustworthy origin (HTTPS, or this machine's own address): on
#: plain HTTP to another address it is ignored, and every page would log an error saying so.
TRUSTWORTHY_ONLY = {"Cross-Origin-Opener-Policy": "same-origin"}

auth = Blueprint("auth", __name__)


# --- keys ------------------------------------------------------------------------------------


class KeyRing:
    """The keys of ``DEALER_API_KEYS`` (``name:token`` an admin, ``name:token:user`` a user, a bare
    ``token`` an admin named by its digest), as seeds for the keys table.

    >>> ring = KeyRing.parse("ci:0123456789abcdef-ci, bob:0123456789abcdef-bob:user, 0123456789abcdef-bare")
    >>> [(seed.name, str(seed.role)) for seed in ring.seeds]
    [('ci', 'admin'), ('bob', 'user'), ('key-37555b', 'admin')]
    >>> bool(KeyRing.parse(""))
    False
    """

    def __init__(self, seeds: list[Seed]) -> None:
        self.seeds = seeds

    @classmethod
    def parse(cls, raw: str) -> KeyRing:
        seeds: list[Seed] = []
        for number, entry in enumerate((e.strip() for e in raw.split(",")), start=1):
            if not entry:
                continue
            name, colon, token = entry.partition(":")
            if not colon:
                name, token = "", entry
            role = Role.ADMIN
            rest, _, last = token.rpartition(":")
            if rest and last in (Role.ADMIN, Role.USER):
                token, role = rest, Role(last)
            name, token = name.strip(), token.strip()
            where = f"DEALER_API_KEYS: key {name!r}" if name else f"DEALER_API_KEYS: key number {number}"
            if colon and not NAME.fullmatch(name):
                raise ValueError(f"DEALER_API_KEYS: key number {number} has a name that is not 1-40 letters, "
                                 "digits or _.@- (write keys as name:token, name:token:user or token)")
            if not _TOKEN.fullmatch(token):
                raise ValueError(f"{where} must be printable ASCII without spaces or commas")
            if len(token) < MIN_KEY_LENGTH:
                raise ValueError(f"{where} is shorter than {MIN_KEY_LENGTH} characters; make one with "
                                 "dealer keys add NAME, or python -c 'import secrets; print(secrets.token_urlsafe(32))'")
            digest = digest_of(token)
            name = name or f"key-{digest[:6]}"
            if any(seed.name == name for seed in seeds):
                raise ValueError(f"DEALER_API_KEYS: two keys are named {name!r}")
            seeds.append(Seed(name, role, digest))
        return cls(seeds)

    def __bool__(self) -> bool:
        return bool(self.seeds)


def keys() -> Keys:
    found: Keys = current_app.extensions["dealer_keys"]
    return found


def throttle() -> Throttle:
    found: Throttle = current_app.extensions["dealer_throttle"]
    return found


def sessions() -> Sessions:
    found: Sessions = current_app.extensions["dealer_sessions"]
    return found


def enabled() -> bool:
    """Whether a key was ever made (else the service is open): asked of the database until one was, so
    that a key made by another process works, as its owner, from its first request. Asked once a request
    (the guard, the pages and their tokens all ask), so that one request sees one answer."""
    if "keyed" not in g:
        g.keyed = keys().any_made()
    return bool(g.keyed)


# --- the session's secret ---------------------------------------------------------------------


def load_secret_key(settings: Settings) -> str:
    """``DEALER_SECRET_KEY``, else a key made once and kept in ``DATA_DIR/secret_key`` (mode 0600).

    Several web processes starting at once agree on one key: it is written to a temporary
    file and linked into place, and whoever links second reads the first one's.
    """
    if settings.secret_key:
        return settings.secret_key
    path = settings.data_dir / "secret_key"
    if not path.exists():
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=settings.data_dir, prefix=".secret_key-")  # created 0600
        try:
            with os.fdopen(fd, "w") as stream:
                stream.write(secrets.token_urlsafe(48) + "\n")
                stream.flush()
                os.fsync(stream.fileno())
            try:
                os.link(temp, path)
            except FileExistsError:
                pass
        finally:
            Path(temp).unlink(missing_ok=True)
        if not settings.embedded:
            log.warning("DEALER_SECRET_KEY is not set: sessions are signed with a key kept in %s; every web "
                        "host must share that folder, or set DEALER_SECRET_KEY", path)
    if path.stat().st_mode & 0o077:
        path.chmod(0o600)
    secret = path.read_text().strip()
    if len(secret) < 32:
        raise ValueError(f"{path} holds no usable secret key: remove it to have a new one made")
    return secret


def _fingerprint(digest: str) -> str:
    """What a session keeps of its key (the key's digest): changes when the key does, and tells nothing about it."""
    secret = str(current_app.secret_key).encode()
    return hmac.new(secret, b"dealer-session\0" + bytes.fromhex(digest), hashlib.sha256).hexdigest()[:32]


# --- the request guard ------------------------------------------------------------------------


def principal() -> str | None:
    """The name of the key this request comes with (bearer or session), else ``None``."""
    identity: Identity | None = g.get("identity")
    return identity.name if identity is not None else None


def is_admin() -> bool:
    """Whether this request may manage everything: an admin's key, or the open service."""
    return viewer().admin


def client_id() -> str | None:
    """Who a job belongs to for the per-client limit: its key's name, else the remote address."""
    name = principal()
    return f"key:{name}" if name else request.remote_addr


def can_write() -> bool:
    return not enabled() or principal() is not None


def can_read() -> bool:
    """Whether this request may read jobs at all (private reads need a key)."""
    return can_write() or current_settings().public_reads


def _session_identity() -> Identity | None:
    name, stored, sid = session.get("key"), session.get("kv"), session.get("sid")
    if not (isinstance(name, str) and isinstance(stored, str) and isinstance(sid, str)):
        return None
    found = keys().active(name)
    if found is None or not hmac.compare_digest(stored.encode(), _fingerprint(found[1]).encode()):
        return None  # the key was revoked or changed since the login
    return found[0] if sessions().alive(sid, name) else None


def _viewer(identity: Identity | None) -> Viewer:
    public = current_settings().public_reads
    if identity is None:
        return Viewer.anonymous(public)
    if identity.role == Role.ADMIN:
        return Viewer.administrator(identity.name)
    return Viewer.user(identity.name, public)


def _bucket() -> list[str]:
    """Whom a wrong key counts against: the client's address (never a right key: it is checked first)."""
    return [f"addr:{request.remote_addr}"]


def _wrong(buckets: list[str], what: str) -> tuple[str, dict[str, str]] | None:
    """Count a wrong key; while its client must wait, what it is told (429) instead of "not valid"."""
    wait = throttle().wait(buckets)
    if wait > 0:
        return _too_many(wait)
    blocked = throttle().failed(buckets)
    log.warning("%s from %s%s", what, request.remote_addr, f": blocked for {blocked:.0f} s" if blocked else "")
    return None


def _too_many(wait: float) -> tuple[str, dict[str, str]]:
    """What a client that must wait ``wait`` seconds is told, and its ``Retry-After``."""
    seconds = math.ceil(wait)
    return f"too many wrong keys: try again in {seconds} s", {"Retry-After": str(seconds)}


def _cross_site() -> bool:
    """Whether a browser says this request comes from another site: its Fetch Metadata, else (browsers
    send ``Sec-Fetch-Site`` only to secure or local origins, so not over plain HTTP on a LAN) its
    ``Origin``, else its ``Referer``, against the host the request was sent to. A request with none of
    them (a script, curl, ``dealer submit``) is no browser's form."""
    fetch_site = request.headers.get("Sec-Fetch-Site")
    if fetch_site is not None:
        return fetch_site.lower() in ("cross-site", "same-site")
    sent_from = request.headers.get("Origin") or request.headers.get("Referer")
    if sent_from is None:
        return False
    return _host(sent_from) != _host(request.host_url)


def _host(url: str) -> str | None:
    """The host and port of ``url``, as a request's ``Host`` names them (the default ports left out);
    ``None`` for what names no host (``Origin: null``, sent by sandboxed frames and for redirects).

    The scheme is not compared: behind a proxy that ends TLS the app may see ``http`` where the browser
    saw ``https``, and a page of the same host is the service's own either way.

    >>> _host("http://Dealer.example:80/jobs"), _host("https://dealer.example:8443"), _host("null")
    ('dealer.example', 'dealer.example:8443', None)
    """
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    if not parts.hostname:
        return None
    host = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
    default = {"http": 80, "https": 443}.get(parts.scheme)
    return host if port is None or port == default else f"{host}:{port}"


def _guard() -> Any:
    """Who makes this request (``g.viewer``: :func:`webui.context.viewer`), and the answer that refuses it
    before its view, if any."""
    g.pop("keyed", None)  # asked afresh by each request, even one made within another's app context
    g.identity = None
    g.bearer = False
    g.viewer = EVERYTHING
    if request.endpoint in UNGUARDED:
        return None
    write = request.method not in SAFE_METHODS
    if (seeds := current_app.extensions.get("dealer_seeds")) is not None:
        keys().seed(seeds)
        del current_app.extensions["dealer_seeds"]
    if not enabled():
        # A browser adds no Authorization header to a request of another site's page by itself.
        if write and "Authorization" not in request.headers and _cross_site():
            return _refuse("a write from another site is refused (cross-site request)", 403)
        return None
    g.viewer = _viewer(None)
    if not current_app.secret_key:  # the first key was made while this process ran
        current_app.secret_key = load_secret_key(current_settings())
    refused = _identify()
    if refused is not None:
        return refused
    g.viewer = _viewer(g.identity)
    return _admit(write)


def _identify() -> Any:
    """Who the request says it is (``g.identity``): its API key (``g.bearer``), else its session; the answer
    that refuses a malformed or wrong key, if it is one."""
    header = request.headers.get("Authorization")
    if header is None:
        g.identity = _session_identity()
        return None
    scheme, _, token = header.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return _unauthorized("the Authorization header must be 'Bearer <key>'", invalid=True)
    identity = keys().check(token.strip())
    if identity is None:
        waiting = _wrong(_bucket(), "a wrong API key")
        if waiting is not None:
            return _refuse(waiting[0], 429, waiting[1])
        return _unauthorized("the API key is not valid", invalid=True)
    g.identity, g.bearer = identity, True
    return None


def _admit(write: bool) -> Any:
    """The answer that refuses the request of ``g.identity`` (``None``: nobody), if any: what needs a key
    without one, a write from another site, a write of the pages without its CSRF token."""
    endpoint = request.endpoint or ""
    if endpoint not in OPEN_ENDPOINTS and g.identity is None and (
            write or not current_settings().public_reads or endpoint in WRITE_PAGES):
        return _unauthorized("this needs an API key: send the header 'Authorization: Bearer <key>', "
                             "or log in on the pages")
    if write and not g.bearer:
        if _cross_site():
            return _refuse("a write from another site is refused (cross-site request)", 403)
        return _check_csrf()
    return None


def csrf_token() -> str:
    """The session's CSRF token (made on first use); empty when the service has no keys."""
    if not enabled():
        return ""
    token = session.get("csrf")
    if not isinstance(token, str):
        token = session["csrf"] = secrets.token_urlsafe(32)
    return token


def _check_csrf() -> Any:
    sent = request.headers.get(CSRF_HEADER)
    if sent is None and request.mimetype in ("multipart/form-data", "application/x-www-form-urlencoded"):
        sent = request.form.get(CSRF_FIELD)
    expected = session.get("csrf")
    if not sent or not isinstance(expected, str) or not hmac.compare_digest(sent.encode(), expected.encode()):
        return _refuse("the page's security token (CSRF) is missing or wrong: reload the page and try again",
                       403)
    return None


def _refuse(message: str, status: int, headers: dict[str, str] | None = None) -> Any:
    return error_response(message, status, headers)


def _unauthorized(message: str, invalid: bool = False) -> Any:
    challenge = 'Bearer realm="dealer"' + (', error="invalid_token"' if invalid else "")
    headers = {"WWW-Authenticate": challenge}
    if not wants_json() and request.method in ("GET", "HEAD") and not invalid:
        return redirect(url_for("auth.login", next=_here()))
    return _refuse(message, 401, headers)


def _here() -> str:
    return request.full_path.rstrip("?") if request.query_string else request.path


def _safe_next(target: str | None) -> str:
    """Where to go after logging in: a path on this site, never another site.

    >>> _safe_next("/jobs/3?x=1"), _safe_next("//evil.example/"), _safe_next("https://evil.example/")
    ('/jobs/3?x=1', '/', '/')
    >>> _safe_next("/\\\\evil.example"), _safe_next(None)
    ('/', '/')
    """
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/"
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or any(ord(c) < 32 for c in target):
        return "/"
    return target


def _security_headers(response: Response) -> Response:
    trustworthy = _trustworthy(request.scheme, request.host)
    headers = {**SECURITY_HEADERS, **TRUSTWORTHY_ONLY} if trustworthy else SECURITY_HEADERS
    for name, value in headers.items():
        response.headers.setdefault(name, value)
    return response


def _trustworthy(scheme: str, host: str) -> bool:
    """Whether a browser takes ``scheme://host`` (the address it asked for, port and all) for a potentially
    trustworthy origin (W3C Secure Contexts): HTTPS, or a loopback address or ``localhost`` name.

    >>> [_trustworthy("https", h) for h in ("dealer.example", "10.0.0.5:8000")]
    [True, True]
    >>> [_trustworthy("http", h) for h in ("127.0.0.1:8000", "127.9.9.9", "[::1]:8000", "localhost:8000",
    ...                                    "app.localhost", "LOCALHOST")]
    [True, True, True, True, True, True]
    >>> [_trustworthy("http", h) for h in ("192.168.1.20:8000", "10.0.0.5", "dealer.example", "[fe80::1]:80",
    ...                                    "localhost.example", "")]
    [False, False, False, False, False, False]
    """
    if scheme == "https":
        return True
    name = urlsplit(f"//{host}").hostname or ""
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _template_globals() -> dict[str, Any]:
    return {"auth_enabled": enabled(), "user": principal(), "can_write": can_write(), "can_read": can_read(),
            "is_admin": is_admin(),
            "csrf_token": csrf_token}


# --- login and logout -------------------------------------------------------------------------


@auth.route("/login", methods=["GET", "POST"])
def login() -> Any:
    target = _safe_next(request.values.get("next"))
    if not enabled():
        return redirect(target)
    if request.method == "GET":
        if principal() is not None:
            return redirect(target)
        return render_template("login.html", page_name="login", error=None, next=target)
    token = (request.form.get("key") or "").strip()
    identity = keys().check(token) if token else None
    if identity is None:
        waiting = _wrong(_bucket(), "a login with a wrong key")
        if waiting is not None:
            error, headers = waiting
            return render_template("login.html", page_name="login", error=error, next=target), 429, headers
        page = render_template("login.html", page_name="login", error="that key is not valid", next=target)
        return page, 401
    found = keys().active(identity.name)
    if found is None:  # revoked this very moment
        return render_template("login.html", page_name="login", error="that key is not valid", next=target), 401
    _end_session()
    session.permanent = True
    session["key"] = identity.name
    session["kv"] = _fingerprint(found[1])
    session["sid"] = sessions().start(identity.name)
    session["csrf"] = secrets.token_urlsafe(32)
    return redirect(target, code=303)


@auth.post("/logout")
def logout() -> Any:
    _end_session()
    return redirect(url_for("pages.dashboard"), code=303)


def _end_session() -> None:
    """End this browser's session on the server too, so that no copy of its cookie works any more."""
    sid = session.get("sid")
    if isinstance(sid, str) and enabled():
        sessions().end(sid)
    session.clear()


def install(app: Flask, db: Database, settings: Settings) -> None:
    """Set up keys (``DEALER_API_KEYS`` seeded into the table), sessions, the guard and the headers on
    ``app`` (from :func:`webui.create_app`)."""
    store = Keys(db)
    seeds = KeyRing.parse(settings.api_keys).seeds  # a bad list stops the start, saying what is wrong
    try:
        store.seed(seeds)
    except (OperationalError, InterfaceError):  # the database is down: seeded by the first request
        log.warning("could not seed DEALER_API_KEYS at start: the database is unavailable")
        app.extensions["dealer_seeds"] = seeds
    app.extensions["dealer_keys"] = store
    app.extensions["dealer_throttle"] = Throttle(db, settings.auth_failures_allowed, settings.auth_block_max_seconds)
    app.extensions["dealer_sessions"] = Sessions(db, settings.session_hours)
    if seeds or "dealer_seeds" not in app.extensions and store.any_made():
        app.secret_key = load_secret_key(settings)
    app.config.update(
        SESSION_COOKIE_NAME="dealer_session",
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        SESSION_COOKIE_SECURE=settings.secure_cookies,
        PERMANENT_SESSION_LIFETIME=timedelta(hours=settings.session_hours),
    )
    app.register_blueprint(auth)
    app.before_request(_guard)
    app.after_request(_security_headers)
    app.context_processor(_template_globals)
