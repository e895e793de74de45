// Tiling data of SwiGluGrad (x_grad = cat(dA, dB) for y = SiLU(A) * B, A
// and B the halves of x along `dim`), shared by the host tiling function and
// the kernel (GET_TILING_DATA).
//
// x is viewed as [rows, 2, cols]: rows = the product of the dims before
// `dim`, cols = (size of `dim`) / 2 * (product of the dims after it), so A
// and B of a row are contiguous runs of `cols` elements, y_grad is
// [rows, cols] and x_grad is laid out like x. Work units are (row, column
// chunk) pairs, row-major; every core takes `blockUnits` units and the first
// `tailCoreNum` cores one more.
// With one chunk per row a tile holds up to `tileRows` rows (strided copies);
// otherwise a tile is one chunk of `chunkLen` columns.
#ifndef SWI_GLU_GRAD_TILING_H
#define SWI_GLU_GRAD_TILING_H

#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(SwiGluGradTilingData)
TILING_DATA_FIELD_DEF(uint32_t, rows);         // rows of the [rows, 2, cols] view
TILING_DATA_FIELD_DEF(uint32_t, cols);         // elements of A (= B = y_grad) per row
TILING_DATA_FIELD_DEF(uint32_t, chunkLen);     // columns per chunk
TILING_DATA_FIELD_DEF(uint32_t, chunkNum);     // chunks per row
TILING_DATA_FIELD_DEF(uint32_t, tileRows);     // rows per tile when chunkNum == 1
TILING_DATA_FIELD_DEF(uint32_t, tileElems);    // UB elements of one tile buffer
TILING_DATA_FIELD_DEF(uint32_t, blockUnits);   // units of a non-tail core
TILING_DATA_FIELD_DEF(uint32_t, tailCoreNum);  // cores that take one more unit
TILING_DATA_FIELD_DEF(uint32_t, bufferNum);    // buffers per queue (2 = double buffering)
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(SwiGluGrad, SwiGluGradTilingData)
}  // namespace optiling

#endif  // SWI_GLU_GRAD_TILING_H
