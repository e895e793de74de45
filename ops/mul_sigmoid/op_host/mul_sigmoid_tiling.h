// Tiling data of MulSigmoid (out[n] = s'[n] * x2 * t3, s' = s < t2 ? s : 2 s,
// s = sigmoid(x1[n] * t1)), shared by the host tiling function and the kernel
// (GET_TILING_DATA).
//
// x1 is [rows, cols] and x2 holds `cols` elements broadcast over the rows.
// Columns are cut into `chunkNum` chunks of `chunkLen`; work units are
// (chunk, row) pairs in chunk-major order, so a core reloads its x2 chunk
// only when the chunk changes. Every core takes `blockUnits` units and the
// first `tailCoreNum` cores one more; a tile holds up to `tileRows` rows of
// one chunk.
#ifndef MUL_SIGMOID_TILING_H
#define MUL_SIGMOID_TILING_H

#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(MulSigmoidTilingData)
TILING_DATA_FIELD_DEF(uint32_t, rows);         // rows of x1 (N)
TILING_DATA_FIELD_DEF(uint32_t, cols);         // columns of x1 (L = x2 elements)
TILING_DATA_FIELD_DEF(uint32_t, chunkLen);     // columns per chunk
TILING_DATA_FIELD_DEF(uint32_t, chunkNum);     // chunks per row
TILING_DATA_FIELD_DEF(uint32_t, tileRows);     // rows per tile
TILING_DATA_FIELD_DEF(uint32_t, tileElems);    // UB elements of one tile buffer (multiple of 128)
TILING_DATA_FIELD_DEF(uint32_t, blockUnits);   // units of a non-tail core
TILING_DATA_FIELD_DEF(uint32_t, tailCoreNum);  // cores that take one more unit
TILING_DATA_FIELD_DEF(uint32_t, bufferNum);    // buffers per queue (2 = double buffering)
TILING_DATA_FIELD_DEF(float, t1);              // attr t1: scale inside the sigmoid
TILING_DATA_FIELD_DEF(float, t2);              // attr t2: threshold
TILING_DATA_FIELD_DEF(float, t3);              // attr t3: output scale
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(MulSigmoid, MulSigmoidTilingData)
}  // namespace optiling

#endif  // MUL_SIGMOID_TILING_H
