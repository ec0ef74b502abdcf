"""``tensorlayout show 'f32[3,5]{1,0:T(2,2)}'``: an XLA shape's offsets, memory order and sizes."""

from __future__ import annotations

import argparse
import json

from tensorlayout.xla import parse_shape
from tensorlayout.xla.show import describe, format_show


def run(args: argparse.Namespace) -> int:
    shape = parse_shape(args.target.strip())
    if args.json:
        print(json.dumps(describe(shape)))
    else:
        print(format_show(shape))
    return 0
