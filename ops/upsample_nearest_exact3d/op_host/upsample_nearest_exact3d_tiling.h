// Tiling data of UpsampleNearestExact3d, shared by the host tiling function
// and the kernel (GET_TILING_DATA).
//
// x is [N, C, D, H, W], y is [N, C, Do, Ho, Wo]; nc = N * C planes. On each
// axis src = min(floor((dst + 0.5) * ratio), in - 1) with ratio the
// (inverted) scale attr or in / out, in float.
//
// Work items: (chunk, group, od), chunk-major. A group is `slabs` planes
// (slab mode, chunkNum = 1, a tile is `slabs` whole Ho x Wo output slabs) or
// one plane (chunk mode, slabs = 1, a tile is `rowsPerChunk` output rows of
// one slab). Every core takes `blockItems` items and the first `tailCoreNum`
// cores one more; consecutive od with the same source slab reuse the tile.
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
TILING_DATA_FIELD_DEF(uint32_t, slabs);         // planes per group (slab mode), else 1
TILING_DATA_FIELD_DEF(uint32_t, groups);        // ceil(nc / slabs)
TILING_DATA_FIELD_DEF(uint32_t, rowsPerChunk);  // output rows per tile (slab mode: outH)
TILING_DATA_FIELD_DEF(uint32_t, chunkNum);      // ceil(outH / rowsPerChunk)
TILING_DATA_FIELD_DEF(uint32_t, inSlabPad);     // UB elements per input plane slice (32 B aligned)
TILING_DATA_FIELD_DEF(uint32_t, outSlabPad);    // UB elements per output slab (32 B aligned)
TILING_DATA_FIELD_DEF(uint32_t, inCap);         // UB elements of an input tile
TILING_DATA_FIELD_DEF(uint32_t, outCap);        // UB elements of an output tile (and its index table)
TILING_DATA_FIELD_DEF(uint32_t, blockItems);    // items of a non-tail core
TILING_DATA_FIELD_DEF(uint32_t, tailCoreNum);   // cores that take one item more
TILING_DATA_FIELD_DEF(uint32_t, bufferNum);     // buffers per queue (2 = double buffering)
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(UpsampleNearestExact3d, UpsampleNearestExact3dTilingData)
}  // namespace optiling

#endif  // UPSAMPLE_NEAREST_EXACT3D_TILING_H
