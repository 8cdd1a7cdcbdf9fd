"""Installs a build into a fresh prefix and uses it as an outsider would.

usage: install_check.py <cmake> <build dir> <mode>
  cmake      build and run tests/consumer with find_package(npukit 0.2 REQUIRED)
  pkgconfig  build tests/consumer/main.c with cc $(pkg-config --cflags --libs npukit), run it
  exports    libnpukit.so exports only npukit_*, holds no golden code and links no
             libHalide/libLLVM; the installed CLI runs
  python     `import npukit` from the installed site path runs an op; where the build has
             the PyTorch extension, the installed one (which links no libHalide/libLLVM)
             gives torch.ops.npukit

Each mode installs into its own temporary prefix, then moves the tree elsewhere before
using it, so a file that kept an absolute path to the prefix or the build fails here.
"""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CONSUMER = os.path.join(HERE, "consumer")
EXPECTED = [
    "include/npukit/npukit.h",
    "include/npukit/dtype.h",
    "include/npukit/external_kernel.h",
    "lib/libnpukit.so",
    "bin/npukit",
    "lib/cmake/npukit/npukitConfig.cmake",
    "lib/cmake/npukit/npukitConfigVersion.cmake",
    "lib/cmake/npukit/npukitTargets.cmake",
    "lib/pkgconfig/npukit.pc",
    "lib/python3/dist-packages/npukit/__init__.py",
    # what operator plug-ins are built with (find_package(npukit COMPONENTS operator))
    "include/npukit/kit_version.h",
    "include/npukit/sdk/runtime/operator_plugin.h",
    "include/npukit/sdk/tools/gate/gate_plugin.h",
    "include/npukit/sdk/schedules/npu/npu_plugin.h",
    "lib/cmake/npukit/npukitOperatorTargets.cmake",
    "lib/cmake/npukit/NpukitOperatorPlugin.cmake",
    "lib/npukit/libnpukit_op_support.a",
]


def run(cmd, **kw):
    print("+", " ".join(cmd), flush=True)
    return subprocess.run(cmd, check=True, text=True, **kw)


def output(cmd, **kw):
    return run(cmd, stdout=subprocess.PIPE, **kw).stdout


def install(cmake, build, tmp):
    staged = os.path.join(tmp, "staged")
    run([cmake, "--install", build, "--prefix", staged])
    missing = [f for f in EXPECTED if not os.path.exists(os.path.join(staged, f))]
    if missing:
        sys.exit(f"not installed: {', '.join(missing)}")
    # No installed text file may name the build, the sources or the install prefix.
    banned = [os.path.realpath(build), os.path.dirname(HERE), staged]
    for root, _, files in os.walk(staged):
        for name in files:
            path = os.path.join(root, name)
            if name.endswith((".cmake", ".pc", ".h")):
                text = open(path, encoding="utf-8").read()
                for b in banned:
                    if b in text:
                        sys.exit(f"{os.path.relpath(path, staged)} names {b}: not relocatable")
    prefix = os.path.join(tmp, "moved", "prefix")
    os.makedirs(os.path.dirname(prefix))
    shutil.move(staged, prefix)
    return prefix


def check_cmake(cmake, prefix, tmp):
    out = os.path.join(tmp, "consumer-build")
    run([cmake, "-S", CONSUMER, "-B", out, f"-DCMAKE_PREFIX_PATH={prefix}"])
    run([cmake, "--build", out])
    run([os.path.join(out, "consumer")])
    # The version file refuses a release with another minor version.
    probe = os.path.join(tmp, "probe")
    os.makedirs(probe)
    with open(os.path.join(probe, "CMakeLists.txt"), "w") as f:
        f.write("cmake_minimum_required(VERSION 3.25)\nproject(p LANGUAGES C)\n"
                "find_package(npukit 0.3 REQUIRED)\n")
    r = subprocess.run([cmake, "-S", probe, "-B", os.path.join(probe, "b"),
                        f"-DCMAKE_PREFIX_PATH={prefix}"], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    if r.returncode == 0:
        sys.exit("find_package(npukit 0.3) accepted the installed 0.2 package")
    if "version: 0.2.0" not in r.stdout:  # refused for its version, not for another fault
        sys.exit(f"find_package(npukit 0.3) failed without considering 0.2.0:\n{r.stdout}")


def check_pkgconfig(prefix, tmp):
    env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(prefix, "lib", "pkgconfig"))
    flags = output(["pkg-config", "--cflags", "--libs", "npukit"], env=env).split()
    version = output(["pkg-config", "--modversion", "npukit"], env=env).strip()
    libdir = output(["pkg-config", "--variable=libdir", "npukit"], env=env).strip()
    if os.path.realpath(libdir) != os.path.realpath(os.path.join(prefix, "lib")):
        sys.exit(f"pkg-config libdir {libdir} is not under {prefix}")
    exe = os.path.join(tmp, "consumer")
    run(["cc", "-o", exe, os.path.join(CONSUMER, "main.c"), *flags, "-lm",
         f"-DNPUKIT_EXPECTED_VERSION=\"{version}\"", f"-Wl,-rpath,{libdir}"])
    run([exe])


