# Determinism (docs/reliability.md): every op's CPU kernels write the same bytes on every
# run, on 1 and on 2 Halide threads alike. `--repeat 10` runs each gate case ten times,
# alternating the thread pool between 1 and 2 threads, and fails a case whose runs differ
# (NONDETERMINISTIC). The best tier this CPU runs ten times; the two every x86-64 machine
# here runs, three times each (for CI's time; 3 runs still cover 1 and 2 threads). The npu-sim and gpu-opencl gates (tests/CMakeLists.txt) run each case twice, on 1
# and on 2 threads (--repeat 2): their first compile is most of their time.
add_test(NAME gate_repeat_cpu COMMAND $<TARGET_FILE:npukit> gate --target cpu --repeat 10)
add_test(NAME gate_repeat_cpu_tiers COMMAND $<TARGET_FILE:npukit> gate --target cpu:avx2 --target cpu:sse41 --repeat 3)
set_tests_properties(gate_repeat_cpu gate_repeat_cpu_tiers PROPERTIES COST 30)
