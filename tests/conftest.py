"""The test suite's fixtures come from one plugin (``tests/support/plugin.py``); ``tests/support/browsers.py``
says in the header and the summary whether the browser tests run."""

pytest_plugins = ["tests.support.plugin", "tests.support.browsers"]
