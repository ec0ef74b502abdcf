"""Typed values of the HLO instruction attributes that the indexing analysis reads.

Each parser takes the raw attribute text (what follows ``name=``) and returns a typed value;
attributes without a parser keep their raw text. Errors are :class:`ParseError` with offsets
relative to the attribute text (the module parser shifts them to the module).

>>> parse_attribute("window", "{size=3x3 stride=2x2 pad=0_1x0_1}").dimensions[1]
WindowDimension(size=3, stride=2, padding_low=0, padding_high=1, window_dilation=1, base_dilation=1, \
window_reversal=False)
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tensorlayout._cursor import Cursor, read_braced
from tensorlayout.core.intmath import literal_in_range
from tensorlayout.errors import ParseError, expect_text
from tensorlayout.hlo._scan import scan_value, string_or_json_dict_end
from tensorlayout.hlo.sharding import (
    attribute_value_end,
    parse_frontend_attributes,
    parse_replica_groups,
    parse_sharding,
)

__all__ = [
    "COMPUTATION_ATTRIBUTES",
    "COMPUTATION_LIST_ATTRIBUTES",
    "MODULE_ATTRIBUTES",
    "ConvolutionDimensionNumbers",
    "PaddingDimension",
    "SliceDimension",
    "Window",
    "WindowDimension",
    "common_metadata_end",
    "parse_attribute",
    "parse_literal",
    "token_end",
    "value_end",
]


@dataclass(frozen=True, slots=True)
class SliceDimension:
    """One ``[start:limit:stride]`` entry of ``slice={...}``."""

    start: int
    limit: int
    stride: int = 1


@dataclass(frozen=True, slots=True)
class PaddingDimension:
    """One ``low_high[_interior]`` entry of ``padding=...``."""

    low: int
    high: int
    interior: int = 0


@dataclass(frozen=True, slots=True)
class WindowDimension:
    """One spatial dimension of ``window={...}`` (``rhs_dilate`` is the window dilation)."""

    size: int = 1
    stride: int = 1
    padding_low: int = 0
    padding_high: int = 0
    window_dilation: int = 1
    base_dilation: int = 1
    window_reversal: bool = False


@dataclass(frozen=True, slots=True)
class Window:
    """``window={size=... stride=... pad=... lhs_dilate=... rhs_dilate=... window_reversal=...}``."""

    dimensions: tuple[WindowDimension, ...]


@dataclass(frozen=True, slots=True)
class ConvolutionDimensionNumbers:
    """``dim_labels=b01f_01io->b01f``: which dimension plays which role in each operand.

    >>> dn = parse_attribute("dim_labels", "b01f_01io->b01f")
    >>> dn.input_feature_dimension, dn.kernel_spatial_dimensions, dn.output_spatial_dimensions
    (3, (0, 1), (1, 2))
    """

    input_batch_dimension: int
    input_feature_dimension: int
    input_spatial_dimensions: tuple[int, ...]
    kernel_input_feature_dimension: int
    kernel_output_feature_dimension: int
    kernel_spatial_dimensions: tuple[int, ...]
    output_batch_dimension: int
    output_feature_dimension: int
    output_spatial_dimensions: tuple[int, ...]
    text: str


#: The attributes XLA's parser allows after ``HloModule name`` (jaxlib's own list).
MODULE_ATTRIBUTES = frozenset({
    "alias_passthrough_params", "allow_spmd_sharding_propagation_to_output",
    "allow_spmd_sharding_propagation_to_parameters", "buffer_donor", "entry_computation_layout",
    "frontend_attributes", "input_output_alias", "is_scheduled", "num_partitions", "origin_recovery_table",
    "replica_count",
})

#: Attributes naming one called computation.
COMPUTATION_ATTRIBUTES = frozenset({
    "to_apply", "calls", "body", "condition", "true_computation", "false_computation",
    "async_execution_thread_computation", "select", "scatter",
})
#: Attributes naming a list of called computations.
COMPUTATION_LIST_ATTRIBUTES = frozenset({"branch_computations", "called_computations"})

_INT_ATTRS = frozenset({
    "feature_group_count", "batch_group_count", "index", "iota_dimension", "exponent_bits",
    "mantissa_bits", "index_vector_dim", "num_carries", "channel_id", "all_reduce_id",
    "cross_program_prefetch_index", "replica_count", "num_partitions", "k",
    "split_dimension", "concat_dimension", "split_count", "scan_dimension",
})
_INT_LIST_ATTRS = frozenset({
    "dimensions", "lhs_batch_dims", "lhs_contracting_dims", "rhs_batch_dims", "rhs_contracting_dims",
    "offset_dims", "collapsed_slice_dims", "start_index_map", "operand_batching_dims",
    "start_indices_batching_dims", "slice_sizes", "dynamic_slice_sizes", "update_window_dims",
    "inserted_window_dims", "scatter_dims_to_operand_dims", "input_batching_dims",
    "scatter_indices_batching_dims", "fft_length", "lhs_ragged_dims", "rhs_group_dims",
})
_BOOL_ATTRS = frozenset({
    "indices_are_sorted", "unique_indices", "is_stable", "left_side", "lower", "unit_diagonal",
    "constrain_layout", "use_global_device_ids", "is_scheduled", "is_cross_program_prefetch",
    "reverse", "is_host_transfer", "has_side_effect", "largest",
})
#: Attributes whose text is kept as is: they are not needed by the analysis.
SKIPPED = frozenset({
    "frontend_attributes", "backend_config", "sharding", "control-predecessors",
    "origin", "statistics", "schedule", "result_accuracy", "output_to_operand_aliasing",
    "operand_layout_constraints", "custom_call_schedule", "api_version", "precision_config",
    "operand_precision", "algorithm", "replica_groups", "source_target_pairs",
})

_INT = re.compile(r"-?[0-9]+")
_INT_LIST = re.compile(r"\{\s*(?:-?[0-9]+\s*(?:,\s*-?[0-9]+\s*)*)?\}\Z")
_NAME = re.compile(r"%?([A-Za-z_][\w.\-]*)")
_LABEL = re.compile(r"[A-Za-z0-9?]+")


def _error(text: str, pos: int, expected: str) -> ParseError:
    return ParseError(text, pos, expected)


def _int_list(text: str) -> tuple[int, ...]:
    if _INT_LIST.match(text) and max(map(len, text[1:-1].replace(",", " ").split()), default=0) <= 20:
        return tuple(int(x) for x in text[1:-1].replace(",", " ").split())  # else the checked path
    cur = Cursor(text, comments=True)
    values = read_braced(cur, Cursor.integer, "'{' to start a list of integers",
                         "',' or '}' in a list of integers")
    cur.expect_end("end of the integer list")
    return tuple(values)


def _int(text: str) -> int:
    m = _INT.fullmatch(text.strip())
    if not m or len(m.group()) > 21:
        raise _error(text, 0, "an integer of at most 20 digits")
    return int(m.group())


def _bool(text: str) -> bool:
    if text == "true":
        return True
    if text == "false":
        return False
    raise _error(text, 0, "true or false")


def _bool_list(text: str) -> tuple[bool, ...]:
    """``{true,false}`` (or one bare ``true``/``false``), as XLA reads a braced bool list.

    >>> _bool_list("{true, false}"), _bool_list("true"), _bool_list("{ }")
    ((True, False), (True,), ())
    """
    if not text.startswith("{"):
        return (_bool(text),)
    inner = text[1:-1] if text.endswith("}") else "?"
    return tuple(_bool(item.strip()) for item in inner.split(",")) if inner.strip() else ()


# metadata={op_name="..." source_line=3, ...}: XLA's keys and value kinds, each key once
_META_KINDS = {**dict.fromkeys(("op_type", "op_name", "source_file", "deduplicated_name", "metadata_payload",
                                "scheduling_name"), 2),
               **dict.fromkeys(("source_line", "source_end_line", "source_column", "source_end_column",
                                "stack_frame_id"), 3),
               "profile_type": 4}
_META_TOKEN = re.compile(
    r"""(?:\s+|/\*.*?\*/|//[^\n]*)*(?:([A-Za-z_][\w.\-]*)=|("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')"""
    r"|(-?[0-9]+)(?![0-9.eEx_])|(\{[^{}]*\})|(,)|(\}))", re.S | re.A)


