"""Who may do what: API keys, the pages' login, CSRF tokens and the security headers of every answer.

With no keys configured (``DEALER_API_KEYS`` empty, the default) the service is open to
everyone, as it always was; only writes from another site's page are refused (what the browser
says of it: ``Sec-Fetch-Site``, else ``Origin``, else ``Referer``; a request with none is a script's).

With keys, every write (upload, cancel, rerun, delete) needs one:

- scripts send ``Authorization: Bearer <key>`` (``dealer submit`` sends ``DEALER_API_KEY``);
  a missing or wrong key is a ``401`` with ``WWW-Authenticate``;
- people log in on ``/login`` with a key as the password; the session cookie then stands
  for the key, and every state-changing request from the pages (forms and the scripts'
  ``fetch`` calls alike) must carry the session's CSRF token, in the ``csrf_token`` field
  or the ``X-CSRF-Token`` header (``403`` otherwise). Bearer requests need no CSRF token:
  a browser never adds that header by itself.

Reads stay open unless ``DEALER_PUBLIC_READS=false``. Keys are kept only as SHA-256
digests, compared in constant time, and never logged or stored: a job row names its
client by the key's name (``key:ci``), never by the key.

Guessing is throttled (:mod:`worker.store.throttle`): wrong keys are counted per client
address and per key prefix, and after ``DEALER_AUTH_FAILURES_ALLOWED`` of them a bucket must
wait (``429`` with ``Retry-After``). Sessions are kept by the server
(:mod:`worker.store.sessions`): logging out ends every copy of the cookie; a session lasts
``DEALER_SESSION_HOURS``.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import math
import os
import re
import secrets
import tempfile
from dataclasses import dataclass
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

from webui.context import settings as current_settings
from webui.errors import error_response, wants_json
from worker.config import Settings
from worker.store.database import Database
from worker.store.sessions import Sessions
from worker.store.throttle import Throttle

log = logging.getLogger("dealer.web")

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
CSRF_HEADER = "X-CSRF-Token"
CSRF_FIELD = "csrf_token"
MIN_KEY_LENGTH = 16
#: How much of a wrong key names its bucket: guesses that share a prefix are throttled together.
PREFIX_LENGTH = 6
#: Reachable without a key even when reads are private: logging in, assets, the load balancer's check.
OPEN_ENDPOINTS = frozenset({"auth.login", "auth.logout", "static", "ops.healthz", "openapi.openapi_document"})
#: Pages that are only of use to someone who may write: asking for one means "log me in".
WRITE_PAGES = frozenset({"pages.upload"})
_NAME = re.compile(r"[A-Za-z0-9_.@-]{1,40}")
_TOKEN = re.compile(r"[\x21-\x7e]+")

CONTENT_SECURITY_POLICY = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
                           "font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; "
                           "form-action 'self'; frame-ancestors 'none'")
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=(), payment=()",
}

auth = Blueprint("auth", __name__)


# --- keys ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Key:
    name: str
    digest: bytes  # SHA-256 of the token: the token itself is not kept

    def __repr__(self) -> str:
        return f"Key({self.name!r})"


class KeyRing:
    """The configured API keys, parsed from ``DEALER_API_KEYS``.

    >>> ring = KeyRing.parse("ci:0123456789abcdef-ci, 0123456789abcdef-bare")
    >>> [key.name for key in ring.keys], ring.check("0123456789abcdef-ci"), ring.check("nope")
    (['ci', 'key-37555b'], 'ci', None)
    >>> bool(KeyRing.parse(""))
    False
    """

    def __init__(self, keys: list[Key]) -> None:
        self.keys = keys
        self._by_name = {key.name: key for key in keys}

    @classmethod
    def parse(cls, raw: str) -> KeyRing:
        keys: list[Key] = []
        for number, entry in enumerate((e.strip() for e in raw.split(",")), start=1):
            if not entry:
                continue
            name, colon, token = entry.partition(":")
            if not colon:
                name, token = "", entry
            name, token = name.strip(), token.strip()
            where = f"DEALER_API_KEYS: key {name!r}" if name else f"DEALER_API_KEYS: key number {number}"
            if colon and not _NAME.fullmatch(name):
                raise ValueError(f"DEALER_API_KEYS: key number {number} has a name that is not 1-40 letters, "
                                 "digits or _.@- (write keys as name:token or token)")
            if not _TOKEN.fullmatch(token):
                raise ValueError(f"{where} must be printable ASCII without spaces or commas")
            if len(token) < MIN_KEY_LENGTH:
                raise ValueError(f"{where} is shorter than {MIN_KEY_LENGTH} characters; make one with "
                                 "python -c 'import secrets; print(secrets.token_urlsafe(32))'")
            digest = hashlib.sha256(token.encode()).digest()
            name = name or f"key-{digest.hex()[:6]}"
            if any(key.name == name for key in keys):
                raise ValueError(f"DEALER_API_KEYS: two keys are named {name!r}")
            keys.append(Key(name, digest))
        return cls(keys)

    def __bool__(self) -> bool:
        return bool(self.keys)

    def check(self, token: str) -> str | None:
        """The name of the key ``token`` is, else ``None``; the time taken does not depend on which."""
        candidate = hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()
        found = None
        for key in self.keys:  # no early exit: every key is compared every time
            if hmac.compare_digest(candidate, key.digest):
                found = key.name
        return found

    def get(self, name: str) -> Key | None:
        return self._by_name.get(name)


def keys() -> KeyRing:
    ring: KeyRing = current_app.extensions["dealer_keys"]
    return ring


def throttle() -> Throttle:
    found: Throttle = current_app.extensions["dealer_throttle"]
    return found


def sessions() -> Sessions:
    found: Sessions = current_app.extensions["dealer_sessions"]
    return found


def enabled() -> bool:
    return bool(keys())


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


def _fingerprint(key: Key) -> str:
    """What a session keeps of its key: changes when the key does, and tells nothing about it."""
    secret = str(current_app.secret_key).encode()
    return hmac.new(secret, b"dealer-session\0" + key.digest, hashlib.sha256).hexdigest()[:32]


# --- the request guard ------------------------------------------------------------------------


def principal() -> str | None:
    """The name of the key this request comes with (bearer or session), else ``None``."""
    return g.get("principal")


def client_id() -> str | None:
    """Who a job belongs to for the per-client limit: its key's name, else the remote address."""
    name = principal()
    return f"key:{name}" if name else request.remote_addr


