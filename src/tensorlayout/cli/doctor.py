"""``tensorlayout doctor TARGET``: each buffer that pads on TPU, why, and the fix as JAX code.

TARGET is an HLO module file or an ``--xla_dump_to`` directory (its optimized modules; a CPU
or GPU module gets the TPU default layouts of ``--tpu GEN``). For each entry parameter,
output and temporary whose tiles pad (in that order: what the caller controls first): the
dimension and tile that pad it, and fixes with the bytes they save: a size change ("round
dim 1 from 125 to 128"), a layout as JAX takes it (``Format(Layout(major_to_minor=...))``), a
transpose, a reshape. These are estimates under the TPU tiling rules; to have them checked by
the compiler, call ``tensorlayout.jax.doctor.doctor(fn, *args, tpu=GEN)`` (needs libtpu),
which recompiles the function deviceless with each size change and prints
``memory_analysis()`` before and after beside the estimate.
"""

from __future__ import annotations

import argparse
import json
from functools import partial

from tensorlayout.cli._commands import HELP
from tensorlayout.cli.dump import add_module_arguments, job_count, process_modules
from tensorlayout.hlo.model import HloModule
from tensorlayout.jax.doctor import Diagnosis, diagnose
from tensorlayout.xla.tpu import GENERATIONS, canonical_generation


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("doctor", help=HELP["doctor"],
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_module_arguments(p)
    p.add_argument("--tpu", metavar="GEN", default=None,
                   help=f"TPU generation whose rules apply ({', '.join(GENERATIONS)}; default v5e)")
    p.add_argument("--top", type=int, default=10, metavar="N", help="buffers per module (default 10)")
    p.add_argument("--fixes", type=int, default=3, metavar="N", help="fixes per buffer (default 3)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)


def module_diagnosis(generation: str, module: HloModule) -> Diagnosis:
    """One job of a dump directory."""
    return diagnose(module, generation=generation)


def run(args: argparse.Namespace) -> int:
    generation = canonical_generation(args.tpu)
    found, failed = process_modules(args.module, partial(module_diagnosis, generation),
                                    wanted=args.module_name, stage=args.stage, jobs=job_count(args.jobs))
    if args.json:
        print(json.dumps({"modules": [{"file": label, **d.as_dict()} for label, d in found]}, indent=1))
    else:
        print("\n".join(d.text(args.top, args.fixes) for _, d in found))
    return 2 if failed else 0
