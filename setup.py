"""The native core: Cython compiles each game's ``core`` module when it can.

Everything else is in pyproject.toml. The build is optional: where Cython or a C
compiler is missing, the install goes on without it, saying so in one line, and the
pure-Python engines solve (``dealer games`` says which core each game uses).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from setuptools import setup
from setuptools.command.build_ext import build_ext
from setuptools.errors import CCompilerError, CompileError, ExecError, LinkError, PlatformError

#: What a missing or failing C compiler raises.
NO_COMPILER = (CCompilerError, CompileError, ExecError, LinkError, PlatformError, OSError)

#: Every game's core: the ``core.py`` of each package under worker/engines/.
CORES = sorted(path.as_posix() for path in Path("worker/engines").glob("*/core.py"))


class OptionalBuildExt(build_ext):
    """build_ext that leaves out what does not build instead of failing the install."""

    def run(self) -> None:
        self.failed: list[str] = []
        try:
            super().run()
        except NO_COMPILER as error:  # no compiler at all
            self.failed.append(str(error))
        if self.failed:
            _skipped(self.failed[0] if len(self.failed) == 1 else f"{self.failed[0]}, and {len(self.failed) - 1} more")

    def build_extension(self, ext: Any) -> None:
        try:
            super().build_extension(ext)
        except NO_COMPILER as error:
            self.failed.append(f"{ext.name}: {str(error)[:120]}")


def _skipped(why: str) -> None:
    print(f"dealer: native core not built ({why}); the pure-Python engines will solve", file=sys.stderr)


def _extensions() -> list[Any]:
    try:
        from Cython.Build import cythonize
    except ImportError as error:
        _skipped(str(error))
        return []
    # out.py first: the cores cimport it (out.pxd).
    # The store's Bloom filter is built for every stored chunk, and dealer generate draws its cases: compiled
    # too (each runs as Python without).
    sources = ["worker/engines/out.py", *CORES, "worker/store/bloom.py", "worker/generating/core.py"]
    return cythonize(sources, language_level=3, quiet=True, build_dir="build",  # type: ignore[no-any-return]
                     compiler_directives={"boundscheck": False, "wraparound": False, "cdivision": True})


setup(ext_modules=_extensions(), cmdclass={"build_ext": OptionalBuildExt})
