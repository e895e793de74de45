// ComplexMatMul tiling data: the Matmul API's TCubeTiling of the real
// product [M, 2K] x [2K, 2N] and the shape of the B' build.
#ifndef COMPLEX_MAT_MUL_TILING_H
#define COMPLEX_MAT_MUL_TILING_H

#include "register/tilingdata_base.h"
#include "tiling/tiling_api.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(ComplexMatMulTilingData)
TILING_DATA_FIELD_DEF_STRUCT(TCubeTiling, cubeTilingData);
TILING_DATA_FIELD_DEF(uint32_t, batch);        // product of the batch dimensions
TILING_DATA_FIELD_DEF(uint32_t, m);            // rows of x and z
TILING_DATA_FIELD_DEF(uint32_t, k);            // columns of x, rows of y (complex)
TILING_DATA_FIELD_DEF(uint32_t, n);            // columns of y and z (complex)
TILING_DATA_FIELD_DEF(uint32_t, hasBias);      // bias given: z starts as the bias, the product adds onto it
TILING_DATA_FIELD_DEF(uint32_t, rowsPerTile);  // rows of y per UB tile of the B' build
TILING_DATA_FIELD_DEF(uint32_t, segLen);       // floats of a row per UB tile (2N, or less for a wide row)
TILING_DATA_FIELD_DEF(uint32_t, blocksPerBatch);  // singleCoreM x singleCoreN blocks of one batch's z
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(ComplexMatMul, ComplexMatMulTilingData)
}  // namespace optiling

#endif  // COMPLEX_MAT_MUL_TILING_H
