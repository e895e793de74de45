/* ascendopt simulator: the C ABI between the Rust worker and a compiled host
 * (op_host) library. The worker fills AscHostTilingIn from the test case and
 * the hardware profile, calls `ascendopt_host_tiling`, and reads
 * AscHostTilingOut. crates/sim/src/host_abi.rs mirrors these structs.
 *
 * Bump ASC_HOST_ABI_VERSION on any change.
 */
#ifndef ASCENDOPT_HOST_ABI_H
#define ASCENDOPT_HOST_ABI_H

#include <stdint.h>

#define ASC_HOST_ABI_VERSION 4u
#define ASC_HOST_MAX_DIMS 8
#define ASC_HOST_MAX_WORKSPACES 8
#define ASC_HOST_MAX_OUTPUT_INITS 64

#ifdef __cplusplus
extern "C" {
#endif

/* A tensor as the tiling function sees it (dtype is AscDtype of abi.h).
 * `param` is the OpDef parameter it instantiates (its index among the
 * OpDef's inputs, or outputs): a tensor list has several tensors of one
 * parameter, an absent optional input none. Tensors come in parameter
 * order. `data` holds its values when the tiling may read them
 * (value-depend inputs), else NULL. */
typedef struct AscHostTensor {
  uint32_t dtype;
  uint32_t ndim;
  int64_t dims[ASC_HOST_MAX_DIMS];
  uint32_t param;
  uint32_t reserved;
  const void* data;
  uint64_t data_len;
} AscHostTensor;

enum AscAttrKind {
  ASC_ATTR_INT = 0,
  ASC_ATTR_FLOAT = 1,
  ASC_ATTR_BOOL = 2,
  ASC_ATTR_STR = 3,
  ASC_ATTR_LIST_INT = 4,
  ASC_ATTR_LIST_FLOAT = 5
};

/* An attribute value, matched to OpDef's Attr(name) by name. */
typedef struct AscHostAttr {
  const char* name;
  uint32_t kind; /* AscAttrKind */
  uint32_t list_len;
  int64_t i;             /* INT, BOOL */
  double f;              /* FLOAT */
  const char* s;         /* STR */
  const int64_t* list_i; /* LIST_INT */
  const float* list_f;   /* LIST_FLOAT */
} AscHostAttr;

/* What platform_ascendc::PlatformAscendC reports. */
typedef struct AscHostPlatform {
  const char* soc_version; /* e.g. "Ascend910B2" */
  uint32_t core_num_aiv;
  uint32_t core_num_aic;
  uint64_t ub_size;
  uint64_t l1_size;
  uint64_t l0a_size;
  uint64_t l0b_size;
  uint64_t l0c_size;
  uint64_t l2_size;
  uint64_t hbm_size;
  uint64_t lib_api_workspace;
} AscHostPlatform;

typedef struct AscHostTilingIn {
  uint32_t abi_version;
  const char* op_type; /* OpDef class name, e.g. "AddCustom"; NULL = the only one */
  uint32_t n_inputs;
  const AscHostTensor* inputs;
  uint32_t n_outputs;
  const AscHostTensor* outputs;
  uint32_t n_attrs;
  const AscHostAttr* attrs;
  AscHostPlatform platform;
  uint8_t* tiling_buf;      /* raw tiling data buffer */
  uint64_t tiling_capacity; /* its size in bytes */
} AscHostTilingIn;

/* Who is to blame when status != 0. */
enum AscHostErrorKind {
  ASC_HOST_ERR_NONE = 0,
  /* The request does not fit the library: unknown op type, missing or
   * mistyped attribute, dtype the OpDef does not allow, too many tensors. */
  ASC_HOST_ERR_REQUEST = 1,
  /* The tiling function failed: returned non-zero, threw, or misused an API
   * (SaveToBuffer past the capacity, GetInputShape out of range, ...). */
  ASC_HOST_ERR_TILING = 2
};

/* An output's initial value (OpParamDef::InitValue, guide 6.4.3.4.17): the
 * output's GM is filled with `bits`, an element of `width` bytes
 * (little-endian), repeated, before the kernel runs. */
typedef struct AscHostOutputInit {
  uint32_t output; /* index into AscHostTilingIn.outputs */
  uint32_t width;  /* 1, 2, 4 or 8 */
  uint64_t bits;
} AscHostOutputInit;

typedef struct AscHostTilingOut {
  int32_t status; /* 0 = ge::GRAPH_SUCCESS; anything else is a failed tiling */
  uint32_t error_kind; /* AscHostErrorKind */
  uint32_t block_dim;
  uint64_t tiling_key;
  uint64_t tiling_size; /* bytes of tiling_buf that are set */
  uint32_t n_workspaces;
  uint64_t workspaces[ASC_HOST_MAX_WORKSPACES];
  char message[1024]; /* error text when status != 0 */
  uint32_t n_output_inits;
  AscHostOutputInit output_inits[ASC_HOST_MAX_OUTPUT_INITS];
} AscHostTilingOut;

/* Exported by every host library (crates/sim/runtime_src/host_entry.cpp).
 * Returns status (also stored in out->status). */
int32_t ascendopt_host_tiling(const AscHostTilingIn* in, AscHostTilingOut* out);

#ifdef __cplusplus
}
#endif

#endif /* ASCENDOPT_HOST_ABI_H */
