"""npukit from Python: any op of libnpukit.so on numpy arrays or torch tensors (by __dlpack__).

    import npukit
    y = npukit.run("rms_norm", {"x": x, "weight": w}, {"eps": 1e-5})["y"]
    norm = npukit.Op("rms_norm", eps=1e-5)    # parameters parsed once, kernel chosen once
    y = norm(x, w)                            # inputs in the op's order, outputs returned

Outputs are numpy arrays, or torch tensors when an input is one; in/out tensors (the KV
caches of qkv_attention) are updated in place. Errors are ValueError (invalid argument),
NotImplementedError (unsupported here) or RuntimeError, carrying npukit's message.
"""
import ctypes

from . import _abi
from ._abi import INOUT, INPUT, OUTPUT  # a TensorDescription's role
from ._describe import OpDescription, describe

__all__ = ["Op", "run", "describe", "OpDescription", "INPUT", "OUTPUT", "INOUT", "ops", "version",
           "torch_library", "load_torch", "load_plugin", "cpu_model", "cpu_tier",
           "machine_context"]


def version():
    return _abi.lib.npukit_version().decode()


def cpu_model():
    """This machine's CPU, as the benches name it."""
    return _abi.lib.npukit_cpu_model().decode()


def cpu_tier(op):
    """The CPU tier ("avx512", "avx2", ...) that op's "cpu" runs dispatch to on this CPU."""
    tier = _abi_tier(op)
    if tier is None:
        raise _abi.error(_abi.INVALID_ARGUMENT, _abi.last_error())
    return tier


def machine_context():
    """The `cpu:` and `dispatched_tiers:` lines the C++ benches print, for Python benches
    (an op without a CPU kernel this CPU runs shows as none)."""
    tiers = " ".join(f"{op}:{_abi_tier(op) or 'none'}" for op in ops())
    return f"cpu: {cpu_model()}\ndispatched_tiers: {tiers}"


def _abi_tier(op):
    tier = _abi.lib.npukit_cpu_tier(op.encode())
    return tier.decode() if tier is not None else None


def ops():
    """The registered op names."""
    return [_abi.lib.npukit_op_name(i).decode() for i in range(_abi.lib.npukit_op_count())]


def load_plugin(path):
    """Loads an operator plug-in (libnpukit_op_<op>.so, npukit_load_plugin): its op joins ops().
    The PyTorch extension's torch.ops.npukit are made when it loads: load plug-ins first."""
    status = _abi.lib.npukit_load_plugin(str(path).encode())
    if status != _abi.OK:
        raise _abi.error(status, _abi.last_error())


def torch_library():
    """The path of libnpukit_torch.so, the PyTorch extension beside libnpukit.so."""
    return _abi.TORCH_LIBRARY


def load_torch():
    """Loads the PyTorch extension: torch.ops.npukit.<op> and torch.classes.npukit.Int8Weights."""
    import torch
    torch.ops.load_library(_abi.TORCH_LIBRARY)
    return torch.ops.npukit


def _param_text(value):
    if isinstance(value, bool):
        raise TypeError(f"parameter value {value!r}: npukit parameters are numbers or choice names")
    return repr(value) if isinstance(value, float) else str(value)


def _is_torch(x):
    return type(x).__module__.split(".")[0] == "torch"


class Op:
    """A prepared op: `name` on `target` with its parameters checked once (npukit_op_create)."""

    def __init__(self, name, target="cpu", **params):
        self.info = describe(name)
        texts = [(k.encode(), _param_text(v).encode()) for k, v in params.items()]
        arr = (_abi.Param * max(1, len(texts)))(*[_abi.Param(k, v) for k, v in texts])
        self._handle = _abi.lib.npukit_op_create(name.encode(), target.encode(), arr, len(texts))
        if not self._handle:
            raise _abi.error(_abi.INVALID_ARGUMENT, _abi.last_error())
        self._params = {k: _param_text(v) for k, v in params.items()}
        self._constants = {}

    def like(self, **params):
        """This op with `params` over its own (npukit_op_create_like): the packed constants
        are shared, not packed again, so a per-step parameter (qkv_attention's pos) is cheap."""
        texts = [(k.encode(), _param_text(v).encode()) for k, v in params.items()]
        arr = (_abi.Param * max(1, len(texts)))(*[_abi.Param(k, v) for k, v in texts])
        handle = _abi.lib.npukit_op_create_like(self._handle, arr, len(texts))
        if not handle:
            raise _abi.error(_abi.INVALID_ARGUMENT, _abi.last_error())
        other = Op.__new__(Op)
        other.info, other._handle = self.info, handle
        other._params = dict(self._params, **{k: _param_text(v) for k, v in params.items()})
        other._constants = dict(self._constants)
        return other

    def __del__(self):
        handle, self._handle = getattr(self, "_handle", None), None
        if handle and _abi is not None and _abi.lib is not None:  # modules may be gone at exit
            _abi.lib.npukit_op_destroy(handle)

    def set_constant(self, name, tensor):
        """Packs input `name` (int8_gemm's w) once; later runs must not pass it."""
        capsule = tensor.__dlpack__()
        status = _abi.lib.npukit_op_set_constant(self._handle, name.encode(), ctypes.byref(_abi.dltensor(capsule)))
        if status != _abi.OK:
            raise _abi.error(status, _abi.last_error())
        self._constants[name] = tensor

    def run(self, inputs):
        """Runs on `inputs` (name -> array or tensor); returns {output name: array or tensor}."""
        info = self.info
        unknown = sorted(set(inputs) - {t.name for t in info.tensors})
        if unknown:  # npukit would say it too, but by position it never sees the name
            raise ValueError(f"{info.name}: no tensor named {unknown[0]} (it has: {', '.join(t.name for t in info.tensors)})")
        sizing = dict(self._constants, **inputs)  # a constant's dimensions size outputs too (int8_gemm's N)
        outputs = info.allocate_outputs(sizing, self._params, torch=any(map(_is_torch, inputs.values())))
        given = dict(inputs)
        given.update(outputs or {})
        capsules = [given[t.name].__dlpack__() if given.get(t.name) is not None else None for t in info.tensors]
        slots = (ctypes.POINTER(_abi.DLTensor) * len(capsules))(
            *[ctypes.pointer(_abi.dltensor(c)) if c is not None else None for c in capsules])
        status = _abi.lib.npukit_op_run_positional(self._handle, slots, len(capsules))
        del capsules  # after the run: each capsule frees its DLManagedTensor
        if status != _abi.OK:
            raise _abi.error(status, _abi.last_error())
        if outputs is None:
            raise RuntimeError(f"{info.name}: ran without its outputs")
        return outputs

    def __call__(self, *args, **kwargs):
        """Inputs by position (required ones in the op's order, then optional ones) or by
        name, as torch.ops.npukit takes them; returns the output, or a tuple of them."""
        names = [t.name for t in self.info.call_order() if t.name not in self._constants]
        if len(args) > len(names):
            raise TypeError(f"{self.info.name}: {len(args)} inputs given, it takes at most {len(names)} ({', '.join(names)})")
        inputs = dict(zip(names, args))
        for k, v in kwargs.items():
            if k in inputs:
                raise TypeError(f"{self.info.name}: input {k} given twice")
            inputs[k] = v
        outs = list(self.run({k: v for k, v in inputs.items() if v is not None}).values())
        return outs[0] if len(outs) == 1 else tuple(outs)


def run(op, inputs, params=None, target="cpu"):
    """One call: {output name: array or tensor} of `op` on `inputs` (name -> array or tensor)."""
    return Op(op, target, **(params or {})).run(inputs)
