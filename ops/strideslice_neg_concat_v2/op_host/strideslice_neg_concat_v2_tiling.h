// Tiling data of StridesliceNegConcatV2 (y[..., :m] = x[..., :m],
// y[..., m:] = -x[..., m:], m = C / 2), shared by the host tiling function
// and the kernel (GET_TILING_DATA).
//
// Work split: the tensor is `rows` rows of `cols` elements; every core takes
// `blockRows` consecutive rows and the first `tailCoreNum` cores one more
// (see op_host/strideslice_neg_concat_v2.cpp). Short rows (tiling key 1-3)
// move `tileRows` whole rows per UB tile and are multiplied by a sign
// pattern of `tileRows` rows built once per core; long rows (key 4-6) move
// each half of a row in chunks of at most `tileCap` elements.
#ifndef STRIDESLICE_NEG_CONCAT_V2_TILING_H
#define STRIDESLICE_NEG_CONCAT_V2_TILING_H

#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(StridesliceNegConcatV2TilingData)
TILING_DATA_FIELD_DEF(uint32_t, rows);         // elements of x / cols
TILING_DATA_FIELD_DEF(uint32_t, cols);         // C, the last dimension
TILING_DATA_FIELD_DEF(uint32_t, half);         // m = C / 2: columns kept as they are
TILING_DATA_FIELD_DEF(uint32_t, blockRows);    // rows of a non-tail core
TILING_DATA_FIELD_DEF(uint32_t, tailCoreNum);  // cores that take one row more
TILING_DATA_FIELD_DEF(uint32_t, tileRows);     // rows per UB tile (short rows; 0 on the long-row path)
TILING_DATA_FIELD_DEF(uint32_t, tileCap);      // elements a UB tile buffer holds
TILING_DATA_FIELD_DEF(uint32_t, bufferNum);    // buffers per queue (2 = double buffering)
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(StridesliceNegConcatV2, StridesliceNegConcatV2TilingData)
}  // namespace optiling

#endif  // STRIDESLICE_NEG_CONCAT_V2_TILING_H