# the common forms, keys in XLA's print order, each at most once: no token loop needed
# (strings "unrolled": runs of plain characters between escapes, one regex step per run)
_META_STRING = r'"[^"\\]*(?:\\.[^"\\]*)*"'
_META_FAST = re.compile(
    r"\{(?:op_type=" + _META_STRING + " ?)?(?:op_name=" + _META_STRING + " ?)?(?:source_file=" + _META_STRING
    + r" ?)?(?:source_line=-?[0-9]{1,9} ?)?(?:stack_frame_id=-?[0-9]{1,9})?\}", re.A)
#: ``_META_FAST`` for strings without escapes (one-character class, possessive: ~40% faster);
#: where its match holds no backslash, the two match the same text.
_META_PLAIN = re.compile(_META_FAST.pattern.replace(_META_STRING, '"[^"]*+"'), re.A)


def common_metadata_end(text: str, at: int) -> int | None:
    """Where ``metadata={...}`` starting at ``at`` ends when it has the common form (keys in XLA's
    print order, each once), else None. Its value is then its text, as :func:`parse_attribute`
    gives it, and it ends where :func:`value_end` says.

    >>> line = 'metadata={op_name="a" source_line=3}, x=1'
    >>> line[9:common_metadata_end(line, 9)]
    '{op_name="a" source_line=3}'
    """
    m = _META_PLAIN.match(text, at)
    if m is not None and text.find("\\", at, m.end()) < 0:
        return m.end()  # no backslash in it: the escape-aware pattern matches just this text
    m = _META_FAST.match(text, at)
    return m.end() if m else None


