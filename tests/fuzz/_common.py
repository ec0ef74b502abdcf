"""What every fuzz target shares: the input/check contract and the round-trip check."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tensorlayout.errors import TensorLayoutError


class RoundTripError(AssertionError):
    """What parsed did not print and re-parse to an equal object, or a property failed."""


@dataclass(frozen=True)
class Target:
    """One entry point: ``make`` builds an input from a seeded generator, ``check`` runs it."""

    name: str
    make: Callable[[random.Random], Any]
    check: Callable[[Any], None]
    weight: float = 1.0  # relative cost: the default run gives heavy targets fewer inputs


def roundtrip(parse: Callable[[str], Any], value: Any, what: str) -> None:
    text = str(value)
    try:
        again = parse(text)
    except TensorLayoutError as err:
        raise RoundTripError(f"{what}: printed form {text!r} does not re-parse: {err}") from None
    if text == "KNOWN EMPTY" and getattr(again, "is_known_empty", False):
        return  # XLA prints every known-empty map so; the form keeps only that fact
    if again != value:
        raise RoundTripError(f"{what}: {text!r} re-parses to a different object {again!r}")
    if str(again) != text:
        raise RoundTripError(f"{what}: {text!r} re-prints as {str(again)!r}")


def parse_or_none(parse: Callable[[str], Any], text: str) -> Any:
    try:
        return parse(text)
    except TensorLayoutError:
        return None



def ok_or_library(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)``, or None when it refuses with a library error."""
    try:
        return fn(*args)
    except TensorLayoutError:
        return None
