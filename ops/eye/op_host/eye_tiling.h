// Tiling data of Eye (identity matrices broadcast over batch_shape), shared
// by the host tiling function and the kernel (GET_TILING_DATA).
//
// y is matNum matrices of matRows x cols; in each, the ones sit at flat
// positions k * (cols + 1) for k < min(matRows, cols). The kernel builds one
// pattern tile in UB and streams it (and a zero tile) to GM. Two modes
// (tiling key):
//   batch: a matrix fits in a tile; the pattern holds patternElems / (matRows
//     * cols) whole matrices and matrices are the work units;
//   periodic: the pattern holds whole periods of cols + 1 elements (a one
//     then cols zeros) and rows are the work units.
// Every core takes `blockUnits` units and the first `tailCoreNum` one more.
#ifndef EYE_TILING_H
#define EYE_TILING_H

#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(EyeTilingData)
TILING_DATA_FIELD_DEF(uint32_t, matRows);       // rows of one matrix (num_rows)
TILING_DATA_FIELD_DEF(uint32_t, cols);          // columns (num_columns, 0 = num_rows)
TILING_DATA_FIELD_DEF(uint32_t, unitNum);       // work units: matrices (batch) or rows (periodic)
TILING_DATA_FIELD_DEF(uint32_t, blockUnits);    // units of a non-tail core
TILING_DATA_FIELD_DEF(uint32_t, tailCoreNum);   // cores that take one unit more
TILING_DATA_FIELD_DEF(uint32_t, patternElems);  // elements of the pattern tile
TILING_DATA_FIELD_DEF(uint32_t, zeroElems);     // elements of the zero tile
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(Eye, EyeTilingData)
}  // namespace optiling

#endif  // EYE_TILING_H
