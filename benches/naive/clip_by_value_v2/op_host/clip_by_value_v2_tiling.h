#ifndef CLIP_BY_VALUE_V2_TILING_H
#define CLIP_BY_VALUE_V2_TILING_H
#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(ClipByValueV2TilingData)
TILING_DATA_FIELD_DEF(uint32_t, totalLength);
TILING_DATA_FIELD_DEF(uint32_t, blockLength);
TILING_DATA_FIELD_DEF(uint32_t, tileLength);
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(ClipByValueV2, ClipByValueV2TilingData)
}  // namespace optiling
#endif
