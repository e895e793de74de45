// MatmulAllReduce tiling data: the Matmul API's TCubeTiling and the
// transpositions.
#ifndef MATMUL_ALL_REDUCE_TILING_H
#define MATMUL_ALL_REDUCE_TILING_H

#include "register/tilingdata_base.h"
#include "tiling/tiling_api.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(MatmulAllReduceTilingData)
TILING_DATA_FIELD_DEF_STRUCT(TCubeTiling, cubeTilingData);
TILING_DATA_FIELD_DEF(uint32_t, transA);     // x1 given as [K, M]
TILING_DATA_FIELD_DEF(uint32_t, transB);     // x2 given as [N, K]
TILING_DATA_FIELD_DEF(uint32_t, rankNum);    // ranks of the all-reduce (1: one card)
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(MatmulAllReduce, MatmulAllReduceTilingData)
}  // namespace optiling

#endif  // MATMUL_ALL_REDUCE_TILING_H
