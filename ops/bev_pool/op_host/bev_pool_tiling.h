// Tiling data of BevPool, shared by the host tiling function and the
// kernel (GET_TILING_DATA).
//
// The kernel partitions the output: the grid g [B, cells = Dz*Dy*Dx, C] is
// cut into items of whole cells, `itemsPerBatch` per batch (sliceCells
// cells each, the last of a batch fewer), and every core takes
// `blockItems` items (the first `tailCoreNum` cores one more). For an item
// the core keeps the item's g slice in UB, scans every interval in order
// and adds the entries whose ranks_bev fall in the slice, so each cell
// sees its additions in the reference's order. Entries are scanned in
// chunks of `chunkEntries`, intervals read in chunks of `chunkIntervals`.
#ifndef BEV_POOL_TILING_H
#define BEV_POOL_TILING_H

#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(BevPoolTilingData)
TILING_DATA_FIELD_DEF(uint32_t, depthNum);        // elements of depth
TILING_DATA_FIELD_DEF(uint32_t, featNum);         // elements of feat
TILING_DATA_FIELD_DEF(uint32_t, points);          // P (entries of the ranks)
TILING_DATA_FIELD_DEF(uint32_t, intervals);       // K
TILING_DATA_FIELD_DEF(uint32_t, channels);        // C
TILING_DATA_FIELD_DEF(uint32_t, cells);           // Dz * Dy * Dx
TILING_DATA_FIELD_DEF(uint32_t, sliceCells);      // cells of a full item
TILING_DATA_FIELD_DEF(uint32_t, itemsPerBatch);
TILING_DATA_FIELD_DEF(uint32_t, items);           // B * itemsPerBatch
TILING_DATA_FIELD_DEF(uint32_t, blockItems);      // items of a non-tail core
TILING_DATA_FIELD_DEF(uint32_t, tailCoreNum);     // cores that take one item more
TILING_DATA_FIELD_DEF(uint32_t, chunkEntries);    // entries per scanned chunk (multiple of 64)
TILING_DATA_FIELD_DEF(uint32_t, chunkIntervals);  // intervals per UB chunk (multiple of 8)
TILING_DATA_FIELD_DEF(uint32_t, rowPitch);        // UB elements per output row of an item (32 B multiple)
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(BevPool, BevPoolTilingData)
}  // namespace optiling

#endif  // BEV_POOL_TILING_H
