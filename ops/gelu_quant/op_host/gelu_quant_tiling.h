// Tiling data of GeluQuant, shared by the host tiling function and the kernel
// (GET_TILING_DATA).
//
// x is viewed as `rows` rows of `cols` elements (cols = last dim, the
// channels of input_scale/input_offset and the quantisation row of the
// dynamic mode). Rows are split over the cores: every core takes
// `blockRows` rows and the first `tailCoreNum` cores one more. A UB tile
// holds `tileRows` rows, each padded to `rowStride` elements (cols rounded
// up to 32 elements, so that the int8 output rows are whole 32 B blocks
// too). scaleMode / offsetMode: 0 the input is absent (0 elements), 1 one
// value for every channel, 2 one value per channel.
#ifndef GELU_QUANT_TILING_H
#define GELU_QUANT_TILING_H

#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(GeluQuantTilingData)
TILING_DATA_FIELD_DEF(uint32_t, rows);         // rows of x (= elements of out_scale)
TILING_DATA_FIELD_DEF(uint32_t, cols);         // elements per row
TILING_DATA_FIELD_DEF(uint32_t, rowStride);    // UB elements per row (cols rounded up to 32)
TILING_DATA_FIELD_DEF(uint32_t, blockRows);    // rows of a non-tail core
TILING_DATA_FIELD_DEF(uint32_t, tailCoreNum);  // cores that take one more row
TILING_DATA_FIELD_DEF(uint32_t, tileRows);     // rows per UB tile
TILING_DATA_FIELD_DEF(uint32_t, scaleMode);    // input_scale: 0 absent, 1 scalar, 2 per channel
TILING_DATA_FIELD_DEF(uint32_t, offsetMode);   // input_offset: 0 absent, 1 scalar, 2 per channel
TILING_DATA_FIELD_DEF(uint32_t, batched);      // dynamic: 1 = row maxima with repeat strides (rowStride <= 2040)
TILING_DATA_FIELD_DEF(uint32_t, bufferNum);    // buffers per queue (2 = double buffering)
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(GeluQuant, GeluQuantTilingData)
}  // namespace optiling

#endif  // GELU_QUANT_TILING_H
