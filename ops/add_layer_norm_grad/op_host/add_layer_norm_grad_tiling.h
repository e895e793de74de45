// Tiling data of AddLayerNormGrad, shared by the host tiling function and
// the kernel (GET_TILING_DATA).
//
// dy, x1, x2 (and dsum) are viewed as `rows` rows of `cols` elements (cols =
// the elements of gamma, the normalised trailing dims). Rows are split over
// the cores: every core takes `blockRows` rows and the first `tailCoreNum`
// cores one more. A UB tile holds `tileRows` rows, each padded to
// `rowStride` elements. `batched` = 1 when rowStride <= 2040 floats: row
// reductions, row broadcasts and the column sums of dgamma/dbeta use repeat
// strides over all the rows of a tile. Each core leaves its column sums in
// the workspace (2 * rowStride floats per core); after SyncAll, core k sums
// columns [k * finalCols, (k + 1) * finalCols) over the `coreNum` cores.
#ifndef ADD_LAYER_NORM_GRAD_TILING_H
#define ADD_LAYER_NORM_GRAD_TILING_H

#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(AddLayerNormGradTilingData)
TILING_DATA_FIELD_DEF(uint32_t, rows);         // rows of dy (= elements of rstd and mean)
TILING_DATA_FIELD_DEF(uint32_t, cols);         // elements per row (= elements of gamma)
TILING_DATA_FIELD_DEF(uint32_t, rowStride);    // UB elements per row (cols rounded up to 16)
TILING_DATA_FIELD_DEF(uint32_t, blockRows);    // rows of a non-tail core
TILING_DATA_FIELD_DEF(uint32_t, tailCoreNum);  // cores that take one more row
TILING_DATA_FIELD_DEF(uint32_t, tileRows);     // rows per UB tile
TILING_DATA_FIELD_DEF(uint32_t, coreNum);      // cores launched (rows of the workspace)
TILING_DATA_FIELD_DEF(uint32_t, finalCols);    // columns of dgamma/dbeta summed by one core (multiple of 8)
TILING_DATA_FIELD_DEF(uint32_t, hasDsum);      // 1 when dsum is given
TILING_DATA_FIELD_DEF(uint32_t, batched);      // 1: strided row/column operations (rowStride <= 2040)
TILING_DATA_FIELD_DEF(uint32_t, bufferNum);    // buffers per queue (2 = double buffering)
TILING_DATA_FIELD_DEF(float, invCols);         // 1 / cols
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(AddLayerNormGrad, AddLayerNormGradTilingData)
}  // namespace optiling

#endif  // ADD_LAYER_NORM_GRAD_TILING_H
