// Tiling data of GroupNormSwish, shared by the host tiling function and the
// kernel (GET_TILING_DATA).
//
// x (N, C, *) in NCHW is `groups` = N * numGroups contiguous groups of
// `groupLen` = (C / numGroups) * hw elements (group u = n * numGroups + g
// holds channels g * chPerGroup .. (g + 1) * chPerGroup - 1 of sample n).
// Groups are split over the cores: every core takes `blockGroups` groups and
// the first `tailCoreNum` cores one more. A UB tile holds `tileGroups`
// groups, each padded to `groupStride` elements. The per-element gamma and
// beta of a tile are rows of a parameter tile: `cyclic` = 1 when the tile
// holds the rows of tileGroups + numGroups - 1 consecutive groups, built
// once, and a tile starting at group u uses the rows from u % numGroups on;
// otherwise they are gathered for each tile. `batched` = 1 when groupStride
// <= 2040 floats: group reductions and broadcasts use repeat strides over
// all the groups of a tile.
#ifndef GROUP_NORM_SWISH_TILING_H
#define GROUP_NORM_SWISH_TILING_H

#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(GroupNormSwishTilingData)
TILING_DATA_FIELD_DEF(uint32_t, groups);       // N * numGroups
TILING_DATA_FIELD_DEF(uint32_t, numGroups);    // attr num_groups
TILING_DATA_FIELD_DEF(uint32_t, channels);     // C
TILING_DATA_FIELD_DEF(uint32_t, chPerGroup);   // C / numGroups
TILING_DATA_FIELD_DEF(uint32_t, hw);           // elements per channel
TILING_DATA_FIELD_DEF(uint32_t, groupLen);     // chPerGroup * hw
TILING_DATA_FIELD_DEF(uint32_t, groupStride);  // UB elements per group (groupLen rounded up to 16)
TILING_DATA_FIELD_DEF(uint32_t, blockGroups);  // groups of a non-tail core
TILING_DATA_FIELD_DEF(uint32_t, tailCoreNum);  // cores that take one more group
TILING_DATA_FIELD_DEF(uint32_t, tileGroups);   // groups per UB tile
TILING_DATA_FIELD_DEF(uint32_t, cyclic);       // 1: parameter tile built once (see above)
TILING_DATA_FIELD_DEF(uint32_t, batched);      // 1: strided reductions and broadcasts
TILING_DATA_FIELD_DEF(uint32_t, swish);        // attr activate_swish
TILING_DATA_FIELD_DEF(uint32_t, bufferNum);    // buffers per queue (2 = double buffering)
TILING_DATA_FIELD_DEF(float, eps);             // attr eps
TILING_DATA_FIELD_DEF(float, swishScale);      // attr swish_scale
TILING_DATA_FIELD_DEF(float, invGroupLen);     // 1 / groupLen
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(GroupNormSwish, GroupNormSwishTilingData)
}  // namespace optiling

#endif  // GROUP_NORM_SWISH_TILING_H
