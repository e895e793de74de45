// Tiling data of AngleV2 (the argument of a real tensor: pi for x < 0, 0 for
// x >= 0, NaN for NaN), shared by the host tiling function and the kernel
// (GET_TILING_DATA).
//
// Work split: the flat tensor is cut into split units of 512 B; every core
// takes `blockUnits` units and the first `tailCoreNum` cores take one more.
// Each core streams its range through UB in tiles of `tileLength` elements
// (a whole number of 256 B vector repeats) with `bufferNum` buffers per
// queue.
#ifndef ANGLE_V2_TILING_H
#define ANGLE_V2_TILING_H

#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(AngleV2TilingData)
TILING_DATA_FIELD_DEF(uint32_t, totalLength);  // elements of x (= y)
TILING_DATA_FIELD_DEF(uint32_t, unitLength);   // elements per split unit
TILING_DATA_FIELD_DEF(uint32_t, blockUnits);   // units of a non-tail core
TILING_DATA_FIELD_DEF(uint32_t, tailCoreNum);  // cores that take one unit more
TILING_DATA_FIELD_DEF(uint32_t, tileLength);   // elements per full UB tile
TILING_DATA_FIELD_DEF(uint32_t, bufferNum);    // buffers per queue (2 = double buffering)
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(AngleV2, AngleV2TilingData)
}  // namespace optiling

#endif  // ANGLE_V2_TILING_H