def check_exports(prefix):
    lib = os.path.join(prefix, "lib", "libnpukit.so")
    syms = output(["nm", "-D", "--defined-only", lib]).split("\n")
    names = [line.split()[-1] for line in syms if line.strip()]
    foreign = [n for n in names if not n.startswith("npukit_")]
    if foreign or not names:
        sys.exit(f"libnpukit.so exports {foreign or 'nothing'}; only npukit_* may be")
    # Hidden symbols too: the gate's golden code belongs in the gate library, not here.
    golden = [line for line in output(["nm", "-C", lib]).splitlines() if "golden::" in line]
    if golden:
        sys.exit(f"libnpukit.so carries {len(golden)} golden:: symbols, e.g. {golden[0]}")
    needed = output(["readelf", "-d", lib])
    for line in needed.splitlines():
        if "(NEEDED)" in line and ("libHalide" in line or "libLLVM" in line):
            sys.exit(f"libnpukit.so links {line.split()[-1]} dynamically")
    ldd = output(["ldd", lib])
    if "not found" in ldd or "libHalide" in ldd or "libLLVM" in ldd:
        sys.exit(f"ldd libnpukit.so:\n{ldd}")
    listing = output([os.path.join(prefix, "bin", "npukit"), "list"])
    if "rms_norm" not in listing:
        sys.exit("the installed npukit list does not show rms_norm")
    # The installed CLI reads the installed presets (not the source tree's): a preset
    # renamed there is the one it simulates on.
    presets = os.path.join(prefix, "share", "npukit", "presets")
    os.rename(os.path.join(presets, "edge-6tops.yaml"), os.path.join(presets, "installed-only.yaml"))
    sim = output([os.path.join(prefix, "bin", "npukit"), "sim", "--op", "rms_norm", "--arch", "installed-only"])
    if "cycles" not in sim:
        sys.exit("the installed npukit does not read its installed presets:\n" + sim)


PYTHON_SMOKE = '''
import os, sys
import numpy as np
import npukit
prefix = os.path.realpath(sys.argv[1])
assert os.path.realpath(npukit.__file__).startswith(prefix), npukit.__file__
y = npukit.run("rms_norm", {"x": np.ones((1, 8), np.float32), "weight": np.ones(8, np.float32)})["y"]
assert np.allclose(y, 1, rtol=1e-4), y
if sys.argv[2] == "torch":
    import torch
    ops = npukit.load_torch()
    assert os.path.realpath(npukit.torch_library()).startswith(prefix), npukit.torch_library()
    assert torch.allclose(ops.rms_norm(torch.ones(1, 8), torch.ones(8), 1e-5), torch.ones(1, 8), rtol=1e-4)
print("installed npukit module ok", sys.argv[2])
'''


def check_python(build, prefix):
    torch = os.path.exists(os.path.join(build, "runtime", "torch", "libnpukit_torch.so"))
    if torch:
        lib = os.path.join(prefix, "lib", "libnpukit_torch.so")
        if not os.path.exists(lib):
            sys.exit("the build has libnpukit_torch.so but the install does not")
        needed = [line.split()[-1] for line in output(["readelf", "-d", lib]).splitlines() if "(NEEDED)" in line]
        if any("libHalide" in n or "libLLVM" in n for n in needed) or "[libnpukit.so]" not in needed:
            sys.exit(f"libnpukit_torch.so links {needed}: it must link libnpukit.so and no libHalide/libLLVM")
    env = dict(os.environ, PYTHONPATH=os.path.join(prefix, "lib", "python3", "dist-packages"))
    run(["/usr/bin/python3", "-c", PYTHON_SMOKE, prefix, "torch" if torch else "no-torch"], env=env)


def main():
    cmake, build, mode = sys.argv[1:4]
    with tempfile.TemporaryDirectory(prefix="npukit-install-") as tmp:
        prefix = install(cmake, build, tmp)
        if mode == "cmake":
            check_cmake(cmake, prefix, tmp)
        elif mode == "pkgconfig":
            check_pkgconfig(prefix, tmp)
        elif mode == "exports":
            check_exports(prefix)
        elif mode == "python":
            check_python(build, prefix)
        else:
            sys.exit(f"unknown mode {mode}")
    print(f"install_check {mode}: ok")


if __name__ == "__main__":
    main()
