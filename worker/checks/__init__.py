"""Checks: a program's output judged case by case against a job's judge output; the floor above jobs.

``compare`` is the judge itself (pure: two streams in, verdicts out), ``text`` refuses an
output that is no text, ``lifecycle`` is the only code that changes a check's status,
``service`` and ``queries`` answer the web app's commands and questions, ``run`` judges a
stored check on a worker, and ``wake`` sends checks to be run when their job has succeeded (or
their message was lost). The jobs' floor knows nothing of checks: :mod:`worker.work` wakes them.
"""
