// Tiling data of AddSigmoidMulReduceSumD
// (out[b, h] = sum_s sigmoid((a0[b, s, h] + a1[h]) * m0) * m1[b, s] * m2[b, s, h]),
// shared by the host tiling function and the kernel (GET_TILING_DATA).
//
// Work split: a work unit is one batch b, one part of `partRows` rows of S
// (the last part takes what is left) and one chunk of `chunkLen` hidden
// columns (likewise); the B * parts * chunkNum units are dealt out in
// order, `blockUnits` per core and one more to the first `tailCoreNum`
// cores (see op_host/add_sigmoid_mul_reduce_sum_d.cpp). A unit streams its
// rows through UB in tiles of `tileRows` rows. With more than one part, the
// units store float32 partial sums in the workspace and, after SyncAll, the
// B * chunkNum final units (`finalUnits` per core, one more to the first
// `finalTailCoreNum`) add the parts up and store out.
#ifndef ADD_SIGMOID_MUL_REDUCE_SUM_D_TILING_H
#define ADD_SIGMOID_MUL_REDUCE_SUM_D_TILING_H

#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(AddSigmoidMulReduceSumDTilingData)
TILING_DATA_FIELD_DEF(uint32_t, batch);        // B
TILING_DATA_FIELD_DEF(uint32_t, seq);          // S, the reduced dimension
TILING_DATA_FIELD_DEF(uint32_t, hidden);       // H
TILING_DATA_FIELD_DEF(uint32_t, chunkLen);     // hidden columns of a unit (a multiple of 16)
TILING_DATA_FIELD_DEF(uint32_t, chunkNum);     // column chunks per batch
TILING_DATA_FIELD_DEF(uint32_t, parts);        // parts of S per batch (1: no workspace pass)
TILING_DATA_FIELD_DEF(uint32_t, partRows);     // rows of S per part
TILING_DATA_FIELD_DEF(uint32_t, finalUnits);   // final units of a non-tail core
TILING_DATA_FIELD_DEF(uint32_t, finalTailCoreNum);  // cores that take one final unit more
TILING_DATA_FIELD_DEF(uint32_t, blockUnits);   // units of a non-tail core
TILING_DATA_FIELD_DEF(uint32_t, tailCoreNum);  // cores that take one unit more
TILING_DATA_FIELD_DEF(uint32_t, tileRows);     // rows of S per UB tile (at most 255)
TILING_DATA_FIELD_DEF(uint32_t, bufferNum);    // buffers per input queue (2 = double buffering)
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(AddSigmoidMulReduceSumD, AddSigmoidMulReduceSumDTilingData)
}  // namespace optiling

#endif  // ADD_SIGMOID_MUL_REDUCE_SUM_D_TILING_H
