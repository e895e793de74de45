// Tiling data of UpsampleNearestExact3d, shared by the host tiling function
// and the kernel (GET_TILING_DATA).
//
// x is [N, C, D, H, W], y is [N, C, Do, Ho, Wo]; nc = N * C planes. On each
// axis src = min(floor((dst + 0.5) * ratio), in - 1) with ratio the
// (inverted) scale attr or in / out, in float.
//
// Three tile modes (`mode`), each tile one contiguous range of y:
//   0 volume: `slabs` whole planes (Do x Ho x Wo each) from `slabs` whole
//     input planes, one contiguous copy each way;
//   1 slab: `slabs` consecutive output slabs (Ho x Wo) of the flat
//     (plane, od) order, each from its own input slab;
//   2 chunk: `rowsPerChunk` output rows of one slab; work items are
//     (chunk, plane * Do + od), chunk-major.
// Every core takes `blockItems` items and the first `tailCoreNum` cores one
// more.
#ifndef UPSAMPLE_NEAREST_EXACT3D_TILING_H
#define UPSAMPLE_NEAREST_EXACT3D_TILING_H

#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(UpsampleNearestExact3dTilingData)
TILING_DATA_FIELD_DEF(uint32_t, nc);            // N * C
TILING_DATA_FIELD_DEF(uint32_t, inD);
TILING_DATA_FIELD_DEF(uint32_t, inH);
TILING_DATA_FIELD_DEF(uint32_t, inW);
TILING_DATA_FIELD_DEF(uint32_t, outD);
TILING_DATA_FIELD_DEF(uint32_t, outH);
TILING_DATA_FIELD_DEF(uint32_t, outW);
TILING_DATA_FIELD_DEF(float, ratioD);           // source step per output index
TILING_DATA_FIELD_DEF(float, ratioH);
TILING_DATA_FIELD_DEF(float, ratioW);
TILING_DATA_FIELD_DEF(uint32_t, mode);          // 0 volume, 1 slab, 2 chunk
TILING_DATA_FIELD_DEF(uint32_t, slabs);         // planes (mode 0) or slabs (mode 1) per tile, else 1
TILING_DATA_FIELD_DEF(uint32_t, rowsPerChunk);  // output rows per tile (slab mode: outH)
TILING_DATA_FIELD_DEF(uint32_t, chunkNum);      // ceil(outH / rowsPerChunk)
TILING_DATA_FIELD_DEF(uint32_t, inSlot);        // UB elements per input plane (mode 0) or slab (mode 1)
TILING_DATA_FIELD_DEF(uint32_t, inCap);         // UB elements of an input tile
TILING_DATA_FIELD_DEF(uint32_t, outCap);        // UB elements of an output tile (and its index table)
TILING_DATA_FIELD_DEF(uint32_t, blockItems);    // items of a non-tail core
TILING_DATA_FIELD_DEF(uint32_t, tailCoreNum);   // cores that take one item more
TILING_DATA_FIELD_DEF(uint32_t, bufferNum);     // buffers per queue (2 = double buffering)
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(UpsampleNearestExact3d, UpsampleNearestExact3dTilingData)
}  // namespace optiling

#endif  // UPSAMPLE_NEAREST_EXACT3D_TILING_H
