// Tiling data of Reshape (y = x's bytes in a new shape), shared by the host
// tiling function and the kernel (GET_TILING_DATA).
//
// The kernel copies bytes: the flat tensor is cut into split units of
// `unitBytes`; every core takes `blockUnits` units and the first
// `tailCoreNum` cores take one more. Each core streams its range through UB
// in tiles of `tileBytes` with `bufferNum` buffers.
#ifndef RESHAPE_TILING_H
#define RESHAPE_TILING_H

#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(ReshapeTilingData)
TILING_DATA_FIELD_DEF(uint64_t, totalBytes);  // bytes of x (= y)
TILING_DATA_FIELD_DEF(uint32_t, unitBytes);   // bytes per split unit
TILING_DATA_FIELD_DEF(uint32_t, blockUnits);  // units of a non-tail core
TILING_DATA_FIELD_DEF(uint32_t, tailCoreNum); // cores that take one unit more
TILING_DATA_FIELD_DEF(uint32_t, tileBytes);   // bytes per full UB tile
TILING_DATA_FIELD_DEF(uint32_t, bufferNum);   // buffers of the queue (2 = double buffering)
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(Reshape, ReshapeTilingData)
}  // namespace optiling

#endif  // RESHAPE_TILING_H
