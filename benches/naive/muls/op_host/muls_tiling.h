#ifndef MULS_TILING_H
#define MULS_TILING_H
#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(MulsTilingData)
TILING_DATA_FIELD_DEF(uint32_t, totalLength);
TILING_DATA_FIELD_DEF(uint32_t, tileNum);
TILING_DATA_FIELD_DEF(float, factor);
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(Muls, MulsTilingData)
}  // namespace optiling
#endif
