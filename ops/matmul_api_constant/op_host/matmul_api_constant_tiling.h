// MatmulApiConstant tiling data: the Matmul API's TCubeTiling, filled by
// matmul_tiling::MultiCoreMatmulTiling on the host.
#ifndef MATMUL_API_CONSTANT_TILING_H
#define MATMUL_API_CONSTANT_TILING_H

#include "register/tilingdata_base.h"
#include "tiling/tiling_api.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(MatmulApiConstantTilingData)
TILING_DATA_FIELD_DEF_STRUCT(TCubeTiling, cubeTilingData);
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(MatmulApiConstant, MatmulApiConstantTilingData)
}  // namespace optiling

#endif  // MATMUL_API_CONSTANT_TILING_H
