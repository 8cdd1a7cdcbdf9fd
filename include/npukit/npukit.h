/* npukit's plug-in interface: run any registered operator on DLPack tensors from C, C++
 * or any language with a C FFI. Errors are values: every call returns a status, and the
 * message of the last failure on the calling thread names the argument, the value and the
 * rule. Nothing here aborts the host process. */
#ifndef NPUKIT_NPUKIT_H_
#define NPUKIT_NPUKIT_H_

#include <dlpack/dlpack.h>
#include <stddef.h>

/* The version of this interface: a host compiled against it checks that the library it
 * loaded has the same (npukit_abi_version()). Version 1 added prepared ops, version 2 op
 * descriptions, version 3 npukit_op_create_like, version 4 npukit_load_plugin, version 5
 * npukit_cpu_model and npukit_cpu_tier. */
#define NPUKIT_ABI_VERSION 5

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  NPUKIT_OK = 0,
  NPUKIT_INVALID_ARGUMENT = 1, /* a shape, dtype, parameter, null pointer, ... breaks a rule */
  NPUKIT_UNSUPPORTED = 2,      /* valid, but no kernel here (target, tier, device) */
  NPUKIT_KERNEL_FAILED = 3,    /* the kernel reported an error */
  NPUKIT_INTERNAL = 4          /* a bug in npukit */
} npukit_status;

/* A tensor argument by name ("x", "weight", "y", ...; `npukit list` shows each op's). The
 * DLTensor must be on the CPU, with lanes = 1, C-contiguous (strides NULL or compact). */
typedef struct {
  const char* name;
  const DLTensor* tensor;
} npukit_tensor;

/* A parameter by name, its value as text ("1e-5", "half", "int8"); unset ones take their
 * defaults. */
typedef struct {
  const char* name;
  const char* value;
} npukit_param;

/* Runs `op` on `target` ("cpu", or "cpu:<tier>"; NULL means "cpu"). Outputs are written
 * into the tensors given for them, which must already have the right shape and dtype.
 * The same as npukit_op_create + npukit_op_run + npukit_op_destroy. */
npukit_status npukit_run(const char* op, const char* target, const npukit_tensor* tensors, size_t n_tensors,
                         const npukit_param* params, size_t n_params);

/* A prepared op: `op` on `target` with its parameters parsed and checked once and its
 * kernel chosen once; each run checks only the tensors (presence, shape, dtype, pointers,
 * overlap), allocates nothing and parses no text. NULL on an error (npukit_last_error). */
typedef struct npukit_op npukit_op;
npukit_op* npukit_op_create(const char* op, const char* target, const npukit_param* params, size_t n_params);

/* A prepared op of `base`'s op and target whose parameters are base's with `params` over
 * them (a name not given keeps base's value), sharing base's packed constants: a parameter
 * that changes every step (qkv_attention's "pos") costs a create, not a repack of the
 * weights. Not concurrently with npukit_op_set_constant on `base`; either op may be
 * destroyed first. NULL on an error (npukit_last_error). ABI 3. */
npukit_op* npukit_op_create_like(const npukit_op* base, const npukit_param* params, size_t n_params);

/* Packs input `name` (int8_gemm's "w") once; later runs reuse the packed copy, so changing
 * the tensor's data afterwards has no effect until this is called again. Runs must then
 * pass no tensor for it (NULL at its position): passing one is NPUKIT_INVALID_ARGUMENT.
 * Not concurrently with runs of the same op. */
npukit_status npukit_op_set_constant(npukit_op* op, const char* name, const DLTensor* tensor);

/* Runs on tensors by name, as npukit_run takes them. Several threads may run the same op at
 * once (on different outputs). */
npukit_status npukit_op_run(npukit_op* op, const npukit_tensor* tensors, size_t n_tensors);

/* Runs on tensors by position, in the order `npukit list` shows the op's tensors: n_tensors
 * is their number, and an absent optional tensor or a constant is NULL. Optional tensors at
 * the end may be left out (n_tensors smaller by as many). */
