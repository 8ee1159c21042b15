"""The optional compiled engine (arena/fast): built where a C compiler is, skipped where not.

Everything else is declared in pyproject.toml. Without a compiler (or without Cython)
the install still succeeds; ``--engine auto`` then plays every table in Python and
says so in one line (arena.fast).
"""

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

SKIPPED = "liars-arena: the compiled engine was not built ({}); the Python engine plays every table"


class OptionalBuildExt(build_ext):
    """A failed compile is one notice, not a failed install."""

    skipped = False

    def run(self):
        try:
            super().run()
        except Exception as exc:  # no compiler at all, or the copy of what failed to build
            self.skip(exc)

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except Exception as exc:
            self.skip(exc)

    def skip(self, exc: Exception) -> None:
        if not self.skipped:
            self.skipped = True
            print(SKIPPED.format(exc))


def compiled_engine() -> list[Extension]:
    try:
        from Cython.Build import cythonize
    except ImportError as exc:
        print(SKIPPED.format(exc))
        return []
    extension = Extension(
        "arena.fast._compiled",
        sources=["arena/fast/_compiled.pyx", "arena/fast/table.c"],
        include_dirs=["arena/fast"],
        extra_compile_args=["-O2"],
    )
    return cythonize([extension], quiet=True)


setup(ext_modules=compiled_engine(), cmdclass={"build_ext": OptionalBuildExt})
