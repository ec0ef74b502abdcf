"""Arrays of other frameworks (issue 30 item 3): ``to_physical`` / ``from_physical`` / ``relayout``
take any array that exports DLPack or the buffer protocol, read in place, and write into a
caller's ``out`` of any of them (returned as given), with the same bytes as from numpy arrays.
Tested with numpy's own DLPack export (wrapped so that only DLPack is offered), the buffer
protocol (``array.array``), jax on CPU, and torch where it is importable."""

from __future__ import annotations

import array

import numpy as np
import pytest

from tensorlayout.errors import LayoutError
from tensorlayout.relayout import as_target, from_physical, relayout, to_physical
from tensorlayout.relayout._buffers import as_array

LAYOUTS = ["f32[30,260]{0,1:T(8,128)}", "bf16[33,300]{1,0:T(8,128)(2,1)}", "s8[40,129]{0,1:T(8,128)(4,1)}",
           "s4[20,300]{1,0:T(8,128)(8,1)E(4)}", "f32[3,5]{1,0:T(2,2)}"]
DTYPES = {"f32": np.float32, "bf16": np.uint16, "s8": np.int8, "s4": np.int8}
CODES = {np.float32: "f", np.uint16: "H", np.int8: "b", np.uint8: "B"}


class Exported:
    """An array that offers only DLPack (as a framework's array does), over numpy memory."""

    def __init__(self, a: np.ndarray) -> None:
        self.a = a

    def __dlpack__(self, **kwargs: object) -> object:
        return self.a.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self.a.__dlpack_device__()


def _case(text: str) -> tuple[object, np.ndarray, np.ndarray]:
    t = as_target(text)
    dtype = DTYPES[text[:text.index("[")]]
    high = 8 if t.packed_bits else 100
    low = -high if t.signed else 0
    data = np.random.default_rng(len(text)).integers(low, high, t.logical_shape).astype(dtype)
    return t, data, to_physical(data, t, pad_value=0)


def _buffer_array(a: np.ndarray) -> array.array:
    """An ``array.array`` with a's items (the buffer protocol, 1-D)."""
    out = array.array(CODES[a.dtype.type])
    out.frombytes(np.ascontiguousarray(a).tobytes())
    return out


@pytest.mark.parametrize("text", LAYOUTS)
def test_dlpack_arrays_in_and_out(text: str) -> None:
    t, data, buf = _case(text)
    got = np.zeros_like(buf)
    out = Exported(got)
    assert to_physical(Exported(data), t, out=out) is out
    assert np.array_equal(got, buf)
    back = np.zeros_like(from_physical(buf, t))
    out2 = Exported(back)
    assert from_physical(Exported(buf), t, out=out2) is out2
    assert np.array_equal(back, from_physical(buf, t))
    assert np.array_equal(relayout(Exported(buf), t, None), from_physical(buf, t))


@pytest.mark.parametrize("text", [x for x in LAYOUTS if "E(" not in x])
def test_buffer_protocol_arrays_in_and_out(text: str) -> None:
    t, data, buf = _case(text)
    out = _buffer_array(np.zeros_like(buf))
    assert to_physical(memoryview(data), t, out=out) is out
    assert np.array_equal(np.frombuffer(out, buf.dtype), buf)
    back = np.zeros_like(data)
    assert from_physical(_buffer_array(buf), t, out=memoryview(back)) is not None
    assert np.array_equal(back, data)


def test_the_input_is_read_in_place() -> None:
    a = np.arange(12, dtype=np.int16)
    assert np.shares_memory(as_array(Exported(a)), a) and np.shares_memory(as_array(memoryview(a)), a)
    assert as_array(a) is a


@pytest.mark.parametrize("out", [b"\x00" * 64, "text", 3, Exported(np.zeros(16, np.float32)).a[::2]])
def test_an_out_that_cannot_be_written_is_a_typed_error(out: object) -> None:
    t, data, _ = _case("f32[3,5]{1,0:T(2,2)}")
    with pytest.raises(LayoutError, match=r"out (must be|\(bytes\) is read-only)"):
        to_physical(data, t, out=out)


def test_jax_arrays_on_cpu() -> None:
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    with jax.default_device(jax.devices("cpu")[0]):
        for text in LAYOUTS:
            t, data, buf = _case(text)
            x, b = jnp.asarray(data), jnp.asarray(buf)
            assert np.array_equal(to_physical(x, t), buf)
            assert np.array_equal(from_physical(b, t), from_physical(buf, t))
        with pytest.raises(LayoutError, match=r"out \(.*\) is read-only|out must be"):
            to_physical(data, t, out=jnp.zeros(buf.shape, buf.dtype))  # jax arrays are immutable


def test_torch_tensors_where_torch_is_installed() -> None:
    torch = pytest.importorskip("torch")
    for text in LAYOUTS:
        t, data, buf = _case(text)
        kind = torch.int16 if buf.dtype == np.uint16 else getattr(torch, str(buf.dtype))
        out = torch.zeros(buf.shape, dtype=kind)
        assert to_physical(torch.from_numpy(data), t, out=out) is out
        assert np.array_equal(out.numpy().view(buf.dtype), buf)


class OnDevice(Exported):
    """A DLPack export that says its memory is on CUDA device 1 (never read: the check refuses it)."""

    def __dlpack_device__(self) -> tuple[int, int]:
        return (2, 1)


def test_device_memory_is_refused_naming_the_device() -> None:
    a = np.zeros((3, 5), np.float32)
    with pytest.raises(LayoutError, match=r"array: the OnDevice is in memory of DLPack device type 2 \(dev"):
        to_physical(OnDevice(a), "f32[3,5]{1,0:T(2,2)}")
    with pytest.raises(LayoutError, match=r"out: the OnDevice is in memory of DLPack device type 2"):
        to_physical(a, "f32[3,5]{1,0:T(2,2)}", out=OnDevice(np.zeros(24, np.float32)))
    host = Exported(np.full(24, -1, np.float32))  # CPU (1): accepted, written in place
    assert to_physical(a + 1, "f32[3,5]{1,0:T(2,2)}", out=host) is host
    assert (host.a == to_physical(a + 1, "f32[3,5]{1,0:T(2,2)}")).all()