npukit_status npukit_op_run_positional(npukit_op* op, const DLTensor* const* tensors, size_t n_tensors);

void npukit_op_destroy(npukit_op* op); /* NULL is fine; not while a run is in flight */

/* The message of the last call on this thread that did not return NPUKIT_OK ("" if none).
 * Valid until the next npukit call on this thread. */
const char* npukit_last_error(void);

/* The registered operators, for discovery. */
size_t npukit_op_count(void);
const char* npukit_op_name(size_t index); /* NULL when index >= npukit_op_count() */

/* Op descriptions (ABI 2): what `npukit list` shows, for hosts that derive their bindings
 * from the registry (the PyTorch extension, the Python module) instead of naming ops. */
typedef enum { NPUKIT_INPUT = 0, NPUKIT_OUTPUT = 1, NPUKIT_INOUT = 2 } npukit_role;

typedef struct {
  const char* name;
  npukit_role role;          /* NPUKIT_INOUT: passed like an input, updated in place */
  int optional;              /* an input the op can do without (NULL by position) */
  int constant;              /* npukit_op_set_constant can pack it */
  size_t ndim;
  const char* const* dims;   /* named dimensions, outermost first; equal names, equal sizes */
  size_t n_dtypes;
  const DLDataType* dtypes;  /* the dtypes it takes; an output without the two below has dtypes[0] */
  const char* same_dtype_as; /* "" or the tensor whose dtype it shares (when that one is given) */
  const char* dtype_param;   /* "" or the choice parameter whose value names its dtype ("int32") */
} npukit_tensor_info;

typedef enum { NPUKIT_PARAM_REAL = 0, NPUKIT_PARAM_INTEGER = 1, NPUKIT_PARAM_CHOICE = 2 } npukit_param_kind;

typedef struct {
  const char* name;
  npukit_param_kind kind;
  const char* default_value; /* as text, parsed like a given value */
  double min, max;           /* inclusive, for real and integer */
  size_t n_choices;
  const char* const* choices;
  const char* doc;
} npukit_param_info;

typedef struct {
  const char* name;
  const char* summary;
  size_t n_tensors;
  const npukit_tensor_info* tensors; /* in the positional order of npukit_op_run_positional */
  size_t n_params;
  const npukit_param_info* params;
} npukit_op_info;

/* The description of `op`, valid for the life of the process; NULL for an unknown op
 * (npukit_last_error). */
const npukit_op_info* npukit_op_describe(const char* op);

/* Loads an operator plug-in (libnpukit_op_<op>.so, built against this kit with the CMake
 * package's npukit_add_operator) and registers its op, which from then on is listed, described,
 * validated and run like a shipped one. A path without '/' is a file in the current
 * directory. Loading the same file again does nothing. NPUKIT_INVALID_ARGUMENT, naming the
 * path and the rule, for a file that cannot be loaded, is no operator plug-in, was built
 * against another kit version, or has an op whose name is taken. Call it before other
 * threads use the library: not concurrently with any other npukit call. ABI 4. */
npukit_status npukit_load_plugin(const char* path);

/* What this machine runs (ABI 5), for benchmarks and logs that must say which machine and
 * which kernels their numbers come from. The CPU's name, e.g. "AMD EPYC (AuthenticAMD
 * family 25 model 17)". The CPU tier ("avx512", "avx2", ...) that a "cpu" run of `op`
 * dispatches to on this CPU, or NULL (npukit_last_error) for an unknown op or one with no
 * CPU kernel this CPU runs. Both valid for the life of the process. */
const char* npukit_cpu_model(void);
const char* npukit_cpu_tier(const char* op);

const char* npukit_version(void);
int npukit_abi_version(void); /* NPUKIT_ABI_VERSION of the library loaded */

#ifdef __cplusplus
}
#endif

#endif /* NPUKIT_NPUKIT_H_ */
