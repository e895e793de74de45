// Tiling data of UpsampleBilinear2dAA, shared by the host tiling function
// and the kernel (GET_TILING_DATA).
//
// The kernel computes X[p, d, h, w] = sum over (od, oh, ow) of
// wD(d, od) wH(h, oh) wW(w, ow) Y[p, od, oh, ow]
// (Y = the input x, X = the output y; D is a trivial axis of size 1 here). Per axis a (0 D, 1 H,
// 2 W): `src[a]` / `dst[a]` are the sizes of Y and X, `ratio[a]` the torch
// source step, and output index i receives source indices
// base(i) .. base(i) + terms[a] - 1 with base(i) = floor((i + baseOff[a]) *
// baseScale[a] + baseAdd[a]) + baseShift[a] (the host picks the largest
// shift for which no source index falls below the base). In UB a row of Y
// takes `srcStride` elements and a row of X `dstStride`. A work item is
// (plane, chunk of X rows, range of X depths); chunk c has baseRows (+1 for
// c < extraRows) rows, range r baseD (+1 for r < extraD) depths.
#ifndef UPSAMPLE_BILINEAR2D_AA_TILING_H
#define UPSAMPLE_BILINEAR2D_AA_TILING_H

#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(UpsampleBilinear2dAATilingData)
TILING_DATA_FIELD_DEF(uint32_t, planes);
TILING_DATA_FIELD_DEF_ARR(uint32_t, 3, src);
TILING_DATA_FIELD_DEF_ARR(uint32_t, 3, dst);
TILING_DATA_FIELD_DEF_ARR(uint32_t, 3, terms);
TILING_DATA_FIELD_DEF_ARR(float, 3, ratio);
TILING_DATA_FIELD_DEF_ARR(float, 3, support);  // triangle half-width per axis
TILING_DATA_FIELD_DEF_ARR(float, 3, inv);      // argument scale per axis
TILING_DATA_FIELD_DEF_ARR(float, 3, baseOff);
TILING_DATA_FIELD_DEF_ARR(float, 3, baseScale);
TILING_DATA_FIELD_DEF_ARR(float, 3, baseAdd);
TILING_DATA_FIELD_DEF_ARR(int32_t, 3, baseShift);
TILING_DATA_FIELD_DEF(uint32_t, alignCorners);
TILING_DATA_FIELD_DEF(uint32_t, srcStride);    // UB elements per Y row
TILING_DATA_FIELD_DEF(uint32_t, dstStride);    // UB elements per X row
TILING_DATA_FIELD_DEF(uint32_t, srcRowsCap);   // Y rows of a tile
TILING_DATA_FIELD_DEF(uint32_t, tableRows);    // Y rows per gather table
TILING_DATA_FIELD_DEF(uint32_t, tileRows);     // most X rows of a chunk
TILING_DATA_FIELD_DEF(uint32_t, chunkNum);
TILING_DATA_FIELD_DEF(uint32_t, baseRows);
TILING_DATA_FIELD_DEF(uint32_t, extraRows);
TILING_DATA_FIELD_DEF(uint32_t, dParts);       // X depth ranges per (plane, chunk)
TILING_DATA_FIELD_DEF(uint32_t, baseD);        // X depths of a range
TILING_DATA_FIELD_DEF(uint32_t, extraD);       // ranges that take one depth more
TILING_DATA_FIELD_DEF(uint32_t, blockItems);   // items of a non-tail core
TILING_DATA_FIELD_DEF(uint32_t, tailCoreNum);  // cores that take one item more
TILING_DATA_FIELD_DEF(uint32_t, bufferNum);
// The H sums planned on the host (planRuns = 0: not planned): chunk c's
// runs are planStart[c] .. planStart[c + 1]; run i covers X rows r0 .. r0 +
// n - 1 of the chunk (runRows = r0 | n << 8 | kind << 16; kind 0 zero, 1
// first term, 2 later term) with Y rows s0, s0 + ds, ... of the chunk's
// tile (runSrc = s0 | ds << 16) and weight runW. Packed: the kernel reads
// the whole struct through the data cache, 64 B per miss.
TILING_DATA_FIELD_DEF(uint32_t, planRuns);
TILING_DATA_FIELD_DEF_ARR(uint32_t, 17, planStart);
TILING_DATA_FIELD_DEF_ARR(uint32_t, 128, runRows);
TILING_DATA_FIELD_DEF_ARR(uint32_t, 128, runSrc);
TILING_DATA_FIELD_DEF_ARR(float, 128, runW);    // buffers per queue (2 = double buffering)
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(UpsampleBilinear2dAA, UpsampleBilinear2dAATilingData)
}  // namespace optiling

#endif  // UPSAMPLE_BILINEAR2D_AA_TILING_H
