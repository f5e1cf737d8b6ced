"""The figures the guide shows, written by the benchmarks that measure them.

A benchmark runs its ``main`` through :func:`record`: what it prints still goes to the terminal, and
once it returns the same text is written to ``docs/figures/<name>.md`` under a header saying what
produced it: the command and its arguments, the ``DEALER_*`` settings it ran with, the machine (CPUs,
their model, memory), the load average before and after and the busiest other processes when it
began, the date, and its exit status (a missed target is a figure too, and shows as one). The
guide's pages include that file (``docs/hooks/figures.py``); no figure in the guide is typed by hand.
A run that raises writes nothing, so the page keeps the last figure that was measured.

>>> run = Run("python -m bench.engines", {}, "now", (1.0, 1.0, 1.0), ["x 50%"])
>>> text = page("engines", "all done\\n", run, 0)
>>> text.splitlines()[0]
'<!-- Written by `python -m bench.engines` (bench/figures.py); run it again to measure again. -->'
>>> "all done" in text and "x 50%" in text
True
"""

from __future__ import annotations

import io
import os
import platform
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

FIGURES = Path(__file__).resolve().parents[1] / "docs" / "figures"
#: What follows a word naming a secret on another process's command line is not written down.
SECRET = re.compile(r"(?i)(\S*(?:key|token|password|secret)\S*?[= ])\S+")


@dataclass(frozen=True)
class Run:
    """How a benchmark was started, and what the machine was doing then."""

    command: str
    settings: dict[str, str]
    started: str
    load: tuple[float, float, float]
    busiest: list[str]


class _Tee(io.TextIOBase):
    """Standard output that still reaches the terminal and is kept for the figure."""

    def __init__(self, terminal: io.TextIOBase) -> None:
        self.terminal = terminal
        self.kept = io.StringIO()

    def write(self, text: str) -> int:
        self.kept.write(text)
        return self.terminal.write(text)

    def flush(self) -> None:
        self.terminal.flush()


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def memory() -> str:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return f"{int(line.split()[1]) / (1 << 20):.1f} GiB"
    except OSError:
        pass
    return "unknown"


def busiest(own: int, count: int = 5) -> list[str]:
    """The processes using the most CPU besides this one, as ``ps`` sees them (its %CPU is the share of
    one CPU averaged over each process's life)."""
    try:
        listing = subprocess.run(["ps", "-eo", "pid=,pcpu=,args=", "--sort=-pcpu"], capture_output=True,
                                 text=True, check=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    found = []
    for line in listing.splitlines():
        pid, cpu, name = line.split(None, 2)
        if int(pid) != own and float(cpu) >= 1.0:
            # the command line, cut: which program and what it was asked (``python -m pytest tests/…``)
            shown = SECRET.sub(r"\1…", name)[:60]
            found.append(f"`{shown}` {cpu}%")
    return found[:count]


def started(module: str) -> Run:
    return Run(command=" ".join(["python -m", module, *sys.argv[1:]]),
               settings={k: v for k, v in sorted(os.environ.items())
                         if k.startswith("DEALER_") and "KEY" not in k and "URL" not in k},
               started=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"), load=os.getloadavg(),
               busiest=busiest(os.getpid()))


def page(name: str, output: str, run: Run, status: int) -> str:
    """The figure file: what produced it, then the benchmark's output as it printed it."""
    end = os.getloadavg()
    settings = ", ".join(f"`{k}={v}`" for k, v in run.settings.items()) or "the shipped defaults"
    others = ", ".join(run.busiest) or "none above 1 % of a CPU"
    return "\n".join([
        f"<!-- Written by `{run.command}` (bench/figures.py); run it again to measure again. -->",
        "",
        f"- **Command**: `{run.command}`, {run.started}",
        f"- **Settings**: {settings}",
        f"- **Machine**: {os.cpu_count()} CPUs ({cpu_model()}), {memory()} of memory, "
        f"{platform.system()} {platform.release()}, Python {platform.python_version()}",
        f"- **What else ran**: load average {run.load[0]:.1f} at the start, {end[0]:.1f} at the end; "
        f"the busiest other processes at the start: {others}",
        f"- **Exit status**: {status}" + (" (every target met)" if status == 0 else
                                          " (a target missed or a check failed: the output says which)"),
        "",
        "```text",
        output.rstrip("\n"),
        "```",
        "",
    ])


def record(name: str, main: Callable[[], int | None]) -> int:
    """Run a benchmark's ``main``, and write its figure to ``docs/figures/<name>.md`` once it returns."""
    # The benchmark that ran, which may write more than one figure (``python -m bench.faults`` writes
    # ``faults`` and ``faults_recovery``).
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    ran = spec.name if spec is not None and spec.name.startswith("bench.") else f"bench.{name}"
    run = started(ran)
    tee = _Tee(sys.stdout)  # type: ignore[arg-type]
    sys.stdout = tee
    try:
        status = main() or 0
    finally:
        sys.stdout = tee.terminal
    FIGURES.mkdir(parents=True, exist_ok=True)
    (FIGURES / f"{name}.md").write_text(page(name, tee.kept.getvalue(), run, status))
    print(f"figure written to {FIGURES / f'{name}.md'}", file=sys.stderr)
    return status
