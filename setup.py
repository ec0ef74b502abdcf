"""Builds the optional C extensions (everything else is in pyproject.toml): the copy kernels of
``tensorlayout.relayout`` and ``tensorlayout.cute``'s coordinate inner product. Without a working
C compiler the build goes on and the numpy/Python paths run."""

from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class OptimisingBuildExt(build_ext):
    """-O3 for GCC/Clang, so the sub-tile weaving loops are vectorised."""

    def build_extensions(self) -> None:
        if self.compiler.compiler_type == "unix":
            for ext in self.extensions:
                ext.extra_compile_args = ["-O3", "-std=c11", *ext.extra_compile_args]
        super().build_extensions()


def _headers(pattern: str) -> list[str]:
    """The relayout headers matching ``pattern`` (a C file's parts: a change rebuilds it)."""
    return sorted(str(p) for p in Path("src/tensorlayout/relayout").glob(pattern))


#: the headers both relayout kernels include
SHARED = ["src/tensorlayout/relayout/_pool.h", "src/tensorlayout/relayout/_task.h",
          "src/tensorlayout/relayout/_sse2.h", "src/tensorlayout/relayout/_isa.h"]


setup(
    ext_modules=[Extension("tensorlayout.relayout._kernel", ["src/tensorlayout/relayout/_kernel.c"],
                           depends=[*_headers("_kernel_*.h"), *SHARED], optional=True),
                 Extension("tensorlayout.relayout._pack", ["src/tensorlayout/relayout/_pack.c"],
                           depends=[*_headers("_pack_*.h"), *SHARED], optional=True),
                 Extension("tensorlayout.cute._dot", ["src/tensorlayout/cute/_dot.c"], optional=True)],
    cmdclass={"build_ext": OptimisingBuildExt},
)