def _metadata(text: str) -> str:
    """``metadata={...}`` checked as XLA reads it: known keys, each once, each value of its kind,
    each item after at most one ','. The text is kept (the analysis reads none of it).

    >>> _metadata('{op_name="a/b" source_line=3}')
    '{op_name="a/b" source_line=3}'
    """
    if _META_FAST.fullmatch(text):
        return text
    if not text.startswith("{"):
        raise _error(text, 0, "'{' to start the metadata")
    pos, seen, comma = 1, set(), False
    while True:
        m = _META_TOKEN.match(text, pos)
        if m is None or m.group(2) or m.group(3) or m.group(4) or (comma and not m.group(1)):
            raise _error(text, pos, "a metadata key (" + ", ".join(sorted(_META_KINDS)) + ")"
                         + ("" if comma else " or '}'"))
        pos = m.end()
        if m.group(6):
            if pos != len(text):
                raise _error(text, pos, "the end of the metadata")
            return text
        comma = bool(m.group(5))
        if comma:
            continue
        key, kind = m.group(1), _META_KINDS.get(m.group(1))
        if kind is None or key in seen:
            raise _error(text, m.start(1), f"a metadata key XLA knows, once (not {key!r})")
        seen.add(key)
        v = _META_TOKEN.match(text, pos)
        if v is None or v.group(kind) is None \
                or (kind == 3 and not literal_in_range(v.group(3), -(2**31), 2**31)):
            raise _error(text, pos, f"the value of metadata {key} (" +
                         ("a string", "a 32-bit integer", "a list of integers")[kind - 2] + ")")
        if kind == 4:
            _int_list(v.group(4))
        pos = v.end()


def _one_of(choices: tuple[str, ...]) -> Callable[[str], str]:
    """A parser for an attribute XLA reads as one of ``choices`` (a comparison direction...)."""
    def parse(text: str) -> str:
        if text not in choices:
            raise _error(text, 0, "one of " + ", ".join(choices))
        return text
    return parse


def _name(text: str) -> str:
    m = _NAME.fullmatch(text.strip())
    if not m:
        raise _error(text, 0, "a computation name")
    return m.group(1)


def _read_name(cur: Cursor) -> str:
    m = cur.match(_NAME)
    if not m:
        raise cur.error("a computation name")
    return m.group(1)


