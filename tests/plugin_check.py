"""Operator plug-ins as an author outside the kit builds them, against an installed kit.

usage: plugin_check.py <cmake> <build dir> <mode> [<compiler launcher>]
  example   install the kit into a temporary prefix (moved after install, as
            install_check.py does), configure and build examples/layer_norm with
            find_package(npukit) alone, and use the op as a shipped one: its libraries
            export one symbol each, the op's own has no golden code and no libHalide, the
            NPU companion links libHalide; list; run against numpy on two tiers; a refused call; the gate on cpu
            and npu-sim:edge-6tops with JUnit; sim --strict at decode and prefill; tune; the C
            ABI through the installed Python module; the loader's refusals (a missing file,
            no plug-in, a companion, the same op twice, another kit's plug-in)
  skeleton  npukit new-op writes a project, which builds for one tier (sse41: any x86-64 CI
            machine) and runs, and whose gate ends with exit 2 and one line naming the
            unwritten golden reference, never a pass; new-op's refusals

The launcher (e.g. ccache) is the one the kit's build uses, passed on to the plug-ins' builds.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import install_check  # noqa: E402  (the install into a moved prefix)

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(os.path.dirname(HERE), "examples", "layer_norm")
failures = []


def check(what, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + what + ("" if ok else f"\n     {detail}"), flush=True)
    if not ok:
        failures.append(what)


def run(cmd, **kw):
    print("+", " ".join(cmd), flush=True)
    return subprocess.run(cmd, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)


def build_project(cmake, src, out, prefix, launcher, *defs):
    args = [cmake, "-S", src, "-B", out, f"-DCMAKE_PREFIX_PATH={prefix}", *defs]
    if launcher:
        args += [f"-DCMAKE_CXX_COMPILER_LAUNCHER={launcher}", f"-DCMAKE_C_COMPILER_LAUNCHER={launcher}"]
    for cmd in (args, [cmake, "--build", out, "--parallel", "2"]):
        r = run(cmd)
        if r.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed:\n{r.stdout[-6000:]}\n{r.stderr[-6000:]}")


def one_line_refusal(what, r, *parts):
    lines = r.stderr.strip().splitlines()
    ok = r.returncode == 2 and len(lines) == 1 and all(p in lines[0] for p in parts)
    check(what, ok, f"exit {r.returncode}, stderr {r.stderr!r}")


def exports(lib):
    out = run(["nm", "-D", "--defined-only", lib]).stdout
    return sorted(line.split()[-1] for line in out.splitlines() if line.strip())


def needed(lib):
    out = run(["readelf", "-d", lib]).stdout
    return [line.split()[-1] for line in out.splitlines() if "(NEEDED)" in line]


def save(path, a):
    np.save(path, a)
    return path


def layer_norm(x, w, b, eps):
    x = x.astype(np.float64)
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w.astype(np.float64) + b.astype(np.float64)


def check_example(cmake, build, launcher, tmp):
    prefix = install_check.install(cmake, build, tmp)
    npukit = os.path.join(prefix, "bin", "npukit")
    out = os.path.join(tmp, "layer_norm-build")
    build_project(cmake, EXAMPLE, out, prefix, launcher)
    plugin = os.path.join(out, "libnpukit_op_layer_norm.so")
    gate_lib = os.path.join(out, "libnpukit_op_layer_norm_gate.so")
    npu_lib = os.path.join(out, "libnpukit_op_layer_norm_npu.so")

    # Each library exports its descriptor alone (its copies of the kit's code and its Halide
    # runtime stay hidden); the op's own one links neither libHalide nor golden code.
    for lib, symbol in [(plugin, "npukit_operator_plugin"), (gate_lib, "npukit_operator_gate_plugin"),
                        (npu_lib, "npukit_operator_npu_plugin")]:
        check(f"{os.path.basename(lib)} exports {symbol} alone", exports(lib) == [symbol], exports(lib))
    check("the op's library links no libHalide/libLLVM",
          not any("libHalide" in n or "libLLVM" in n for n in needed(plugin) + needed(gate_lib)), needed(plugin))
    golden = [line for line in run(["nm", "-C", plugin]).stdout.splitlines() if "golden::" in line]
    check("the op's library carries no golden code", not golden, golden[:3])
    check("the NPU companion links libHalide", any("libHalide" in n for n in needed(npu_lib)), needed(npu_lib))

    r = run([npukit, "list", "--plugin", plugin, "--op", "layer_norm"])
    check("list --plugin describes layer_norm with its NPU schedule and gated dtypes",
          r.returncode == 0 and "layer_norm: y = (x - mean(x))" in r.stdout and "npu schedule: shape (rows, hidden)" in
          r.stdout and "gated dtypes: float32, float16" in r.stdout and "in  bias (hidden)" in r.stdout,
          r.stdout + r.stderr)

    rng = np.random.default_rng(7)
    x = (rng.standard_normal((5, 1600)) * 3 + 2).astype(np.float32)
    w = rng.uniform(0.5, 1.5, 1600).astype(np.float32)
    b = rng.uniform(-0.5, 0.5, 1600).astype(np.float32)
    xp, wp, bp = (save(os.path.join(tmp, f"{n}.npy"), a) for n, a in [("x", x), ("w", w), ("b", b)])
    ins = ["--in", f"x={xp}", "--in", f"weight={wp}", "--in", f"bias={bp}"]
    want = layer_norm(x, w, b, 1e-5)
    for target in ["cpu", "cpu:sse41"]:
        y = os.path.join(tmp, "y.npy")
        r = run([npukit, "run", "--plugin", plugin, "--op", "layer_norm", "--target", target, *ins,
                 "--out", f"y={y}", "--param", "eps=1e-5"])
        got = np.load(y) if r.returncode == 0 else None
        check(f"run --target {target} agrees with numpy",
              got is not None and np.allclose(got, want, rtol=3e-7, atol=1e-6), r.stderr)
    bad = save(os.path.join(tmp, "b_short.npy"), b[:100])
    r = run([npukit, "run", "--plugin", plugin, "--op", "layer_norm", "--in", f"x={xp}", "--in", f"weight={wp}",
             "--in", f"bias={bad}", "--out", f"y={os.path.join(tmp, 'y2.npy')}"])
    one_line_refusal("run refuses a bias of the wrong length, as for a shipped op", r, "layer_norm", "bias", "hidden")

    junit = os.path.join(tmp, "gate.xml")
    r = run([npukit, "gate", "--plugin", plugin, "--op", "layer_norm", "--target", "cpu", "--target",
             "npu-sim:edge-6tops", "--junit", junit])
    matrix = [line for line in r.stdout.splitlines() if line.startswith("layer_norm")]
    check("gate passes layer_norm on cpu and npu-sim:edge-6tops, a matrix row per dtype",
          r.returncode == 0 and len(matrix) == 2 and all(line.count("PASS") == 2 for line in matrix),
          r.stdout[-3000:] + r.stderr)
    cases = ET.parse(junit).getroot().findall(".//testcase") if os.path.exists(junit) else []
    classes = {c.get("classname") for c in cases}
    check("its JUnit report has the cases of both targets, none failed",
          len(cases) > 100 and all(c.find("failure") is None and c.find("error") is None for c in cases) and
          classes == {"layer_norm.cpu", "layer_norm.npu-sim:edge-6tops"}, f"{len(cases)} cases, {classes}")

    for shape, dtype in [("rows=1,hidden=1600", "float16"), ("rows=128,hidden=1600", "float32")]:
        r = run([npukit, "sim", "--plugin", plugin, "--op", "layer_norm", "--arch", "edge-6tops", "--shape", shape,
                 "--dtype", dtype, "--strict"])
        check(f"sim --strict is clean at {shape} {dtype}", r.returncode == 0 and "cycles" in r.stdout,
              r.stdout + r.stderr)
    r = run([npukit, "sim", "--plugin", plugin, "--all", "--arch", "edge-6tops"])
    check("sim --all has layer_norm among the kit's ops", r.returncode == 0 and "layer_norm" in r.stdout and
          "rms_norm" in r.stdout, r.stdout[-2000:] + r.stderr)
    r = run([npukit, "tune", "--plugin", plugin, "--op", "layer_norm", "--arch", "edge-6tops", "--budget-s", "2"])
    check("tune searches layer_norm's knobs", r.returncode == 0 and "tile_rows" in r.stdout, r.stdout + r.stderr)

    # The C ABI, through the installed Python module: npukit_load_plugin, then the op as any other.
    smoke = f'''
import numpy as np, npukit
assert "layer_norm" not in npukit.ops()
npukit.load_plugin({plugin!r})
npukit.load_plugin({plugin!r})   # the same file again: nothing new
assert npukit.ops().count("layer_norm") == 1, npukit.ops()
x = np.load({xp!r}); w = np.load({wp!r}); b = np.load({bp!r})
y = npukit.Op("layer_norm", eps=1e-5)(x, w, b)
want = np.load({os.path.join(tmp, "want.npy")!r})
assert np.allclose(y, want, rtol=3e-7, atol=1e-6), abs(y - want).max()
assert [t.name for t in npukit.describe("layer_norm").tensors] == ["x", "weight", "bias", "y"]
try:
    npukit.load_plugin({os.path.join(tmp, "nothing.so")!r})
    raise SystemExit("a missing plug-in was loaded")
except ValueError as e:
    assert "cannot be loaded" in str(e), e
print("python ok")
'''
    np.save(os.path.join(tmp, "want.npy"), want.astype(np.float32))
    env = dict(os.environ, PYTHONPATH=os.path.join(prefix, "lib", "python3", "dist-packages"))
    r = run(["/usr/bin/python3", "-c", smoke], env=env)
    check("the C ABI loads the plug-in and runs layer_norm (npukit.load_plugin)", r.returncode == 0 and
          "python ok" in r.stdout, r.stdout + r.stderr)

    # The loader's refusals: exit 2, one line naming the path and the rule.
    missing = os.path.join(tmp, "libnpukit_op_missing.so")
    one_line_refusal("a missing plug-in", run([npukit, "list", "--plugin", missing]), missing, "cannot be loaded")
    libnpukit = os.path.join(prefix, "lib", "libnpukit.so")
    one_line_refusal("a library that is no plug-in", run([npukit, "list", "--plugin", libnpukit]), libnpukit,
                     "not an npukit operator plug-in: it has no symbol npukit_operator_plugin")
    one_line_refusal("a companion given as the plug-in", run([npukit, "list", "--plugin", gate_lib]), gate_lib,
                     "no symbol npukit_operator_plugin")
    copy = os.path.join(tmp, "copy")
    os.makedirs(copy)
    for lib in (plugin, gate_lib, npu_lib):
        shutil.copy(lib, copy)
    twin = os.path.join(copy, os.path.basename(plugin))
    one_line_refusal("the same op from two plug-ins", run([npukit, "list", "--plugin", plugin, "--plugin", twin]), twin,
                     "op 'layer_norm' is already registered by plug-in " + plugin, "op names must be unique")
    os.remove(os.path.join(copy, os.path.basename(npu_lib)))
    one_line_refusal("a plug-in whose NPU companion is missing", run([npukit, "list", "--plugin", twin]), twin,
                     "its NPU companion", "libnpukit_op_layer_norm_npu.so", "cannot be loaded")
    # A plug-in stamped by another kit: its descriptor's first fields say so.
    src = os.path.join(tmp, "old.c")
    with open(src, "w") as f:
        f.write('#include <stdint.h>\nstruct stamp { int abi; const char* kit; uint64_t layout; const char* op; };\n'
                'static const struct stamp s = {999, "0.0.1", 1, "old_op"};\n'
                'const struct stamp* npukit_operator_plugin(void) { return &s; }\n')
    old = os.path.join(tmp, "libnpukit_op_old_op.so")
    run(["cc", "-shared", "-fPIC", "-o", old, src])
    one_line_refusal("a plug-in built against another kit", run([npukit, "list", "--plugin", old]), old,
                     "built against npukit 0.0.1 (plug-in ABI 999)", "rebuilt against the kit that loads it")


def check_skeleton(cmake, build, launcher, tmp):
    prefix = install_check.install(cmake, build, tmp)
    npukit = os.path.join(prefix, "bin", "npukit")
    project = os.path.join(tmp, "my_op")
    r = run([npukit, "new-op", "my_op", "--dir", project])
    files = sorted(os.path.relpath(os.path.join(d, f), project) for d, _, fs in os.walk(project) for f in fs)
    check("new-op writes the op's files, a CMakeLists.txt and a README", r.returncode == 0 and files == sorted([
        "CMakeLists.txt", "README.md", "ops/my_op.h", "schedules/cpu/my_op.cpp", "schedules/npu/my_op.cpp",
        "runtime/ops/my_op.cpp", "golden/my_op.h"]) and
        f"-DCMAKE_PREFIX_PATH={prefix}" in r.stdout, f"{files}\n{r.stdout}{r.stderr}")
    one_line_refusal("new-op refuses a shipped op's name", run([npukit, "new-op", "rms_norm", "--dir",
                                                                os.path.join(tmp, "a")]),
                     "new-op rms_norm", "is a shipped op")
    one_line_refusal("new-op refuses a name that is no identifier",
                     run([npukit, "new-op", "My-Op", "--dir", os.path.join(tmp, "b")]), "new-op My-Op", "lower-case")
    one_line_refusal("new-op refuses a directory that is not empty",
                     run([npukit, "new-op", "other", "--dir", project]), project, "not an empty directory")
    check("no refused new-op wrote anything", not os.path.exists(os.path.join(tmp, "a")) and
          not os.path.exists(os.path.join(tmp, "b")))

    # One tier: the skeleton test checks the wiring, not the tiers (CI's time).
    out = os.path.join(project, "build")
    build_project(cmake, project, out, prefix, launcher, "-DNPUKIT_OPERATOR_TIERS=sse41")
    plugin = os.path.join(out, "libnpukit_op_my_op.so")
    x = np.linspace(-3, 3, 3 * 70, dtype=np.float32).reshape(3, 70)
    xin, y = os.path.join(tmp, "x.npy"), os.path.join(tmp, "y.npy")
    np.save(xin, x)
    r = run([npukit, "run", "--plugin", plugin, "--op", "my_op", "--in", f"x={xin}", "--out", f"y={y}",
             "--param", "alpha=0.5"])
    check("the skeleton's placeholder runs (y = alpha * x)",
          r.returncode == 0 and np.array_equal(np.load(y), x * np.float32(0.5)), r.stderr)
    r = run([npukit, "gate", "--plugin", plugin, "--op", "my_op", "--target", "cpu"])
    lines = r.stderr.strip().splitlines()
    check("the gate refuses the unwritten golden: exit 2, one line naming it, no case passed",
          r.returncode == 2 and len(lines) == 1 and "gate: op my_op: its golden reference is not written "
          "(golden/my_op.h: my_op() is a stub; write the reference in double)" in lines[0] and
          not re.search(r"\bPASS\b", r.stdout) and re.search(r"^my_op\s+float32\s+FAIL \d+", r.stdout, re.M),
          f"exit {r.returncode}\n{r.stdout[-2000:]}\n{r.stderr}")
    r = run([npukit, "sim", "--plugin", plugin, "--op", "my_op", "--arch", "edge-6tops", "--strict"])
    check("the skeleton's NPU schedule simulates strict-clean", r.returncode == 0 and "cycles" in r.stdout,
          r.stdout + r.stderr)


def main():
    cmake, build, mode = sys.argv[1:4]
    launcher = sys.argv[4] if len(sys.argv) > 4 else ""
    with tempfile.TemporaryDirectory(prefix=f"npukit-plugin-{mode}-") as tmp:
        if mode == "example":
            check_example(cmake, build, launcher, tmp)
        elif mode == "skeleton":
            check_skeleton(cmake, build, launcher, tmp)
        else:
            sys.exit(f"unknown mode {mode}")
    if failures:
        sys.exit(f"{len(failures)} failed: {'; '.join(failures)}")
    print(f"plugin_check {mode}: ok")


if __name__ == "__main__":
    main()
