"""Dealer's web app: pages, the JSON API and operations endpoints (``flask --app webui run`` works too)."""

from webui.app import create_app

__all__ = ["create_app"]
