"""Harnesses the test suite and the benchmarks share (in the manner of ``celery.contrib.testing``): a
real service in subprocesses (``live``), the servers it runs against and a second host in a
network namespace (``servers``), and the fault scenarios (``faults``). Nothing here is imported
by the service itself."""
