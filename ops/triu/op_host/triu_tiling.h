// Tiling data of Triu (keep x[..., i, j] where j - i >= diagonal, else 0),
// shared by the host tiling function and the kernel (GET_TILING_DATA).
//
// x is seen as matNum matrices of matRows x cols. Two modes (tiling key):
//   batch: whole matrices are the work units and a tile holds
//     tileRows / matRows of them, so every tile has the same keep mask;
//   rows: rows are the units, a tile holds up to tileRows rows of one matrix
//     and chunkCols columns (a row wider than a tile is split in chunks).
// Every core takes `blockUnits` units and the first `tailCoreNum` take one
// more. In UB a tile row occupies rowStride elements (32 B aligned).
#ifndef TRIU_TILING_H
#define TRIU_TILING_H

#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(TriuTilingData)
TILING_DATA_FIELD_DEF(int64_t, diagonal);     // attr `diagonal`
TILING_DATA_FIELD_DEF(uint32_t, matRows);     // rows of one matrix (x.shape[-2])
TILING_DATA_FIELD_DEF(uint32_t, cols);        // columns (x.shape[-1])
TILING_DATA_FIELD_DEF(uint32_t, unitNum);     // work units: matrices (batch) or rows (rows mode)
TILING_DATA_FIELD_DEF(uint32_t, blockUnits);  // units of a non-tail core
TILING_DATA_FIELD_DEF(uint32_t, tailCoreNum); // cores that take one unit more
TILING_DATA_FIELD_DEF(uint32_t, tileRows);    // rows per full tile
TILING_DATA_FIELD_DEF(uint32_t, chunkCols);   // columns per tile (= cols unless rows are split)
TILING_DATA_FIELD_DEF(uint32_t, rowStride);   // UB elements per tile row
TILING_DATA_FIELD_DEF(uint32_t, maskCount);   // tileRows * rowStride rounded up to 256 B of float
TILING_DATA_FIELD_DEF(uint32_t, bufferNum);   // buffers per queue (2 = double buffering)
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(Triu, TriuTilingData)
}  // namespace optiling

#endif  // TRIU_TILING_H
