// Tiling data of MotionCompensation, shared by the host tiling function and
// the kernel (GET_TILING_DATA).
//
// The host folds the poses into per-launch constants (see
// op_host/motion_compensation.cpp): tau = float(int32(tMaxLow32 - ts low
// word)) * f; with rotation, c1 = sign(d) sin(tau theta), w = sin((1 -
// tau) theta) + qw c1 (the slerp quaternion times sin theta, which R does
// not see), rn = 2 / (w^2 + vv c1^2), alpha = rn c1^2, beta = rn w c1 and
// p' = (1 - vv alpha) p + alpha (v . p)
// v + beta (v x p) + tau T, where v = (qx, qy, qz) is the vector part of
// the relative rotation and vv = |v|^2 (the rotation of the scaled
// quaternion (w, c1 v)). Without rotation p' = p + tau T. A column whose x
// is NaN is copied. The kernel multiplies by f through thetaF = theta f and
// tf = T f, so it never forms tau itself.
//
// Work split: the N columns are cut into split units of `unitPoints`; every
// core takes `blockUnits` units and the first `tailCoreNum` cores one more.
// Each core streams its columns through UB in tiles of `tilePoints`.
#ifndef MOTION_COMPENSATION_TILING_H
#define MOTION_COMPENSATION_TILING_H

#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(MotionCompensationTilingData)
TILING_DATA_FIELD_DEF(uint32_t, n);            // points (columns)
TILING_DATA_FIELD_DEF(uint32_t, ndim);         // rows of points (>= 3)
TILING_DATA_FIELD_DEF(uint32_t, unitPoints);   // points per split unit
TILING_DATA_FIELD_DEF(uint32_t, blockUnits);   // units of a non-tail core
TILING_DATA_FIELD_DEF(uint32_t, tailCoreNum);  // cores that take one unit more
TILING_DATA_FIELD_DEF(uint32_t, tilePoints);   // points per full UB tile (multiple of 128)
TILING_DATA_FIELD_DEF(uint32_t, sinTmpBytes);  // temporary space of the Sin API
TILING_DATA_FIELD_DEF(uint32_t, bufferNum);    // buffers per queue (2 = double buffering)
TILING_DATA_FIELD_DEF(uint32_t, rotate);       // 1: the rotation is interpolated
TILING_DATA_FIELD_DEF(int32_t, tMaxLow32);     // low word of timestamp_max
TILING_DATA_FIELD_DEF(float, theta);           // acos |d|
TILING_DATA_FIELD_DEF(float, thetaF);          // theta f
TILING_DATA_FIELD_DEF(float, sign);           // sign of d (+1 at 0)
TILING_DATA_FIELD_DEF(float, qw);              // w of the relative rotation
TILING_DATA_FIELD_DEF(float, vv);              // |v|^2
TILING_DATA_FIELD_DEF_ARR(float, 3, v);        // x, y, z of the relative rotation
TILING_DATA_FIELD_DEF_ARR(float, 3, t);        // T f, T = R(conj q_max) (t_min - t_max)
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(MotionCompensation, MotionCompensationTilingData)
}  // namespace optiling

#endif  // MOTION_COMPENSATION_TILING_H
