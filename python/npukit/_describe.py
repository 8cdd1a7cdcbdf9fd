"""An op's description (npukit_op_describe) and what follows from it alone: the order
inputs are taken in, and each output's shape and dtype from the inputs' named dimensions."""
from . import _abi

_NUMPY = {(2, 16): "float16", (2, 32): "float32", (2, 64): "float64", (0, 8): "int8", (0, 32): "int32",
          (0, 64): "int64", (1, 8): "uint8"}


class TensorDescription:
    def __init__(self, t):
        self.name = t.name.decode()
        self.role = t.role
        self.optional = bool(t.optional)
        self.constant = bool(t.constant)
        self.dims = [t.dims[i].decode() for i in range(t.ndim)]
        self.dtypes = [_NUMPY[(t.dtypes[i].code, t.dtypes[i].bits)] for i in range(t.n_dtypes)]
        self.same_dtype_as = t.same_dtype_as.decode()
        self.dtype_param = t.dtype_param.decode()


class ParamDescription:
    def __init__(self, p):
        self.name = p.name.decode()
        self.kind = p.kind
        self.default = p.default_value.decode()
        self.choices = [p.choices[i].decode() for i in range(p.n_choices)]
        self.doc = p.doc.decode()


class OpDescription:
    def __init__(self, info):
        self.name = info.name.decode()
        self.summary = info.summary.decode()
        self.tensors = [TensorDescription(info.tensors[i]) for i in range(info.n_tensors)]
        self.params = [ParamDescription(info.params[i]) for i in range(info.n_params)]

    def call_order(self):
        """The tensors a caller passes: required ones in the op's order, then optional ones
        (the order of torch.ops.npukit's schemas)."""
        read = [t for t in self.tensors if t.role != _abi.OUTPUT]
        return [t for t in read if not t.optional] + [t for t in read if t.optional]

    def allocate_outputs(self, inputs, params, torch):
        """{name: empty array} for each output, or None when an input's rank is not its
        spec's or a dimension is not given (npukit's checks then say what is wrong)."""
        sizes = {}
        for t in sorted(self.call_order(), key=lambda t: t.optional):
            x = inputs.get(t.name)
            if x is None:
                continue
            if len(x.shape) != len(t.dims):
                return None
            for d, n in zip(t.dims, x.shape):
                sizes.setdefault(d, int(n))
        out = {}
        for t in self.tensors:
            if t.role != _abi.OUTPUT:
                continue
            if any(d not in sizes for d in t.dims):
                return None
            dtype = t.dtypes[0]
            if t.dtype_param:
                dtype = params.get(t.dtype_param) or self._default(t.dtype_param)
            elif t.same_dtype_as and inputs.get(t.same_dtype_as) is not None:
                dtype = _dtype_name(inputs[t.same_dtype_as].dtype)
            if dtype not in _NUMPY.values():
                return None  # not a dtype name: npukit's parameter check reports it
            out[t.name] = _empty([sizes[d] for d in t.dims], dtype, torch)
        return out

    def _default(self, param):
        return next(p.default for p in self.params if p.name == param)


def _dtype_name(dtype):
    return str(dtype).replace("torch.", "")


def _empty(shape, dtype, torch):
    if torch:
        import torch as t
        return t.empty(shape, dtype=getattr(t, dtype))
    import numpy as np
    return np.empty(shape, dtype=dtype)


_described = {}


def describe(op):
    """What `npukit list` shows for `op`: its tensors (name, role, dims, dtypes) and params."""
    if op not in _described:
        info = _abi.lib.npukit_op_describe(op.encode())
        if not info:
            raise _abi.error(_abi.INVALID_ARGUMENT, _abi.last_error())
        _described[op] = OpDescription(info.contents)
    return _described[op]
