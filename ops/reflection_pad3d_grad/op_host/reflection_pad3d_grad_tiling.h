// Tiling data of ReflectionPad3dGrad, shared by the host tiling function
// and the kernel (GET_TILING_DATA).
//
// x is the gradient of the padded tensor, viewed as [planes, Do, Ho, Wo];
// y is [planes, D, H, W] with Do = D + padD0 + padD1 etc. A work item is
// (plane, d, row chunk): chunk c covers `baseRows` (+1 for c < `extraRows`)
// output rows; every core takes `blockItems` items and the first
// `tailCoreNum` cores one more. In UB a padded row occupies `rowStride`
// elements (Wo rounded up to 32 B); a tile holds at most `tileRows` output
// rows plus the pad rows above and below.
#ifndef REFLECTION_PAD3D_GRAD_TILING_H
#define REFLECTION_PAD3D_GRAD_TILING_H

#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(ReflectionPad3dGradTilingData)
TILING_DATA_FIELD_DEF(uint32_t, planes);       // product of the leading dims
TILING_DATA_FIELD_DEF(uint32_t, outD);         // D, H, W of y
TILING_DATA_FIELD_DEF(uint32_t, outH);
TILING_DATA_FIELD_DEF(uint32_t, outW);
TILING_DATA_FIELD_DEF(uint32_t, padD0);        // (before, after) pads of D, H, W
TILING_DATA_FIELD_DEF(uint32_t, padD1);
TILING_DATA_FIELD_DEF(uint32_t, padH0);
TILING_DATA_FIELD_DEF(uint32_t, padH1);
TILING_DATA_FIELD_DEF(uint32_t, padW0);
TILING_DATA_FIELD_DEF(uint32_t, padW1);
TILING_DATA_FIELD_DEF(uint32_t, rowStride);    // UB elements per padded row
TILING_DATA_FIELD_DEF(uint32_t, tileRows);     // most output rows of a chunk
TILING_DATA_FIELD_DEF(uint32_t, chunkNum);     // row chunks per output slab
TILING_DATA_FIELD_DEF(uint32_t, baseRows);     // rows of chunk c: baseRows + (c < extraRows)
TILING_DATA_FIELD_DEF(uint32_t, extraRows);
TILING_DATA_FIELD_DEF(uint32_t, specialCols);  // output columns that receive pad columns
TILING_DATA_FIELD_DEF(uint32_t, blockItems);   // items of a non-tail core
TILING_DATA_FIELD_DEF(uint32_t, tailCoreNum);  // cores that take one item more
TILING_DATA_FIELD_DEF(uint32_t, bufferNum);    // buffers per queue (2 = double buffering)
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(ReflectionPad3dGrad, ReflectionPad3dGradTilingData)
}  // namespace optiling

#endif  // REFLECTION_PAD3D_GRAD_TILING_H
