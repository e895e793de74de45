// Tiling data of AddRmsNormDynamicQuant, shared by the host tiling function
// and the kernel (GET_TILING_DATA).
//
// x1 and x2 are viewed as `rows` rows of `cols` elements (cols = the last
// dim = the elements of gamma and of the smooth scales). Rows are split
// over the cores: every core takes `blockRows` rows and the first
// `tailCoreNum` cores one more. A UB tile holds `tileRows` rows, each padded
// to `rowStride` elements (cols rounded up to 32, so that the int8 output
// rows are whole 32 B blocks too). `smoothNum` is the number of smooth
// scales given (0, 1 or 2). `batched` = 1 when rowStride <= 2040 floats:
// row reductions and row broadcasts use repeat strides over all the rows of
// a tile; otherwise they go row by row.
#ifndef ADD_RMS_NORM_DYNAMIC_QUANT_TILING_H
#define ADD_RMS_NORM_DYNAMIC_QUANT_TILING_H

#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(AddRmsNormDynamicQuantTilingData)
TILING_DATA_FIELD_DEF(uint32_t, rows);         // rows of x1 (= elements of scale1/scale2)
TILING_DATA_FIELD_DEF(uint32_t, cols);         // elements per row
TILING_DATA_FIELD_DEF(uint32_t, rowStride);    // UB elements per row (cols rounded up to 32)
TILING_DATA_FIELD_DEF(uint32_t, blockRows);    // rows of a non-tail core
TILING_DATA_FIELD_DEF(uint32_t, tailCoreNum);  // cores that take one more row
TILING_DATA_FIELD_DEF(uint32_t, tileRows);     // rows per UB tile
TILING_DATA_FIELD_DEF(uint32_t, smoothNum);    // smooth scales given: 0, 1 or 2
TILING_DATA_FIELD_DEF(uint32_t, batched);      // 1: strided row reductions and broadcasts (rowStride <= 2040)
TILING_DATA_FIELD_DEF(uint32_t, bufferNum);    // buffers per queue (2 = double buffering)
TILING_DATA_FIELD_DEF(float, epsilon);         // attr `epsilon`
TILING_DATA_FIELD_DEF(float, invCols);         // 1 / cols, for the mean
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(AddRmsNormDynamicQuant, AddRmsNormDynamicQuantTilingData)
}  // namespace optiling

#endif  // ADD_RMS_NORM_DYNAMIC_QUANT_TILING_H
