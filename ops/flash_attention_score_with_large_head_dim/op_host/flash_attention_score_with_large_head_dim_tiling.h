// FlashAttentionScoreWithLargeHeadDim tiling data: the attention's shape,
// the blocking (query rows per task, key rows per S2 block, rows per
// vector chunk) and the two Matmul API tilings (S = Q K^T and O = P V).
#ifndef FLASH_ATTENTION_SCORE_WITH_LARGE_HEAD_DIM_TILING_H
#define FLASH_ATTENTION_SCORE_WITH_LARGE_HEAD_DIM_TILING_H

#include "register/tilingdata_base.h"
#include "tiling/tiling_api.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(FlashAttentionScoreWithLargeHeadDimTilingData)
TILING_DATA_FIELD_DEF(uint32_t, batch);       // B
TILING_DATA_FIELD_DEF(uint32_t, s1);          // query rows per batch
TILING_DATA_FIELD_DEF(uint32_t, s2);          // key/value rows per batch
TILING_DATA_FIELD_DEF(uint32_t, hq);          // H = N x D
TILING_DATA_FIELD_DEF(uint32_t, hkv);         // Hkv = Nkv x D
TILING_DATA_FIELD_DEF(uint32_t, headNum);     // N
TILING_DATA_FIELD_DEF(uint32_t, groupSize);   // N / Nkv: query heads per KV head
TILING_DATA_FIELD_DEF(uint32_t, headDim);     // D
TILING_DATA_FIELD_DEF(uint32_t, headDimPad);  // D rounded up to 16 (32-byte rows in float and half)
TILING_DATA_FIELD_DEF(uint32_t, rows);        // query rows per task (the cube's M)
TILING_DATA_FIELD_DEF(uint32_t, cols);        // key rows per S2 block, a multiple of 64
TILING_DATA_FIELD_DEF(uint32_t, chunkS);      // rows per vector chunk of the softmax
TILING_DATA_FIELD_DEF(uint32_t, chunkO);      // rows per vector chunk of the output update
TILING_DATA_FIELD_DEF(uint32_t, s1Blocks);    // ceil(s1 / rows)
TILING_DATA_FIELD_DEF(uint32_t, taskNum);     // B x N x s1Blocks
TILING_DATA_FIELD_DEF(uint32_t, workBytes);   // bytes of one vector work buffer
TILING_DATA_FIELD_DEF(uint32_t, wsPerCore);   // user workspace bytes per vector core
TILING_DATA_FIELD_DEF(float, scale);          // scale_value
TILING_DATA_FIELD_DEF_STRUCT(TCubeTiling, qkTiling);  // S = Q K^T: rows x cols, K = D
TILING_DATA_FIELD_DEF_STRUCT(TCubeTiling, pvTiling);  // O = P V: rows x D, K = cols
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(FlashAttentionScoreWithLargeHeadDim, FlashAttentionScoreWithLargeHeadDimTilingData)
}  // namespace optiling

#endif  // FLASH_ATTENTION_SCORE_WITH_LARGE_HEAD_DIM_TILING_H
