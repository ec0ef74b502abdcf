"""`tensorlayout explore [LAYOUT...]`: the explorer page, served on 127.0.0.1 or saved as one file."""

from __future__ import annotations

import argparse
import sys
import webbrowser
from urllib.parse import quote

from tensorlayout import explore
from tensorlayout.cli._commands import HELP
from tensorlayout.cli._io import UsageError, write_output

__all__ = ["DESCRIPTION", "register", "run"]

DESCRIPTION = """\
The explorer: one page with an input box that reads any notation tensorlayout reads (XLA shape
text, CuTe layouts, swizzled, scaled-basis and TLA ones included, Triton encodings and printed
linear layouts, Gluon constructors such as to_linear_layout(BlockedLayout(...), [16,16]),
indexing maps, MMA and copy atoms by CuTe's name, make_tiled_mma(ATOM, (2,2,1))) and the algebra
operations (composition, complement, inverses, divides, products, coalesce) and shows its views:
the offset grid and memory strip, the other notations' text (or why there is none), thread and
value ownership, shared-memory banks and global-memory sectors for an access, XLA padding; an
operation's inputs and result side by side with linked colours, and its derivation step by
step. A bad input gets a one-line error under the box. The whole state is in the address, so a
link reproduces the view; the window and zoom fields handle large layouts.

Without -o it serves the page on http://127.0.0.1:PORT/ (--port 0, the default, picks a free
port), prints the address and serves until Ctrl-C; it opens a browser only with --open. The
LAYOUTs given are listed on the page as examples. With -o PAGE.html it writes the page for the
LAYOUTs as one self-contained file (no network access) with every view precomputed, to open
from disk.

examples:
  tensorlayout explore
  tensorlayout explore --port 8765 --open
  tensorlayout explore 'Sw<3,3,3> o _0 o (8,64):(64,1)' \\
      'make_tiled_mma(SM80_16x8x16_F16F16F16F16_TN, (2,2,1))' -o page.html
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("explore", help=HELP["explore"],
                       description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("layouts", nargs="*", metavar="LAYOUT",
                   help="layouts to list on the page (with -o: the layouts the saved page shows)")
    p.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default 0: a free one)")
    p.add_argument("--open", action="store_true", help="open the page in a browser")
    p.add_argument("-o", "--output", metavar="PAGE",
                   help="write the page for the LAYOUTs to PAGE (an .html file, '-' for stdout) "
                        "instead of serving")
    p.add_argument("--shape", metavar="A,B", help="the tensor shape of Triton encodings given without one")
    p.add_argument("--dtype", help="element type for banks and sectors (default f16)")
    p.set_defaults(func=run)


def _settings(args: argparse.Namespace) -> dict[str, str]:
    return {k: v for k, v in (("shape", args.shape), ("dtype", args.dtype)) if v}


def _save(args: argparse.Namespace) -> int:
    if not args.layouts:
        raise UsageError("-o writes the page of the LAYOUTs given: name at least one")
    if args.open:
        raise UsageError("--open is for the served page; open the saved file yourself")
    write_output(args.output, explore.saved_page(args.layouts, _settings(args)))
    return 0


def run(args: argparse.Namespace) -> int:
    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port takes 0..65535, got {args.port}")
    shape = explore.shape_of(args.shape or "")
    for text in args.layouts:  # a bad one fails now, in one line, not on the page later
        explore.read(text, shape)
    if args.output:
        return _save(args)
    server = explore.make_server(args.port, examples=tuple(args.layouts) or explore.EXAMPLES)
    url = f"http://{explore.HOST}:{server.server_address[1]}/"
    print(f"tensorlayout explore: serving {url} (Ctrl-C stops it)", flush=True)
    for text in args.layouts:
        print(f"  {url}#q={quote(text, safe='')}", flush=True)
    if args.open:
        webbrowser.open(url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("", file=sys.stderr)
    finally:
        server.server_close()
    return 0
