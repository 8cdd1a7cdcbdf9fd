/* The C signature of a kernel that npukit did not build, as `npukit gate --op OP
 * --impl LIB.so:SYMBOL` loads and gates it against OP's golden reference (docs/gating.md).
 * One signature serves every op; what differs per op is the order of its tensors and
 * parameters, which is the op's registry entry's: `npukit list --op OP` prints it under
 * "external kernel". For rms_norm:
 *
 *   int my_rms_norm(const DLTensor* const* tensors, size_t n_tensors,
 *                   const npukit_param_value* params, size_t n_params,
 *                   char* error, size_t error_size);
 *   tensors[0] x      input   [rows, hidden]   float32 | float16
 *   tensors[1] weight input   [hidden]         as x
 *   tensors[2] y      output  [rows, hidden]   as x
 *   params[0]  eps    real
 *
 * Tensors are on the CPU (kDLCPU), C-contiguous (strides NULL), lanes 1, already checked
 * against the op's rules; outputs are allocated with their shape and dtype and filled with
 * NaN bytes, inout tensors (KV caches) hold their inputs and are updated in place, an
 * absent optional input is NULL. Every parameter is given, in the listing's order, with
 * its default where the case sets none. Return NPUKIT_OK (0) on success and
 * NPUKIT_UNSUPPORTED for a call the kernel does not implement (a dtype it lacks), which the
 * gate reports as UNSUPPORTED; anything else is a kernel error (FAIL). Either way the kernel
 * may write a NUL-terminated message into `error`. */
#ifndef NPUKIT_EXTERNAL_KERNEL_H_
#define NPUKIT_EXTERNAL_KERNEL_H_

#include <dlpack/dlpack.h>
#include <stddef.h>
#include <stdint.h>

#include "npukit/npukit.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One parameter's value; `kind` says which field holds it. */
typedef struct {
  npukit_param_kind kind;
  double real;        /* NPUKIT_PARAM_REAL */
  int64_t integer;    /* NPUKIT_PARAM_INTEGER */
  const char* choice; /* NPUKIT_PARAM_CHOICE: the chosen name ("half", "int8") */
} npukit_param_value;

typedef int (*npukit_external_kernel)(const DLTensor* const* tensors, size_t n_tensors,
                                      const npukit_param_value* params, size_t n_params, char* error,
                                      size_t error_size);

#ifdef __cplusplus
}
#endif

#endif /* NPUKIT_EXTERNAL_KERNEL_H_ */