def _name_list(text: str) -> tuple[str, ...]:
    cur = Cursor(text, comments=True)
    names = read_braced(cur, _read_name, "'{' to start a list of computations",
                        "',' or '}' in a list of computations")
    cur.expect_end("end of the computation list")
    return tuple(names)


def _string(text: str) -> str:
    if len(text) >= 2 and text[0] == '"' and text[-1] == '"':
        return re.sub(r"\\(.)", r"\1", text[1:-1])
    return text


# slice := '{' ['[' INT ':' INT [':' INT] ']' (',' ...)*] '}'
def _slice(text: str) -> tuple[SliceDimension, ...]:
    cur = Cursor(text)
    dims = read_braced(cur, _slice_dimension, "'{' to start a slice", "',' or '}' in a slice")
    cur.expect_end("end of the slice")
    return tuple(dims)


def _slice_dimension(cur: Cursor) -> SliceDimension:
    """``[start:limit]`` or ``[start:limit:stride]``."""
    cur.expect("[", "'[' to start a slice dimension")
    start = cur.integer("a slice start")
    cur.expect(":", "':' after the slice start")
    limit = cur.integer("a slice limit")
    stride = cur.integer("a slice stride") if cur.accept(":") else 1
    cur.expect("]", "']' to end a slice dimension")
    return SliceDimension(start, limit, stride)


def _adjacent_int(cur: Cursor, what: str) -> int:
    """An integer right at the cursor: inside one ``1_2x3_4`` token nothing may come between."""
    m = _INT.match(cur.text, cur.pos)
    if not m:
        raise cur.error(what)
    return cur.integer(what)


def _x_separated(cur: Cursor, parts: int, what: str) -> list[tuple[int, ...]]:
    """Read ``a_b_cxd_exf`` groups of 1..``parts`` integers joined by ``_``, separated by ``x``.

    The groups form one token of XLA's lexer: space or a comment may come before it, not inside.
    """
    groups: list[tuple[int, ...]] = []
    group = [cur.integer(what)]
    while True:
        while len(group) < parts and cur.text.startswith("_", cur.pos):
            cur.pos += 1
            group.append(_adjacent_int(cur, what))
        groups.append(tuple(group))
        if not cur.text.startswith("x", cur.pos):
            return groups
        cur.pos += 1
        group = [_adjacent_int(cur, what)]


def _padding(text: str) -> tuple[PaddingDimension, ...]:
    cur = Cursor(text)
    if cur.at_end():
        return ()
    out = []
    for group in _x_separated(cur, 3, "low_high[_interior] padding"):
        if len(group) < 2:
            raise _error(text, cur.pos, "'_' between padding low and high")
        out.append(PaddingDimension(*group))
    cur.expect_end("end of the padding")
    return tuple(out)


_WINDOW_KEYS = ("size", "stride", "pad", "lhs_dilate", "rhs_dilate", "window_reversal", "rhs_reversal")


# window := '{' (key '=' groups)* '}'
def _window(text: str) -> Window:
    """Comments may stand between the window's tokens (``pad=/*c*/1_1``), as XLA's lexer allows."""
    cur = Cursor(text, comments=True)
    cur.expect("{", "'{' to start a window")
    fields: dict[str, list[tuple[int, ...]]] = {}
    while not cur.accept("}"):
        key_at = cur.pos
        key = cur.identifier("a window field (size, stride, pad, lhs_dilate, rhs_dilate, window_reversal)")
        if key not in _WINDOW_KEYS or key in fields:
            raise _error(text, key_at, "a window field (size, stride, pad, lhs_dilate, rhs_dilate, "
                         "window_reversal), each once")
        cur.expect("=", "'=' after a window field")
        cur.skip()
        fields[key] = _x_separated(cur, 2 if key == "pad" else 1, f"window {key}")
    cur.expect_end("end of the window")
    rank = max((len(v) for v in fields.values()), default=0)
    for key, groups in fields.items():
        if len(groups) != rank:
            raise _error(text, 0, f"{rank} entries in window {key}")
        if key == "pad" and any(len(g) != 2 for g in groups):
            raise _error(text, 0, "low_high window padding")
    dims = []
    for i in range(rank):
        def get(key: str, default: int, i: int = i) -> int:
            return fields[key][i][0] if key in fields else default
        pad = fields["pad"][i] if "pad" in fields else (0, 0)
        dims.append(WindowDimension(get("size", 1), get("stride", 1), pad[0], pad[1],
                                    get("rhs_dilate", 1), get("lhs_dilate", 1),
                                    bool(get("window_reversal", 0) or get("rhs_reversal", 0))))
    return Window(tuple(dims))


