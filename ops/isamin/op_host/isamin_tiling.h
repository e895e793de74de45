// Tiling data of Isamin (BLAS ISAMIN: the 1-based index of the first
// minimum of |x| over the first n elements), shared by the host tiling
// function and the kernel (GET_TILING_DATA).
//
// Work split: the searched elements are cut into split units of 512 B;
// every core takes `blockUnits` units and the first `tailCoreNum` take one
// more. Each core streams its range through UB in tiles of `tileLength`
// elements and reduces every tile; the cores' results meet in the workspace
// (one 32 B slot per core) and core 0 picks the winner after a SyncAll.
#ifndef ISAMIN_TILING_H
#define ISAMIN_TILING_H

#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(IsaminTilingData)
TILING_DATA_FIELD_DEF(uint32_t, searchLength);  // elements searched: min(n, elements of x), 0 if n <= 0
TILING_DATA_FIELD_DEF(uint32_t, unitLength);    // elements per split unit
TILING_DATA_FIELD_DEF(uint32_t, blockUnits);    // units of a non-tail core
TILING_DATA_FIELD_DEF(uint32_t, tailCoreNum);   // cores that take one unit more
TILING_DATA_FIELD_DEF(uint32_t, coreNum);       // cores used (block dim)
TILING_DATA_FIELD_DEF(uint32_t, tileLength);    // elements per full UB tile
TILING_DATA_FIELD_DEF(uint32_t, maxTiles);      // tiles of the largest core range
TILING_DATA_FIELD_DEF(uint32_t, bufferNum);     // buffers of the input queue (2 = double buffering)
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(Isamin, IsaminTilingData)
}  // namespace optiling

#endif  // ISAMIN_TILING_H
