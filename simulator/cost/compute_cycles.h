// Matrix-unit compute cycles of a GEMM when nothing stalls: the closed forms the cost
// model builds on, validated against published simulators (docs/simulator/validation.md).
#pragma once

#include <cstdint>

#include "simulator/arch/arch_spec.h"

namespace npukit::sim {

// SCALE-Sim v2's cycle counts for C[M, N] = A[M, K] · B[K, N] on an R×C systolic array:
//   WS ⌈K/R⌉·⌈N/C⌉·(2R + C + M − 2) − 1   (weights stationary: K on rows, N on columns)
//   OS ⌈M/R⌉·⌈N/C⌉·(R + C + K − 2) − 1    (outputs stationary: M on rows, N on columns)
//   IS ⌈K/R⌉·⌈M/C⌉·(2R + C + N − 2) − 1   (inputs stationary: K on rows, M on columns)
// Each fold fills the array, streams the moving operand through and drains it.
int64_t systolic_gemm_cycles(Dataflow dataflow, int64_t rows, int64_t cols, int64_t m, int64_t n, int64_t k);

// A cube unit (m0×k0×n0 MACs per cycle) runs whole tiles: ⌈M/m0⌉·⌈K/k0⌉·⌈N/n0⌉ cycles.
// Padding waste is the share of those MACs beyond M·N·K.
int64_t cube_gemm_cycles(const CubeShape& shape, int64_t m, int64_t n, int64_t k);

// Compute-bound cycles of `macs` MACs on `macs_per_cycle` units (Timeloop's bound).
int64_t compute_bound_cycles(int64_t macs, int64_t macs_per_cycle);

}  // namespace npukit::sim
