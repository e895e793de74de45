#ifndef TRIU_TILING_H
#define TRIU_TILING_H
#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(TriuTilingData)
TILING_DATA_FIELD_DEF(uint32_t, rows);       // rows of all matrices together
TILING_DATA_FIELD_DEF(uint32_t, height);     // rows of one matrix
TILING_DATA_FIELD_DEF(uint32_t, width);      // columns
TILING_DATA_FIELD_DEF(int32_t, diagonal);
TILING_DATA_FIELD_DEF(uint32_t, rowsPerCore);
TILING_DATA_FIELD_DEF(uint32_t, tileRows);
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(Triu, TriuTilingData)
}  // namespace optiling
#endif
