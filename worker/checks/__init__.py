"""Checks: a program's output judged case by case against a job's judge output.

``compare`` is the judge itself (pure: two streams in, verdicts out), ``text`` refuses an
output that is no text, ``store`` keeps a check's row and its parts, ``run`` runs a stored
check on a worker, ``reads`` answers the questions the pages and the API ask of checks.
"""
