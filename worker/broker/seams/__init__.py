"""Where the broker and the worker reach into Celery and kombu past their public hooks: one module per
framework, each naming the versions it was written against (``WRITTEN_AGAINST``, the dependency's bounds
in ``pyproject.toml``), each point held to the behaviour it relies on by ``tests/test_seams.py``."""
