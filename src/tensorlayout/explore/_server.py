"""The local server: the page at ``/`` and the answers at ``/api?q=...&view=...`` (JSON), on
127.0.0.1 only, with the standard library's ``http.server``."""

from __future__ import annotations

import json
from functools import lru_cache
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlsplit

from tensorlayout.cli import report
from tensorlayout.explore._api import answer, state_key
from tensorlayout.explore._page import EXAMPLES, page

__all__ = ["HOST", "make_server"]

#: The only address the server listens on.
HOST = "127.0.0.1"


@lru_cache(maxsize=64)
def _answer_json(key: str) -> bytes:
    """The answer of the state behind ``key`` as JSON bytes; switching back to a view is instant."""
    return json.dumps(answer(dict(json.loads(key))), separators=(",", ":")).encode()


class _Handler(BaseHTTPRequestHandler):
    """GET ``/`` (the page) and ``/api`` (one answer); anything else is 404."""

    server_version = "tensorlayout-explore"

    def _send(self, status: HTTPStatus, body: bytes, ctype: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        if url.path in ("/", "/index.html"):
            examples = getattr(self.server, "examples", EXAMPLES)
            self._send(HTTPStatus.OK, page(examples=examples).encode(), "text/html; charset=utf-8")
        elif url.path == "/api":
            state = dict(parse_qsl(url.query, keep_blank_values=True))
            try:
                body = _answer_json(state_key(state))
            except Exception as err:  # a bug: said on the page in one line, as the command line says it
                body = json.dumps({"ok": False, "error": report(err).removeprefix("tensorlayout: ")}).encode()
            self._send(HTTPStatus.OK, body, "application/json")
        else:
            self._send(HTTPStatus.NOT_FOUND, b"not found\n", "text/plain; charset=utf-8")

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: the command prints its URL and nothing per request."""


class _Server(ThreadingHTTPServer):
    """The server, with the inputs its page lists as examples."""

    daemon_threads = True
    examples: tuple[str, ...] = EXAMPLES


def make_server(port: int = 0, examples: tuple[str, ...] = EXAMPLES) -> ThreadingHTTPServer:
    """A server on ``127.0.0.1:port`` (0: a free port the system picks) whose page lists
    ``examples``; call ``serve_forever``.

    >>> s = make_server(0); s.server_address[0]; s.server_close()
    '127.0.0.1'
    """
    server = _Server((HOST, port), _Handler)
    server.examples = tuple(examples)
    return server
