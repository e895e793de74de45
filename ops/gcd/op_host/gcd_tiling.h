// Tiling data of Gcd (y = gcd(|x1|, |x2|) with numpy broadcasting), shared by
// the host tiling function and the kernel (GET_TILING_DATA).
//
// The broadcast output is collapsed to [outDims[0..3], cols]: the last
// dimension is contiguous in y; in it each input is either contiguous
// (x?Inner = 1) or one value per row (x?Inner = 0, broadcast). Rows
// enumerate outDims (outDims[3] fastest); x?Strides give each input's element
// stride per outer dimension (0 where it is broadcast). Work units are (row,
// column chunk) pairs, row-major; every core takes `blockUnits` units and the
// first `tailCoreNum` cores one more. With one chunk per row a tile holds up
// to `tileRows` rows of one outDims[3] run; otherwise a tile is one chunk.
#ifndef GCD_TILING_H
#define GCD_TILING_H

#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(GcdTilingData)
TILING_DATA_FIELD_DEF_ARR(uint32_t, 4, outDims);    // outer dims of the collapsed output (leading 1s)
TILING_DATA_FIELD_DEF_ARR(uint32_t, 4, x1Strides);  // x1 element stride per outer dim
TILING_DATA_FIELD_DEF_ARR(uint32_t, 4, x2Strides);  // x2 element stride per outer dim
TILING_DATA_FIELD_DEF(uint32_t, rows);              // product of outDims
TILING_DATA_FIELD_DEF(uint32_t, cols);              // innermost collapsed dim
TILING_DATA_FIELD_DEF(uint32_t, x1Inner);           // 1: x1 contiguous in cols, 0: broadcast
TILING_DATA_FIELD_DEF(uint32_t, x2Inner);           // 1: x2 contiguous in cols, 0: broadcast
TILING_DATA_FIELD_DEF(uint32_t, chunkLen);          // columns per chunk
TILING_DATA_FIELD_DEF(uint32_t, chunkNum);          // chunks per row
TILING_DATA_FIELD_DEF(uint32_t, tileRows);          // rows per tile when chunkNum == 1
TILING_DATA_FIELD_DEF(uint32_t, tileElems);         // UB elements of one tile buffer
TILING_DATA_FIELD_DEF(uint32_t, blockUnits);        // units of a non-tail core
TILING_DATA_FIELD_DEF(uint32_t, tailCoreNum);       // cores that take one more unit
TILING_DATA_FIELD_DEF(uint32_t, bufferNum);         // buffers per queue (2 = double buffering)
TILING_DATA_FIELD_DEF(uint32_t, minIters);          // Euclid steps before the first all-done check
TILING_DATA_FIELD_DEF(uint32_t, checkEvery);        // Euclid steps between all-done checks
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(Gcd, GcdTilingData)
}  // namespace optiling

#endif  // GCD_TILING_H
