// Tiling data of ScatterReduce (torch.scatter_reduce(x, dim, index, src,
// reduce, include_self)), shared by the host tiling function and the kernel
// (GET_TILING_DATA).
//
// Shapes: x is [outer, dimX, inner] around `dim`, index and src are
// [outer, dimSrc, inner]. A work unit is one outer slice, one chunk of
// `chunkLen` inner columns (the last chunk takes what is left) and one block
// of `blockRows` target rows; the outer * chunkNum * rowBlockNum units are
// dealt out in order, `blockUnits` per core and one more to the first
// `tailCoreNum` cores (see op_host/scatter_reduce.cpp). A unit keeps its
// targets in UB and streams the src and index rows in tiles of `tileRows`.
#ifndef SCATTER_REDUCE_TILING_H
#define SCATTER_REDUCE_TILING_H

#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(ScatterReduceTilingData)
TILING_DATA_FIELD_DEF(uint32_t, outer);        // product of the dimensions before dim
TILING_DATA_FIELD_DEF(uint32_t, dimX);         // x.shape[dim]
TILING_DATA_FIELD_DEF(uint32_t, dimSrc);       // index.shape[dim] = src.shape[dim]
TILING_DATA_FIELD_DEF(uint32_t, inner);        // product of the dimensions after dim
TILING_DATA_FIELD_DEF(uint32_t, chunkLen);     // inner columns of a unit (a multiple of 16)
TILING_DATA_FIELD_DEF(uint32_t, chunkNum);     // column chunks per outer slice
TILING_DATA_FIELD_DEF(uint32_t, blockRows);    // target rows of a unit
TILING_DATA_FIELD_DEF(uint32_t, rowBlockNum);  // row blocks per column chunk
TILING_DATA_FIELD_DEF(uint32_t, blockUnits);   // units of a non-tail core
TILING_DATA_FIELD_DEF(uint32_t, tailCoreNum);  // cores that take one unit more
TILING_DATA_FIELD_DEF(uint32_t, tileRows);     // src and index rows per UB tile
TILING_DATA_FIELD_DEF(uint32_t, bufferNum);    // buffers per input queue (2 = double buffering)
TILING_DATA_FIELD_DEF(uint32_t, vectorPath);   // 1: one-hot vector reduction per target row (keys + 20)
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(ScatterReduce, ScatterReduceTilingData)
}  // namespace optiling

#endif  // SCATTER_REDUCE_TILING_H
