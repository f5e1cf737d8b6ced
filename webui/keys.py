"""The admin's page of API keys (``/keys``): every key with its role and when it was last used, a form
that makes one (its token shown once, on the answer to the form), and a button that revokes one.

The same as ``dealer keys add|list|revoke`` (:mod:`worker.store.keys`), for an admin logged in on
the pages. Anyone else is refused with ``403``; in open mode (no key yet) the page says how to make
the first admin key, which only someone with the command line can do.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, render_template, request

from webui.auth import enabled, is_admin, keys, principal
from webui.errors import error_response
from worker.store.keys import KeyRefused, Origin, Role

key_pages = Blueprint("key_pages", __name__)


def _page(status: int = 200, **shown: Any) -> Any:
    items = [vars(item) for item in keys().list()] if enabled() else []
    return render_template("keys.html", page_name="keys", items=items, roles=[r.value for r in Role],
                           **({"made": None, "error": None} | shown)), status


def _refused() -> Any:
    if not enabled():
        return _page()
    if not is_admin():
        return error_response("only an admin's key manages the keys", 403)
    return None


@key_pages.get("/keys")
def keys_page() -> Any:
    return _refused() or _page()


@key_pages.post("/keys")
def add_key() -> Any:
    if (refused := _refused()) is not None:
        return refused
    name, role = (request.form.get("name") or "").strip(), request.form.get("role") or Role.USER
    try:
        token = keys().add(name, role, Origin.PAGE)
    except KeyRefused as error:
        return _page(400, error=error.args[0])
    return _page(201, made={"name": name, "role": role, "token": token})


@key_pages.post("/keys/<name>/revoke")
def revoke_key(name: str) -> Any:
    if (refused := _refused()) is not None:
        return refused
    if name == principal():
        return _page(409, error="you are logged in with this key: revoke it with another admin's key")
    if not keys().revoke(name):
        return _page(404, error=f"there is no active key named {name!r}")
    return _page()
