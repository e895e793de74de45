// Tiling data of LinSpace (num evenly spaced values from start to stop,
// both included), shared by the host tiling function and the kernel
// (GET_TILING_DATA).
//
// Work split: the num output elements are cut into split units of 512 B;
// every core takes `blockUnits` units and the first `tailCoreNum` take one
// more. Each core builds its range in UB tiles of `tileLength` elements with
// `bufferNum` buffers and streams them out. start and stop are read by the
// kernel from GM (num, the output length, is what the tiling needs).
#ifndef LIN_SPACE_TILING_H
#define LIN_SPACE_TILING_H

#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(LinSpaceTilingData)
TILING_DATA_FIELD_DEF(uint32_t, totalLength);  // num, elements of output
TILING_DATA_FIELD_DEF(uint32_t, unitLength);   // elements per split unit
TILING_DATA_FIELD_DEF(uint32_t, blockUnits);   // units of a non-tail core
TILING_DATA_FIELD_DEF(uint32_t, tailCoreNum);  // cores that take one unit more
TILING_DATA_FIELD_DEF(uint32_t, tileLength);   // elements per full UB tile
TILING_DATA_FIELD_DEF(uint32_t, bufferNum);    // buffers of the output queue (2 = double buffering)
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(LinSpace, LinSpaceTilingData)
}  // namespace optiling

#endif  // LIN_SPACE_TILING_H
