// Tiling data of LogicalOr (y = x1 or x2, bool), shared by the host tiling
// function and the kernel (GET_TILING_DATA).
//
// Work split: the flat tensors are cut into split units of SPLIT_UNIT_BYTES
// (see op_host/logical_or.cpp); every core takes `blockUnits` units and the
// first `tailCoreNum` cores take one more. Each core streams its range
// through UB in tiles of `tileLength` elements with `bufferNum` buffers per
// queue.
#ifndef LOGICAL_OR_TILING_H
#define LOGICAL_OR_TILING_H

#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(LogicalOrTilingData)
TILING_DATA_FIELD_DEF(uint32_t, totalLength);  // elements of x1 (= x2 = y)
TILING_DATA_FIELD_DEF(uint32_t, unitLength);   // elements per split unit
TILING_DATA_FIELD_DEF(uint32_t, blockUnits);   // units of a non-tail core
TILING_DATA_FIELD_DEF(uint32_t, tailCoreNum);  // cores that take one more unit
TILING_DATA_FIELD_DEF(uint32_t, tileLength);   // elements per full UB tile
TILING_DATA_FIELD_DEF(uint32_t, bufferNum);    // buffers per queue (2 = double buffering)
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(LogicalOr, LogicalOrTilingData)
}  // namespace optiling

#endif  // LOGICAL_OR_TILING_H
