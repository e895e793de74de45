// Tiling data of Cast (y = x converted to dst_type), shared by the host tiling
// function and the kernel (GET_TILING_DATA).
//
// Work split: the flat tensor is cut into split units of SPLIT_UNIT_BYTES of
// the narrower dtype (see op_host/cast.cpp), so every core range is aligned in
// both x and y; every core takes `blockUnits` units and the first
// `tailCoreNum` cores take one more. Each core streams its range through UB
// in tiles of `tileLength` elements with `bufferNum` buffers per queue. The
// (source, destination) pair is the tiling key.
#ifndef CAST_TILING_H
#define CAST_TILING_H

#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(CastTilingData)
TILING_DATA_FIELD_DEF(uint32_t, totalLength);  // elements of x (= y)
TILING_DATA_FIELD_DEF(uint32_t, unitLength);   // elements per split unit
TILING_DATA_FIELD_DEF(uint32_t, blockUnits);   // units of a non-tail core
TILING_DATA_FIELD_DEF(uint32_t, tailCoreNum);  // cores that take one more unit
TILING_DATA_FIELD_DEF(uint32_t, tileLength);   // elements per full UB tile
TILING_DATA_FIELD_DEF(uint32_t, bufferNum);    // buffers per queue (2 = double buffering)
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(Cast, CastTilingData)
}  // namespace optiling

#endif  // CAST_TILING_H
