// ascendopt AscendC emulation: parameter structs of high-level APIs that
// kernels declare and fill themselves (guide 6.2.4.6.1 Sum: SumParams,
// 6.2.4.6.2 Mean: MeanParams, 6.2.4.9.1 Select: SelectWithBytesMaskShapeInfo),
// with the fields and defaults the guide lists. The APIs that take them
// live with the high-level libraries (lib/...); a kernel can name the
// structs as soon as it includes kernel_operator.h.
#ifndef ASCENDOPT_KERNEL_API_PARAMS_H
#define ASCENDOPT_KERNEL_API_PARAMS_H

#include <stdint.h>

namespace AscendC {

// Sum over the inner axis: `outter` rows of `inner` elements (padded to
// 32 bytes), of which the first `n` count.
struct SumParams {
  uint32_t outter = 1;
  uint32_t inner;
  uint32_t n;
};

// Mean over the inner axis, laid out as SumParams.
struct MeanParams {
  uint32_t outter = 1;
  uint32_t inner;
  uint32_t n;
};

// Shapes of Select with a byte mask: `firstAxis` rows; `srcLastAxis`
// elements of the source and `maskLastAxis` (>= srcLastAxis) of the mask
// per row.
struct SelectWithBytesMaskShapeInfo {
  uint32_t firstAxis = 0;
  uint32_t srcLastAxis = 0;
  uint32_t maskLastAxis = 0;
};

}  // namespace AscendC

#endif