def can_write() -> bool:
    return not enabled() or principal() is not None


def _session_principal(ring: KeyRing) -> str | None:
    name, stored, sid = session.get("key"), session.get("kv"), session.get("sid")
    if not (isinstance(name, str) and isinstance(stored, str) and isinstance(sid, str)):
        return None
    key = ring.get(name)
    if key is None or not hmac.compare_digest(stored.encode(), _fingerprint(key).encode()):
        return None  # the key was removed or changed since the login
    return name if sessions().alive(sid, name) else None


def _buckets(token: str) -> list[str]:
    """Whom a wrong ``token`` counts against: the client's address and the token's prefix."""
    prefix = hashlib.sha256(token[:PREFIX_LENGTH].encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return [f"addr:{request.remote_addr}", f"prefix:{prefix}"]


def _blocked(buckets: list[str]) -> Any:
    """A 429 while any of ``buckets`` must wait, else ``None``."""
    wait = throttle().wait(buckets)
    if wait <= 0:
        return None
    message, headers = _too_many(wait)
    return _refuse(message, 429, headers)


def _too_many(wait: float) -> tuple[str, dict[str, str]]:
    """What a client that must wait ``wait`` seconds is told, and its ``Retry-After``."""
    seconds = math.ceil(wait)
    return f"too many wrong keys: try again in {seconds} s", {"Retry-After": str(seconds)}


def _wrong_key(buckets: list[str], what: str) -> None:
    blocked = throttle().failed(buckets)
    log.warning("%s from %s%s", what, request.remote_addr,
                f": blocked for {blocked:.0f} s" if blocked else "")


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
    g.principal = None
    g.bearer = False
    write = request.method not in SAFE_METHODS
    ring = keys()
    if not ring:
        # A browser adds no Authorization header to a request of another site's page by itself.
        if write and "Authorization" not in request.headers and _cross_site():
            return _refuse("a write from another site is refused (cross-site request)", 403)
        return None
    header = request.headers.get("Authorization")
    if header is not None:
        scheme, _, token = header.strip().partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return _unauthorized("the Authorization header must be 'Bearer <key>'", invalid=True)
        buckets = _buckets(token.strip())
        if (refused := _blocked(buckets)) is not None:
            return refused
        name = ring.check(token.strip())
        if name is None:
            _wrong_key(buckets, "a wrong API key")
            return _unauthorized("the API key is not valid", invalid=True)
        g.principal, g.bearer = name, True
    else:
        g.principal = _session_principal(ring)
    endpoint = request.endpoint or ""
    if endpoint not in OPEN_ENDPOINTS and g.principal is None and (
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
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)
    return response


def _template_globals() -> dict[str, Any]:
    return {"auth_enabled": enabled(), "user": principal(), "can_write": can_write(),
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
    buckets = _buckets(token)
    wait = throttle().wait(buckets)
    if wait > 0:
        error, headers = _too_many(wait)
        return render_template("login.html", page_name="login", error=error, next=target), 429, headers
    key = keys().check(token)
    if key is None:
        _wrong_key(buckets, "a login with a wrong key")
        page = render_template("login.html", page_name="login", error="that key is not valid", next=target)
        return page, 401
    known = keys().get(key)
    assert known is not None
    _end_session()
    session.permanent = True
    session["key"] = key
    session["kv"] = _fingerprint(known)
    session["sid"] = sessions().start(key)
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


def install(app: Flask, settings: Settings) -> None:
    """Set up keys, sessions, the guard and the headers on ``app`` (from :func:`webui.create_app`)."""
    ring = KeyRing.parse(settings.api_keys)
    app.extensions["dealer_keys"] = ring
    db = Database.of(settings)
    app.extensions["dealer_throttle"] = Throttle(db, settings.auth_failures_allowed, settings.auth_block_max_seconds)
    app.extensions["dealer_sessions"] = Sessions(db, settings.session_hours)
    if ring:
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
