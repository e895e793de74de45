// Tiling data of StridedSliceAssignV2, shared by the host tiling function
// and the kernel (GET_TILING_DATA).
//
// var (rank `rank` >= 2 after a leading 1 is added to a 1-D var) is viewed
// as rows of its last dim `varDims[rank-1]`. Every core takes `blockRows`
// rows and the first `tailCoreNum` cores one more: it copies them to the
// output, then writes the rows of input_value whose destination row is its
// own. Per dim j the slice starts at `begins[j]` with step `steps[j]` and has
// `valDims[j]` elements (the last dim has step 1).
#ifndef STRIDED_SLICE_ASSIGN_V2_TILING_H
#define STRIDED_SLICE_ASSIGN_V2_TILING_H

#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(StridedSliceAssignV2TilingData)
TILING_DATA_FIELD_DEF(uint32_t, rank);
TILING_DATA_FIELD_DEF_ARR(uint32_t, 8, varDims);
TILING_DATA_FIELD_DEF_ARR(uint32_t, 8, valDims);
TILING_DATA_FIELD_DEF_ARR(uint32_t, 8, begins);
TILING_DATA_FIELD_DEF_ARR(uint32_t, 8, steps);
TILING_DATA_FIELD_DEF(uint32_t, rows);          // var rows (elements / last dim)
TILING_DATA_FIELD_DEF(uint32_t, blockRows);     // rows of a non-tail core
TILING_DATA_FIELD_DEF(uint32_t, tailCoreNum);   // cores that take one row more
TILING_DATA_FIELD_DEF(uint32_t, tileElems);     // elements per copy tile
TILING_DATA_FIELD_DEF(uint32_t, valTileRows);   // value rows per write tile
TILING_DATA_FIELD_DEF(uint32_t, bufferNum);     // buffers per queue (2 = double buffering)
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(StridedSliceAssignV2, StridedSliceAssignV2TilingData)
}  // namespace optiling

#endif  // STRIDED_SLICE_ASSIGN_V2_TILING_H
