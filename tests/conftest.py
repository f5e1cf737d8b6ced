"""The test suite's fixtures come from one plugin (``tests/support/plugin.py``)."""

pytest_plugins = ["tests.support.plugin"]
