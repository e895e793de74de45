// Tiling data of GeGluGradV2, shared by the host tiling function and the
// kernel (GET_TILING_DATA).
//
// x is viewed as `rows` rows of two halves of `rowLen` elements each, around
// attr `dim`: rows = product of the dims before dim, rowLen = (size of dim /
// 2) * product of the dims after it. The activated half starts `actOffset`
// elements into a row (rowLen for activate_left = false, else 0), the other
// half `linOffset`. dy and gelu are `rows` x `rowLen`; dx has x's layout.
//
// Work is cut into units: a unit is a whole row (mode 1, rows mode) or a
// chunk of `chunkLen` elements of a row (mode 2, split mode, rows longer than
// a tile; `chunksPerRow` chunks per row). Every core takes `blockUnits`
// consecutive units and the first `tailCoreNum` cores one more. Mode 1
// moves `tileRows` rows per UB tile, each padded to `rowStride` elements (a
// whole 32 B block).
#ifndef GE_GLU_GRAD_V2_TILING_H
#define GE_GLU_GRAD_V2_TILING_H

#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(GeGluGradV2TilingData)
TILING_DATA_FIELD_DEF(uint32_t, rows);          // rows of x (= rows of dy)
TILING_DATA_FIELD_DEF(uint32_t, rowLen);        // elements of one half row (= one row of dy)
TILING_DATA_FIELD_DEF(uint32_t, rowStride);     // UB elements per row in mode 1 (rowLen rounded up to 32 B)
TILING_DATA_FIELD_DEF(uint32_t, chunkLen);      // elements per unit in mode 2
TILING_DATA_FIELD_DEF(uint32_t, chunksPerRow);  // units per row (1 in mode 1)
TILING_DATA_FIELD_DEF(uint32_t, blockUnits);    // units of a non-tail core
TILING_DATA_FIELD_DEF(uint32_t, tailCoreNum);   // cores that take one more unit
TILING_DATA_FIELD_DEF(uint32_t, tileRows);      // rows per UB tile in mode 1
TILING_DATA_FIELD_DEF(uint32_t, tileElems);     // elements of one UB tile buffer
TILING_DATA_FIELD_DEF(uint32_t, actOffset);     // offset of the activated half in a row of x
TILING_DATA_FIELD_DEF(uint32_t, linOffset);     // offset of the other half
TILING_DATA_FIELD_DEF(uint32_t, bufferNum);     // buffers per queue (2 = double buffering)
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(GeGluGradV2, GeGluGradV2TilingData)
}  // namespace optiling

#endif  // GE_GLU_GRAD_V2_TILING_H
