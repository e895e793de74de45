// Tiling data of RmsNorm, shared by the host tiling function and the kernel
// (GET_TILING_DATA).
//
// x is viewed as `rows` rows of `cols` elements (cols = last dim, gamma has
// `cols` elements). Rows are split over the cores: every core takes
// `blockRows` rows and the first `tailCoreNum` cores take one more. In UB a
// row occupies `rowStride` elements (cols rounded up to a 32 B block, zero
// padded). The tiling key is dtype * 10 + mode (see op_host/rms_norm.cpp):
// modes 1 (batched rows) and 2 (row by row) move `tileRows` rows per tile;
// mode 3 (split rows, for rows larger than UB) moves `chunkLen` elements of
// one row per tile; mode 4 (split columns, for few long rows) gives every
// core a column range of all rows, in units of `colUnit` elements
// (`colBlockUnits` units per core, one more for the first `colTailCoreNum`
// cores), kept resident in UB with rows `rowStride` apart when chunkLen is 0,
// else streamed in chunks of `chunkLen` elements.
#ifndef RMS_NORM_TILING_H
#define RMS_NORM_TILING_H

#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(RmsNormTilingData)
TILING_DATA_FIELD_DEF(uint32_t, rows);         // rows of x (= elements of rstd)
TILING_DATA_FIELD_DEF(uint32_t, cols);         // elements per row (= elements of gamma)
TILING_DATA_FIELD_DEF(uint32_t, rowStride);    // UB elements per row (cols, or mode 4 columns, rounded up to 32 B)
TILING_DATA_FIELD_DEF(uint32_t, blockRows);    // rows of a non-tail core
TILING_DATA_FIELD_DEF(uint32_t, tailCoreNum);  // cores that take one more row
TILING_DATA_FIELD_DEF(uint32_t, tileRows);     // rows per UB tile (modes 1, 2)
TILING_DATA_FIELD_DEF(uint32_t, chunkLen);     // elements per UB chunk of a row (modes 3, 4)
TILING_DATA_FIELD_DEF(uint32_t, colUnit);      // elements per column split unit (mode 4)
TILING_DATA_FIELD_DEF(uint32_t, colBlockUnits);   // column units of a non-tail core (mode 4)
TILING_DATA_FIELD_DEF(uint32_t, colTailCoreNum);  // cores that take one more column unit (mode 4)
TILING_DATA_FIELD_DEF(uint32_t, bufferNum);    // buffers per queue (2 = double buffering)
TILING_DATA_FIELD_DEF(float, epsilon);         // attr `epsilon`
TILING_DATA_FIELD_DEF(float, invCols);         // 1 / cols, for the mean
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(RmsNorm, RmsNormTilingData)
}  // namespace optiling

#endif  // RMS_NORM_TILING_H
