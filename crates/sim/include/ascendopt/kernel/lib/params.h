// ascendopt AscendC emulation, high-level API library: the parameter
// structs kernels fill for some high-level APIs (guide 6.2.4.6.1 SumParams,
// 6.2.4.6.2 MeanParams, 6.2.4.9.1 SelectWithBytesMaskShapeInfo).
// kernel/api_params.h declares them with the rest of the kernel API; the
// same structs here when that header is absent.
#ifndef ASCENDOPT_KERNEL_LIB_PARAMS_H
#define ASCENDOPT_KERNEL_LIB_PARAMS_H

#include <stdint.h>

#if __has_include("../api_params.h")
#include "../api_params.h"
#else
namespace AscendC {
struct SumParams {
  uint32_t outter = 1;
  uint32_t inner;
  uint32_t n;
};
struct MeanParams {
  uint32_t outter = 1;
  uint32_t inner;
  uint32_t n;
};
struct SelectWithBytesMaskShapeInfo {
  uint32_t firstAxis = 0;
  uint32_t srcLastAxis = 0;
  uint32_t maskLastAxis = 0;
};
}  // namespace AscendC
#endif

#endif
