// Tiling data of ForeachNonFiniteCheckAndUnscale (every tensor of
// scaled_grads multiplied by inv_scale in place; found_inf set to 1.0 when
// one element is +-inf or NaN), shared by the host tiling function and the
// kernel (GET_TILING_DATA).
//
// Work split: every tensor of the list is cut into split units of
// `unitLength` elements (the last unit of a tensor may be shorter); the
// units of all tensors, in list order, are dealt to the cores: every core
// takes `blockUnits` consecutive units and the first `tailCoreNum` cores
// one more. A core streams its units through UB in tiles of at most
// `tileLength` elements with `bufferNum` buffers per queue.
#ifndef FOREACH_NON_FINITE_CHECK_AND_UNSCALE_TILING_H
#define FOREACH_NON_FINITE_CHECK_AND_UNSCALE_TILING_H

#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(ForeachNonFiniteCheckAndUnscaleTilingData)
TILING_DATA_FIELD_DEF(uint32_t, tensorNum);    // tensors in the list
TILING_DATA_FIELD_DEF(uint32_t, unitLength);   // elements per split unit
TILING_DATA_FIELD_DEF(uint32_t, blockUnits);   // units of a non-tail core
TILING_DATA_FIELD_DEF(uint32_t, tailCoreNum);  // cores that take one unit more
TILING_DATA_FIELD_DEF(uint32_t, tileLength);   // elements per full UB tile
TILING_DATA_FIELD_DEF(uint32_t, bufferNum);    // buffers per queue (2 = double buffering)
TILING_DATA_FIELD_DEF_ARR(uint64_t, 256, tensorLength);  // elements of each tensor
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(ForeachNonFiniteCheckAndUnscale, ForeachNonFiniteCheckAndUnscaleTilingData)
}  // namespace optiling

#endif  // FOREACH_NON_FINITE_CHECK_AND_UNSCALE_TILING_H
