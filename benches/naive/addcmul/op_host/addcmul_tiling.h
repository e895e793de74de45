#ifndef ADDCMUL_TILING_H
#define ADDCMUL_TILING_H
#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(AddcmulTilingData)
TILING_DATA_FIELD_DEF(uint32_t, totalLength);
TILING_DATA_FIELD_DEF(uint32_t, tileLength);
TILING_DATA_FIELD_DEF(uint32_t, valueIsScalar);
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(Addcmul, AddcmulTilingData)
}  // namespace optiling
#endif
