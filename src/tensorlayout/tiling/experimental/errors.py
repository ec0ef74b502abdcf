"""The errors of the experimental tiler, each with the ``absl::StatusCode`` XLA returns.

>>> TilingStatusError("kUnimplemented", "no").code
'kUnimplemented'
"""

from __future__ import annotations

from tensorlayout.errors import HloError

__all__ = ["TilingStatusError"]


class TilingStatusError(HloError):
    """XLA's non-OK ``absl::Status`` of a tiling step: ``code`` (``kUnimplemented``,
    ``kInvalidArgument``, ``kFailedPrecondition``, ``kInternal``) and its message."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
