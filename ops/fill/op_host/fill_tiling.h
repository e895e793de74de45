// Tiling data of Fill (y of shape `dims`, every element `value`), shared by
// the host tiling function and the kernel (GET_TILING_DATA).
//
// Work split: y is cut into split units of SPLIT_UNIT_BYTES (see
// op_host/fill.cpp); every core takes `blockUnits` units and the first
// `tailCoreNum` cores take one more. Each core fills one UB tile of
// `tileLength` elements once and copies it out over its range.
#ifndef FILL_TILING_H
#define FILL_TILING_H

#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(FillTilingData)
TILING_DATA_FIELD_DEF(uint32_t, totalLength);  // elements of y
TILING_DATA_FIELD_DEF(uint32_t, unitLength);   // elements per split unit
TILING_DATA_FIELD_DEF(uint32_t, blockUnits);   // units of a non-tail core
TILING_DATA_FIELD_DEF(uint32_t, tailCoreNum);  // cores that take one more unit
TILING_DATA_FIELD_DEF(uint32_t, tileLength);   // elements of the UB tile
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(Fill, FillTilingData)
}  // namespace optiling

#endif  // FILL_TILING_H
