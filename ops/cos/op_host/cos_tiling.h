// Tiling data of Cos (y = cos(x)), shared by the host tiling function
// and the kernel (GET_TILING_DATA).
//
// Work split: the flat tensor is cut into split units of SPLIT_UNIT_BYTES
// (see op_host/cos.cpp); every core takes `blockUnits` units and the first
// `tailCoreNum` cores take one more. Each core streams its range through UB in
// tiles of `tileLength` elements with `bufferNum` buffers per queue.
#ifndef COS_TILING_H
#define COS_TILING_H

#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(CosTilingData)
TILING_DATA_FIELD_DEF(uint32_t, totalLength);  // elements of x (= y)
TILING_DATA_FIELD_DEF(uint32_t, unitLength);   // elements per split unit
TILING_DATA_FIELD_DEF(uint32_t, blockUnits);   // units of a non-tail core
TILING_DATA_FIELD_DEF(uint32_t, tailCoreNum);  // cores that take one more unit
TILING_DATA_FIELD_DEF(uint32_t, tileLength);   // elements per full UB tile
TILING_DATA_FIELD_DEF(uint32_t, bufferNum);    // buffers per queue (2 = double buffering)
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(Cos, CosTilingData)
}  // namespace optiling

#endif  // COS_TILING_H
