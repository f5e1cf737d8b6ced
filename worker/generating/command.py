"""``dealer generate``: the command line over :func:`worker.generating.generate` and
:func:`worker.generating.cover.cover_file`.

:func:`command` makes the click command; ``worker/cli.py`` adds it to ``dealer`` with the two
things every command of it shares: telling the engines which core to use, and failing with
one line and status 2. Imports of the generator wait for the command to run, so that
``dealer solve`` starts as fast as before.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator
from typing import IO, Any

import click

from worker import engines

#: Prints ``dealer: error: <message>`` and exits with status 2.
Fail = Callable[[str], Any]

EXAMPLES = """
\b
dealer generate 10-20-30 --cases 100000 --seed 7 --mix win=1,loss=1,draw=1 > decks.in
dealer generate accordion --cases 1000 --mix 1=1,2-5=2,6+=1 --layout per-line=13,crlf > decks.in
dealer generate mahjong --cover --report cover.txt > cover.in
"""


def command(configure: Callable[[], None], fail: Fail) -> click.Command:
    """The ``generate`` command; ``configure()`` sets the engines' core, ``fail`` ends in an error."""

    @click.command("generate", help="Write a judge file for GAME to standard output, made to order.\n" + EXAMPLES)
    @click.argument("game", type=click.Choice(engines.names()))
    @click.option("--cases", "-n", type=int, help="How many cases the file holds (1 to 100,000,000).")
    @click.option("--seed", type=int, help="The file's seed: the same arguments and seed make the same bytes "
                  "(default: a random seed, printed on stderr).")
    @click.option("--mix", help="Shares of outcomes, e.g. win=1,loss=1,draw=1; accordion 1=1,2-5=2,6+=1 "
                  "(piles left); mahjong ready=3,not-ready=1 or waits 0-9.")
    @click.option("--layout", help="e.g. per-line=13,flow,ragged,sorted,crlf,no-terminator,no-final-newline.")
    @click.option("--no-honours", is_flag=True, help="Mahjong hands without DONG, NAN, XI, BEI, ZHONG, FA, BAI.")
    @click.option("--cover", is_flag=True, help="Instead: the small file that runs every rule and catches the "
                  "classic wrong solutions, with a report of what it covers.")
    @click.option("--report", type=click.Path(dir_okay=False, writable=True, allow_dash=True),
                  help="Write the report of what the file holds here (default with --cover: stderr).")
    @click.option("--jobs", "-j", default=1, show_default=True, type=click.IntRange(1, 256),
                  help="Processes to make the file on; the file does not change.")
    @click.option("--progress/--no-progress", default=None,
                  help="Show a progress bar on stderr (default: when stderr is a terminal).")
    def generate(game: str, cases: int | None, seed: int | None, mix: str | None, layout: str | None,
                 no_honours: bool, cover: bool, report: str | None, jobs: int, progress: bool | None) -> None:
        from worker.generating import GenerateError

        configure()
        out = sys.stdout.buffer
        try:
            if cover:
                given = [name for name, value in (("--cases", cases), ("--seed", seed), ("--mix", mix),
                                                  ("--layout", layout)) if value is not None]
                if given or no_honours:
                    fail(f"--cover makes one fixed file: leave out {', '.join(given) or '--no-honours'}")
                from worker.generating.cover import cover_file

                text = cover_file(game, out).text()
            else:
                if cases is None:
                    fail("--cases: say how many cases the file holds (or ask for --cover)")
                text = _generate(game, cases, seed, mix, layout, not no_honours, jobs, progress, out)  # type: ignore
            out.flush()
        except GenerateError as error:
            field = {"honours": "no-honours"}.get(error.field or "", error.field)
            fail(f"--{field}: {error.message}" if field else error.message)
        except BrokenPipeError:  # the reader (head, less) had enough: not an error
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(0)
        if report is not None or cover:
            with _report_stream(report, fail) as stream:
                stream.write(text)

    return generate


def _generate(game: str, cases: int, seed: int | None, mix: str | None, layout: str | None, honours: bool,
              jobs: int, progress: bool | None, out: IO[bytes]) -> str:
    """Make the file; what a report says of it."""
    import secrets

    from worker.generating import generate as make
    from worker.generating import plan

    made = plan(game, cases, secrets.randbits(63) if seed is None else seed, mix, layout, honours)
    if seed is None:
        click.echo(f"dealer: seed {made.seed} (--seed {made.seed} makes this file again)", err=True)
    if progress is None:
        progress = sys.stderr.isatty()
    if progress:
        from worker.progress import count_progress

        with count_progress(made.cases, f"making {engines.get(game).unit}s") as update:
            summary = make(made, out, jobs=jobs, progress=update)
    else:
        summary = make(made, out, jobs=jobs)
    return summary.text()


@contextlib.contextmanager
def _report_stream(path: str | None, fail: Fail) -> Iterator[Any]:
    """The report's stream: stderr, or the file ``path`` (``-``: standard output)."""
    if path is None or path == "-":
        yield sys.stderr if path is None else sys.stdout
        return
    try:
        stream = open(path, "w", encoding="utf-8")
    except OSError as error:
        fail(f"{path}: {error.strerror}")
    with stream:
        yield stream
