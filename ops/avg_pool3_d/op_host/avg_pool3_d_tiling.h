// Tiling data of AvgPool3D (NDHWC), shared by the host tiling function and
// the kernel (GET_TILING_DATA).
//
// x [n, inD, inH, inW, c] -> y [n, outD, outH, outW, c]. Per axis a window
// starts at o * stride - padBefore and spans ksize (clipped at the input for
// the sum). In UB a C-vector occupies `cStride` elements (c rounded up to
// 32 B). A work item is (n, od, chunk of `chunkRows` output rows); every
// core takes `blockItems` items and the first `tailCoreNum` cores one more.
#ifndef AVG_POOL3_D_TILING_H
#define AVG_POOL3_D_TILING_H

#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(AvgPool3DTilingData)
TILING_DATA_FIELD_DEF(uint32_t, batch);
TILING_DATA_FIELD_DEF(uint32_t, channels);
TILING_DATA_FIELD_DEF(uint32_t, cStride);
TILING_DATA_FIELD_DEF_ARR(uint32_t, 3, inSize);     // D, H, W
TILING_DATA_FIELD_DEF_ARR(uint32_t, 3, outSize);
TILING_DATA_FIELD_DEF_ARR(uint32_t, 3, ksize);
TILING_DATA_FIELD_DEF_ARR(uint32_t, 3, stride);
TILING_DATA_FIELD_DEF_ARR(uint32_t, 3, padBefore);
TILING_DATA_FIELD_DEF_ARR(uint32_t, 3, padAfter);
TILING_DATA_FIELD_DEF(uint32_t, countIncludePad);   // 1: divide by the padded window
TILING_DATA_FIELD_DEF(uint32_t, divisorOverride);   // > 0: divide by it
TILING_DATA_FIELD_DEF(uint32_t, chunkRows);         // output rows (oh) per tile
TILING_DATA_FIELD_DEF(uint32_t, chunkNum);          // ceil(outH / chunkRows)
TILING_DATA_FIELD_DEF(uint32_t, inRowsCap);         // input rows (h) per tile
TILING_DATA_FIELD_DEF(uint32_t, blockItems);        // items of a non-tail core
TILING_DATA_FIELD_DEF(uint32_t, tailCoreNum);       // cores that take one item more
TILING_DATA_FIELD_DEF(uint32_t, bufferNum);         // buffers per queue (2 = double buffering)
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(AvgPool3D, AvgPool3DTilingData)
}  // namespace optiling

#endif  // AVG_POOL3_D_TILING_H
