"""Builds the optional C extensions (everything else is in pyproject.toml): the copy kernels of
``tensorlayout.relayout`` and ``tensorlayout.cute``'s coordinate inner product. Without a working
C compiler the build goes on and the numpy/Python paths run."""

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class OptimisingBuildExt(build_ext):
    """-O3 for GCC/Clang, so the sub-tile weaving loops are vectorised."""

    def build_extensions(self) -> None:
        if self.compiler.compiler_type == "unix":
            for ext in self.extensions:
                ext.extra_compile_args = ["-O3", "-std=c11", *ext.extra_compile_args]
        super().build_extensions()


setup(
    ext_modules=[Extension("tensorlayout.relayout._kernel", ["src/tensorlayout/relayout/_kernel.c"],
                           depends=[f"src/tensorlayout/relayout/_kernel_{part}.h"
                                    for part in ("plan", "loops", "tiles", "strips", "nest", "gather",
                                                 "tasks", "small")]
                           + ["src/tensorlayout/relayout/_pool.h", "src/tensorlayout/relayout/_task.h"],
                           optional=True),
                 Extension("tensorlayout.relayout._pack", ["src/tensorlayout/relayout/_pack.c"],
                           depends=["src/tensorlayout/relayout/_pool.h", "src/tensorlayout/relayout/_task.h"],
                           optional=True),
                 Extension("tensorlayout.cute._dot", ["src/tensorlayout/cute/_dot.c"], optional=True)],
    cmdclass={"build_ext": OptimisingBuildExt},
)
