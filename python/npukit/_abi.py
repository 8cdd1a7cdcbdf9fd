"""The C ABI of libnpukit.so (include/npukit/npukit.h) as ctypes declarations."""
import ctypes
import os

from . import _paths


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


class Param(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("value", ctypes.c_char_p)]


class TensorInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("role", ctypes.c_int), ("optional", ctypes.c_int),
                ("constant", ctypes.c_int), ("ndim", ctypes.c_size_t), ("dims", ctypes.POINTER(ctypes.c_char_p)),
                ("n_dtypes", ctypes.c_size_t), ("dtypes", ctypes.POINTER(DLDataType)),
                ("same_dtype_as", ctypes.c_char_p), ("dtype_param", ctypes.c_char_p)]


class ParamInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("kind", ctypes.c_int), ("default_value", ctypes.c_char_p),
                ("min", ctypes.c_double), ("max", ctypes.c_double), ("n_choices", ctypes.c_size_t),
                ("choices", ctypes.POINTER(ctypes.c_char_p)), ("doc", ctypes.c_char_p)]


class OpInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("summary", ctypes.c_char_p), ("n_tensors", ctypes.c_size_t),
                ("tensors", ctypes.POINTER(TensorInfo)), ("n_params", ctypes.c_size_t),
                ("params", ctypes.POINTER(ParamInfo))]


INPUT, OUTPUT, INOUT = 0, 1, 2
REAL, INTEGER, CHOICE = 0, 1, 2
OK, INVALID_ARGUMENT, UNSUPPORTED = 0, 1, 2
ABI_VERSION = 5  # the header's NPUKIT_ABI_VERSION this module was written against

LIBRARY = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), _paths.LIBRARY))
TORCH_LIBRARY = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), _paths.TORCH_LIBRARY))

lib = ctypes.CDLL(os.environ.get("NPUKIT_LIBRARY", LIBRARY))
_P = ctypes.c_void_p
for name, res, args in [
        ("npukit_abi_version", ctypes.c_int, []),
        ("npukit_version", ctypes.c_char_p, []),
        ("npukit_cpu_model", ctypes.c_char_p, []),
        ("npukit_cpu_tier", ctypes.c_char_p, [ctypes.c_char_p]),
        ("npukit_last_error", ctypes.c_char_p, []),
        ("npukit_op_count", ctypes.c_size_t, []),
        ("npukit_op_name", ctypes.c_char_p, [ctypes.c_size_t]),
        ("npukit_op_describe", ctypes.POINTER(OpInfo), [ctypes.c_char_p]),
        ("npukit_op_create", _P, [ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(Param), ctypes.c_size_t]),
        ("npukit_op_create_like", _P, [_P, ctypes.POINTER(Param), ctypes.c_size_t]),
        ("npukit_op_set_constant", ctypes.c_int, [_P, ctypes.c_char_p, ctypes.POINTER(DLTensor)]),
        ("npukit_op_run_positional", ctypes.c_int, [_P, ctypes.POINTER(ctypes.POINTER(DLTensor)), ctypes.c_size_t]),
        ("npukit_op_destroy", None, [_P]),
        ("npukit_load_plugin", ctypes.c_int, [ctypes.c_char_p])]:
    f = getattr(lib, name)
    f.restype, f.argtypes = res, args
if lib.npukit_abi_version() != ABI_VERSION:
    raise ImportError(f"{LIBRARY}: npukit ABI {lib.npukit_abi_version()}, this module needs {ABI_VERSION}")

_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype, _capsule_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]


def dltensor(capsule):
    """The DLTensor inside a __dlpack__ capsule (which must stay alive while it is used)."""
    return ctypes.cast(_capsule_pointer(capsule, b"dltensor"), ctypes.POINTER(DLManagedTensor)).contents.dl_tensor


def last_error():
    return lib.npukit_last_error().decode()


def error(status, message):
    """The Python exception for a status, as the torch extension raises it."""
    if status == INVALID_ARGUMENT:
        return ValueError(message)
    if status == UNSUPPORTED:
        return NotImplementedError(message)
    return RuntimeError(message)
