"""One host-only C++ program against CuTe's headers (tensor, atoms, TMA traits) for the GPU tests:
each statement prints one answer line; answers are cached by source in a temporary folder."""

from __future__ import annotations

import hashlib
import json
import subprocess
import tempfile
from pathlib import Path

from tests.cute import cpp_oracle

HEADERS = ("cute/tensor.hpp", "cute/atom/mma_atom.hpp", "cute/atom/copy_atom.hpp",
           "cute/atom/copy_traits_sm90_tma.hpp")


def run(lines: list[str]) -> list[str]:
    """Compile ``lines`` (statements of ``main``, ``using namespace cute``) and return the output lines."""
    head = ["#include <cstdio>", *(f"#include <{h}>" for h in HEADERS), "using namespace cute;",
            "int main() {"]
    src = "\n".join(head + lines + ["return 0;", "}", ""])
    cache = Path(tempfile.gettempdir()) / "tensorlayout-gpu-oracle"
    cache.mkdir(exist_ok=True)
    key = cache / (hashlib.sha256((src + str(cpp_oracle.cute_include())).encode()).hexdigest()[:20] + ".json")
    if key.exists():
        return json.loads(key.read_text())  # type: ignore[no-any-return]
    with tempfile.TemporaryDirectory(dir=cache) as tmp:
        (Path(tmp) / "p.cpp").write_text(src)
        cmd = [str(cpp_oracle.compiler()), "-std=c++17", "-O0", "-w", f"-I{cpp_oracle.cute_include()}"]
        cmd += [f"-I{d}" for d in cpp_oracle.CUDA_INCLUDES if Path(d).exists()]
        proc = subprocess.run([*cmd, str(Path(tmp) / "p.cpp"), "-o", str(Path(tmp) / "p")],
                              capture_output=True, text=True, timeout=900)
        if proc.returncode:
            raise RuntimeError("the CuTe program does not compile:\n" + proc.stderr[-3000:])
        out = subprocess.run([str(Path(tmp) / "p")], capture_output=True, text=True, check=True).stdout
    key.write_text(json.dumps(out.splitlines()))
    return out.splitlines()