# XLA's lexer reads dim_labels as one token of this form (`?` marks an unlabelled dimension).
_DIM_LABELS = re.compile(r"([0-9bf?]{2,})_([0-9io?]{2,})->([0-9bf?]{2,})")


def _labels(text: str, at: int, part: str, roles: str) -> tuple[list[int], list[int]]:
    """One ``dim_labels`` part as XLA reads it: where each role letter is (0 if absent, XLA's
    default) and where each spatial digit is (-1 for a digit that is absent or past the count
    of spatial labels: XLA leaves that slot unset). The analysis refuses such labels later.
    """
    named = [c for c in part if c != "?"]
    if len(set(named)) != len(named):
        raise _error(text, at, f"each label of {part!r} once")
    role_dims = [0] * len(roles)
    spatial = [-1] * sum(c not in roles for c in named)
    for pos, ch in enumerate(part):
        if ch in roles:
            role_dims[roles.index(ch)] = pos
        elif ch != "?":
            if int(ch) >= len(part):
                raise _error(text, at + pos, f"a spatial digit below {len(part)}, the length of {part!r}")
            if int(ch) < len(spatial):
                spatial[int(ch)] = pos
    return role_dims, spatial


def _dim_labels(text: str) -> ConvolutionDimensionNumbers:
    m = _DIM_LABELS.fullmatch(text)
    if not m:
        raise _error(text, 0, "convolution dim_labels like b01f_01io->b01f")
    (ib, if_), ins = _labels(text, m.start(1), m.group(1), "bf")
    (ki, ko), ks = _labels(text, m.start(2), m.group(2), "io")
    (ob, of), outs = _labels(text, m.start(3), m.group(3), "bf")
    if not len(ins) == len(ks) == len(outs):
        raise _error(text, 0, "the same number of spatial dimensions in input, kernel and output")
    return ConvolutionDimensionNumbers(ib, if_, tuple(ins), ki, ko, tuple(ks), ob, of, tuple(outs), text)


_PARSERS: dict[str, Callable[[str], Any]] = {
    "slice": _slice,
    "padding": _padding,
    "window": _window,
    "dim_labels": _dim_labels,
    "custom_call_target": _string,
    "metadata": _metadata,
    "direction": _one_of(("EQ", "NE", "GE", "GT", "LE", "LT")),
    "kind": _one_of(("kLoop", "kInput", "kOutput", "kCustom")),
    "allow_spmd_sharding_propagation_to_parameters": _bool_list,
    "allow_spmd_sharding_propagation_to_output": _bool_list,
    **{k: _int for k in _INT_ATTRS},
    **{k: _int_list for k in _INT_LIST_ATTRS},
    **{k: _bool for k in _BOOL_ATTRS},
    **{k: _name for k in COMPUTATION_ATTRIBUTES},
    **{k: _name_list for k in COMPUTATION_LIST_ATTRIBUTES},
    "replica_groups": parse_replica_groups,
    "sharding": parse_sharding,
    "frontend_attributes": parse_frontend_attributes,
}

_CACHE: dict[tuple[str, str], Any] = {}

