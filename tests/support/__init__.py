"""What the tests share: a pytest plugin with the fixtures (``plugin``), the shared folder's judge
data (``paths``), an in-process dispatcher (``inline``) and HTTP helpers (``http``).

The live service, private servers and fault scenarios the benchmarks use too live in
``worker.testing``.
"""
