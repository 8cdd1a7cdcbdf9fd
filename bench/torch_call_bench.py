"""What a Python caller pays per torch.ops.npukit.rms_norm on one [1, 4096] fp32 row, beside
torch's own torch.mul on the same tensors (Python -> dispatcher -> a tiny native kernel)
and npukit's raw C ABI call from C (bench/torch_op_bench measures that pair without Python).

Usage: PYTHONPATH=build/python /usr/bin/python3 torch_call_bench.py PATH/TO/libnpukit_torch.so [--quick]
"""
import sys
import timeit

import torch

import npukit


def main():
    torch.ops.load_library(sys.argv[1])
    print(npukit.machine_context())
    quick = "--quick" in sys.argv
    torch.set_num_threads(1)
    x, w, y = torch.ones(1, 4096), torch.ones(4096), torch.empty(1, 4096)
    rms_norm, mul = torch.ops.npukit.rms_norm, torch.mul
    # The overloads themselves: torch skips matching the packet's overloads one by one.
    overload, out = rms_norm.default, rms_norm.out
    calls = {"torch.ops.npukit.rms_norm(x, w, 1e-5)": lambda: rms_norm(x, w, 1e-5),
             "torch.ops.npukit.rms_norm.default(...)": lambda: overload(x, w, 1e-5),
             "torch.ops.npukit.rms_norm(..., y=y)": lambda: rms_norm(x, w, 1e-5, y=y),
             "torch.ops.npukit.rms_norm.out(..., y=y)": lambda: out(x, w, 1e-5, y=y),
             "torch.mul(x, w)": lambda: mul(x, w)}
    n, repeat = (200, 3) if quick else (20000, 7)
    for name, f in calls.items():
        f()
        best = min(timeit.repeat(f, number=n, repeat=repeat)) / n
        print(f"{name:40s} {best * 1e6:7.2f} us per call")
    if not torch.allclose(rms_norm(x, w, 1e-5), torch.ones(1, 4096), rtol=1e-4):
        sys.exit("rms_norm of ones is not ones")


if __name__ == "__main__":
    main()