# Values XLA's lexer reads as one token, by kind: the value ends where the token does, so an
# instruction glued to it (`index=0constant.13 = ...`) starts right after.
_INT_TOKEN = re.compile(r"-?[0-9]+")
_IDENT_TOKEN = re.compile(r"[A-Za-z_][\w.\-]*", re.A)
_NAME_TOKEN = re.compile(r"%?[A-Za-z_][\w.\-]*", re.A)
_TOKENS = {**dict.fromkeys(_INT_ATTRS, _INT_TOKEN), **dict.fromkeys(COMPUTATION_ATTRIBUTES, _NAME_TOKEN),
           **dict.fromkeys(_BOOL_ATTRS | {"direction", "kind"}, _IDENT_TOKEN), "dim_labels": _DIM_LABELS}


def token_end(name: str, text: str, pos: int) -> int | None:
    """Where the one-token value of attribute ``name`` at ``pos`` ends, as XLA's lexer ends it
    (None if ``name`` takes no one-token value, or none starts at ``pos``).

    >>> line = "index=0constant.13 = s32[] constant(1)"
    >>> line[6:token_end("index", line, 6)]
    '0'
    """
    token = _TOKENS.get(name)
    m = token.match(text, pos) if token is not None else None
    return m.end() if m else None


def parse_attribute(name: str, text: str) -> Any:
    """The typed value of attribute ``name`` given its raw text (raw text if not typed).

    >>> parse_attribute("slice", "{[0:8:2], [1:3]}")
    (SliceDimension(start=0, limit=8, stride=2), SliceDimension(start=1, limit=3, stride=1))
    >>> parse_attribute("padding", "0_1_2x3_4")
    (PaddingDimension(low=0, high=1, interior=2), PaddingDimension(low=3, high=4, interior=0))
    """
    key = (expect_text(name, "an attribute name"), expect_text(text, "attribute text"))
    try:
        return _CACHE[key]
    except KeyError:
        pass
    parser = _PARSERS.get(name)
    if name == "calls" and text.startswith("{"):
        parser = _name_list
    value = text if parser is None else parser(text)
    if len(_CACHE) < 65536 and name != "metadata":  # metadata texts rarely repeat
        _CACHE[key] = value
    return value


# -- literals ------------------------------------------------------------------------------

_LITERAL_TOKEN = re.compile(r"\s*(?:([{}(),])|(-?(?:inf|nan)|true|false|[-+0-9.eE]+|0x[0-9a-fA-F]+))")


def _scalar(token: str) -> int | float | bool:
    if token in ("true", "false"):
        return token == "true"
    if token.startswith("0x"):
        return int(token, 16)
    try:
        return int(token)
    except ValueError:
        return float(token)


def parse_literal(text: str) -> Any:
    """A constant's payload as Python values: a scalar, or nested tuples for arrays and tuples.

    Returns ``None`` for elided payloads (``{...}``) and payloads it cannot read.

    >>> parse_literal("{ {1, 2}, {3, 4} }"), parse_literal("-inf"), parse_literal("{...}")
    (((1, 2), (3, 4)), -inf, None)
    """
    expect_text(text, "literal text")
    pos = 0
    stack: list[list[Any]] = [[]]
    closers: list[str] = []
    n = len(text)
    try:
        while True:
            m = _LITERAL_TOKEN.match(text, pos)
            if not m:
                break
            pos = m.end()
            punct, scalar = m.group(1), m.group(2)
            if scalar is not None:
                stack[-1].append(_scalar(scalar))
            elif punct in "{(":
                stack.append([])
                closers.append("}" if punct == "{" else ")")
            elif punct in "})":
                if not closers or closers.pop() != punct:
                    return None
                done = tuple(stack.pop())
                stack[-1].append(done)
        if text[pos:].strip() or closers or len(stack[0]) != 1 or pos > n:
            return None
    except ValueError:
        return None
    return stack[0][0]



def value_end(key: str, text: str, at: int) -> int:
    """Where the value of attribute ``key`` starting at ``at`` ends, as XLA's lexer reads it
    (``backend_config`` is a string or a JSON dict, where only braces nest; a one-token value
    ends with its token).

    >>> value_end("backend_config", 'backend_config={"a":[1}, x=1', 15)
    23
    """
    if key == "backend_config":
        return string_or_json_dict_end(text, at)
    end = token_end(key, text, at)
    if end is not None:
        return end
    return attribute_value_end(key, text, at, scan_value(text, at))
