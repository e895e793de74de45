// MotionCompensation kernel: out = the LiDAR points moved to the pose at
// timestamp_max (float32 [ndim, N], uint64 timestamps [N]).
//
// Every vector core takes a balanced, contiguous range of columns and
// streams it through UB in tiles of tilePoints columns with double-buffered
// queues, so MTE2, V and MTE3 overlap. Per tile:
// - three DataCopyPads bring the rows x, y, z (one each: in the model a
//   strided 3-block copy costs more than three plain ones), one the
//   timestamps (two int32 words each), three store the output rows; tile
//   i + 1 is read while tile i is computed. The extra rows (3
//   onward) go GM -> UB -> GM through a bound queue, their chunks spread
//   over the tiles.
// - GatherMask (pattern 1: the even words) takes the low 32 bits of the
//   timestamps; tau' = float(tMaxLow32 - low) (int32 difference), and
//   tau = tau' f, with f folded into the host's constants.
// - with rotation, one Sin call over 2 x m lanes gives sin(tau theta) and
//   sin((1 - tau) theta); then w, rn = 2 / |q|^2, alpha, beta and per row
//   p' = gamma p + alpha (v . p) v + beta (v x p) + tau T with the host's
//   constants (tiling header): 24 vector instructions besides the Sin.
// - Compare(x == x) and one Select per row copy the columns whose x is NaN.
// All vector work runs over m = the tile's columns rounded up to 64 (whole
// 256 B repeats); the extra lanes are never stored.
#include "kernel_operator.h"

using namespace AscendC;

constexpr int32_t QUE_DEPTH = 2;  // queue depth; buffers per queue = tiling bufferNum
constexpr uint32_t LANES = 64;    // floats per 256 B repeat
constexpr uint32_t BLOCK_BYTES = 32;
constexpr uint32_t SCRATCH_ROWS = 10;
constexpr uint32_t EXTRA_ROWS = 1;  // tile rows per chunk of the extra-row copy

class KernelMotionCompensation {
public:
    __aicore__ inline KernelMotionCompensation() {}

    template <typename TilingData>
    __aicore__ inline void Init(GM_ADDR points, GM_ADDR timestamp, GM_ADDR out, const TilingData& td, TPipe* pipe)
    {
        uint64_t blockIdx = static_cast<uint64_t>(GetBlockIdx());
        uint64_t bigUnits = static_cast<uint64_t>(td.blockUnits) + 1;
        uint64_t startUnit;
        uint64_t units;
        if (blockIdx < td.tailCoreNum) {
            startUnit = blockIdx * bigUnits;
            units = bigUnits;
        } else {
            startUnit = td.tailCoreNum * bigUnits + (blockIdx - td.tailCoreNum) * td.blockUnits;
            units = td.blockUnits;
        }
        uint64_t start = startUnit * td.unitPoints;
        uint64_t length = units * td.unitPoints;
        if (start >= td.n) {
            length = 0;
        } else if (start + length > td.n) {
            length = td.n - start;
        }
        start_ = start;
        length_ = static_cast<uint32_t>(length);
        n_ = td.n;
        ndim_ = td.ndim;
        tile_ = td.tilePoints;
        rotate_ = td.rotate != 0;
        theta_ = td.thetaF;
        thetaFull_ = td.theta;
        signQw_ = td.sign * td.qw;
        vv_ = td.vv;
        for (int i = 0; i < 3; ++i) {
            v_[i] = td.v[i];
            sv_[i] = td.sign * td.v[i];
            t_[i] = td.t[i];
        }

        uint64_t elems = static_cast<uint64_t>(td.n) * td.ndim;
        pGm.SetGlobalBuffer((__gm__ float*)points, elems);
        tsGm.SetGlobalBuffer((__gm__ int32_t*)timestamp, static_cast<uint64_t>(td.n) * 2);
        outGm.SetGlobalBuffer((__gm__ float*)out, elems);
        uint32_t rowBytes = tile_ * sizeof(float);
        pipe->InitBuffer(inP, td.bufferNum, 3 * rowBytes);
        pipe->InitBuffer(inTs, td.bufferNum, 2 * rowBytes);
        pipe->InitBuffer(outQ, td.bufferNum, 3 * rowBytes);
        pipe->InitBuffer(extraQ, td.bufferNum, EXTRA_ROWS * rowBytes);
        pipe->InitBuffer(scratchBuf, SCRATCH_ROWS * rowBytes);
        pipe->InitBuffer(twoBuf, rowBytes);
        pipe->InitBuffer(tMaxBuf, rowBytes);
        pipe->InitBuffer(maskBuf, (tile_ / 8 + BLOCK_BYTES - 1) / BLOCK_BYTES * BLOCK_BYTES);
        pipe->InitBuffer(sinTmpBuf, td.sinTmpBytes);

        LocalTensor<float> scratch = scratchBuf.Get<float>();
        tau = scratch;
        ang = scratch[tile_];     // 2 rows
        sn = scratch[3 * tile_];  // 2 rows
        ca = scratch[5 * tile_];
        cb = scratch[6 * tile_];
        cn = scratch[7 * tile_];
        ap = scratch[8 * tile_];
        bp = scratch[9 * tile_];
        lo = ap.ReinterpretCast<int32_t>();  // dead before ap is written
        two = twoBuf.Get<float>();
        tMax = tMaxBuf.Get<int32_t>();
        mask = maskBuf.Get<uint8_t>();
        sinTmp = sinTmpBuf.Get<uint8_t>();
        Duplicate(two, 2.0f, tile_);
        Duplicate(tMax, td.tMaxLow32, tile_);
    }

    __aicore__ inline void Process()
    {
        if (length_ == 0) {
            return;
        }
        // Tile i + 1 is read while tile i is computed and stored; the
        // extra rows' chunks are spread over the tiles, each chunk read one
        // ahead, so their copies overlap the vector work.
        uint32_t tileNum = (length_ + tile_ - 1) / tile_;
        uint32_t perRow = (length_ + EXTRA_ROWS * tile_ - 1) / (EXTRA_ROWS * tile_);
        uint32_t chunks = ndim_ > 3 ? (ndim_ - 3) * perRow : 0;
        uint32_t done = 0;
        CopyIn(0, TileCount(0, tileNum));
        if (chunks > 0) {
            ExtraIn(0, perRow);
        }
        for (uint32_t i = 0; i < tileNum; i++) {
            if (i + 1 < tileNum) {
                CopyIn(i + 1, TileCount(i + 1, tileNum));
            }
            uint32_t cnt = TileCount(i, tileNum);
            Compute(cnt);
            CopyOut(start_ + static_cast<uint64_t>(i) * tile_, cnt);
            uint32_t target = static_cast<uint32_t>((static_cast<uint64_t>(i) + 1) * chunks / tileNum);
            for (; done < target; ++done) {
                if (done + 1 < chunks) {
                    ExtraIn(done + 1, perRow);
                }
                ExtraOut(done, perRow);
            }
        }
    }

private:
    __aicore__ inline uint32_t TileCount(uint32_t i, uint32_t tileNum) const
    {
        return (i + 1 == tileNum) ? length_ - (tileNum - 1) * tile_ : tile_;
    }

    __aicore__ inline void CopyIn(uint32_t i, uint32_t cnt)
    {
        uint64_t col = start_ + static_cast<uint64_t>(i) * tile_;
        LocalTensor<float> p = inP.AllocTensor<float>();
        LocalTensor<int32_t> ts = inTs.AllocTensor<int32_t>();
        DataCopyExtParams row{1, static_cast<uint32_t>(cnt * sizeof(float)), 0, 0, 0};
        DataCopyPadExtParams<float> padF{false, 0, 0, 0.0f};
        for (uint32_t r = 0; r < 3; ++r) {
            DataCopyPad(p[r * tile_], pGm[static_cast<uint64_t>(r) * n_ + col], row, padF);
        }
        DataCopyExtParams words{1, static_cast<uint32_t>(cnt * 2 * sizeof(int32_t)), 0, 0, 0};
        DataCopyPadExtParams<int32_t> padI{false, 0, 0, 0};
        DataCopyPad(ts, tsGm[2 * col], words, padI);
        inP.EnQue(p);
        inTs.EnQue(ts);
    }

    __aicore__ inline void Compute(uint32_t cnt)
    {
        uint32_t m = (cnt + LANES - 1) / LANES * LANES;
        LocalTensor<float> p = inP.DeQue<float>();
        LocalTensor<int32_t> ts = inTs.DeQue<int32_t>();
        LocalTensor<float> o = outQ.AllocTensor<float>();

        uint64_t kept = 0;
        GatherMask(lo, ts, static_cast<uint8_t>(1), false, 0,
                   GatherMaskParams(1, static_cast<uint16_t>(m / 32), 8, 0), kept);
        inTs.FreeTensor(ts);
        Sub(lo, tMax, lo, m);
        // tau' = tMaxLow32 - low; f is folded into theta_ and t_ (host).
        Cast(tau, lo, RoundMode::CAST_NONE, m);

        if (rotate_) {
            // ang = [tau theta | (1 - tau) theta], one Sin over both
            // (theta_ is theta f, thetaFull_ theta).
            // (Local names for the scratch rows written by vector-scalar
            // ops keep their data flow inside this function.)
            LocalTensor<float> angles = ang;
            LocalTensor<float> dot = ap;
            LocalTensor<float> gamma = cn;
            Muls(angles, tau, theta_, m);
            Muls(ang[m], tau, -theta_, m);
            Adds(ang[m], ang[m], thetaFull_, m);
            Sin(sn, angles, sinTmp, 2 * m);     // S1 = sin(tau theta), S0 = sin((1 - tau) theta)
            // q = (S0 + sign qw S1, sign S1 v) / sin theta; R(q) does not
            // depend on the scale of q, so 1 / sin theta drops out and the
            // sign moves into the cross term.
            Axpy(sn[m], sn, signQw_, m);     // w = S0 + sign qw S1
            Mul(ang, sn, sn, m);             // S1^2
            Mul(cn, sn[m], sn[m], m);        // w^2
            Axpy(cn, ang, vv_, m);           // |q|^2
            Div(cn, two, cn, m);             // rn = 2 / |q|^2
            Mul(ang, ang, cn, m);            // alpha = rn S1^2
            Mul(cb, sn[m], sn, m);
            Mul(cb, cb, cn, m);              // sign beta = rn w S1
            // s = v . p; ca = alpha s; cn = gamma = 1 - vv alpha.
            Muls(dot, p, v_[0], m);
            Axpy(dot, p[tile_], v_[1], m);
            Axpy(dot, p[2 * tile_], v_[2], m);
            Mul(ca, ang, dot, m);
            Muls(gamma, ang, -vv_, m);
            Adds(gamma, gamma, 1.0f, m);
            // sign beta p, row by row: bp, ang, ang[tile] (alpha is dead).
            Mul(bp, cb, p, m);
            Mul(ang, cb, p[tile_], m);
            Mul(ang[tile_], cb, p[2 * tile_], m);
            RotateRow(o, p, 0, 1, 2, m);
            RotateRow(o, p, 1, 2, 0, m);
            RotateRow(o, p, 2, 0, 1, m);
        } else {
            for (uint32_t r = 0; r < 3; ++r) {
                Muls(o[r * tile_], tau, t_[r], m);
                Add(o[r * tile_], o[r * tile_], p[r * tile_], m);
            }
        }
        // Columns whose x is NaN are copied.
        Compare(mask, p, p, CMPMODE::EQ, m);
        for (uint32_t r = 0; r < 3; ++r) {
            Select(o[r * tile_], mask, o[r * tile_], p[r * tile_], SELMODE::VSEL_TENSOR_TENSOR_MODE, m);
        }
        outQ.EnQue<float>(o);
        inP.FreeTensor(p);
    }

    // Row r of p' = gamma p + alpha (v . p) v + beta (v x p) + tau T, with
    // (v x p)_r = v_j p_k - v_k p_j for (r, j, k) a cyclic order; the
    // rows of sign beta p are bp, ang and ang[tile], sv_ = sign v.
    __aicore__ inline void RotateRow(const LocalTensor<float>& o, const LocalTensor<float>& p, uint32_t r, uint32_t j,
                                     uint32_t k, uint32_t m)
    {
        LocalTensor<float> out = o[r * tile_];
        Mul(out, p[r * tile_], cn, m);
        Axpy(out, ca, v_[r], m);
        Axpy(out, BetaRow(k), sv_[j], m);
        Axpy(out, BetaRow(j), -sv_[k], m);
        Axpy(out, tau, t_[r], m);
    }

    __aicore__ inline LocalTensor<float> BetaRow(uint32_t i) const
    {
        return i == 0 ? bp : (i == 1 ? ang : ang[tile_]);
    }

    __aicore__ inline void CopyOut(uint64_t col, uint32_t cnt)
    {
        LocalTensor<float> o = outQ.DeQue<float>();
        DataCopyExtParams row{1, static_cast<uint32_t>(cnt * sizeof(float)), 0, 0, 0};
        for (uint32_t r = 0; r < 3; ++r) {
            DataCopyPad(outGm[static_cast<uint64_t>(r) * n_ + col], o[r * tile_], row);
        }
        outQ.FreeTensor(o);
    }

    // Chunk c of the extra rows (3 onward) of this core's columns: row 3 +
    // c / perRow, EXTRA_ROWS tile rows long.
    __aicore__ inline void ExtraAt(uint32_t c, uint32_t perRow, uint64_t& at, uint32_t& cnt) const
    {
        uint32_t row = 3 + c / perRow;
        uint32_t part = c % perRow;
        uint32_t chunk = EXTRA_ROWS * tile_;
        at = static_cast<uint64_t>(row) * n_ + start_ + static_cast<uint64_t>(part) * chunk;
        cnt = part + 1 == perRow ? length_ - part * chunk : chunk;
    }

    __aicore__ inline void ExtraIn(uint32_t c, uint32_t perRow)
    {
        uint64_t at = 0;
        uint32_t cnt = 0;
        ExtraAt(c, perRow, at, cnt);
        DataCopyExtParams row{1, static_cast<uint32_t>(cnt * sizeof(float)), 0, 0, 0};
        DataCopyPadExtParams<float> padF{false, 0, 0, 0.0f};
        LocalTensor<float> e = extraQ.AllocTensor<float>();
        DataCopyPad(e, pGm[at], row, padF);
        extraQ.EnQue(e);
    }

    __aicore__ inline void ExtraOut(uint32_t c, uint32_t perRow)
    {
        uint64_t at = 0;
        uint32_t cnt = 0;
        ExtraAt(c, perRow, at, cnt);
        DataCopyExtParams row{1, static_cast<uint32_t>(cnt * sizeof(float)), 0, 0, 0};
        LocalTensor<float> e = extraQ.DeQue<float>();
        DataCopyPad(outGm[at], e, row);
        extraQ.FreeTensor(e);
    }

private:
    TQue<QuePosition::VECIN, QUE_DEPTH> inP;
    TQue<QuePosition::VECIN, QUE_DEPTH> inTs;
    TQue<QuePosition::VECOUT, QUE_DEPTH> outQ;
    TQueBind<QuePosition::VECIN, QuePosition::VECOUT, QUE_DEPTH> extraQ;
    TBuf<QuePosition::VECCALC> scratchBuf;
    TBuf<QuePosition::VECCALC> twoBuf;
    TBuf<QuePosition::VECCALC> tMaxBuf;
    TBuf<QuePosition::VECCALC> maskBuf;
    TBuf<QuePosition::VECCALC> sinTmpBuf;
    GlobalTensor<float> pGm;
    GlobalTensor<int32_t> tsGm;
    GlobalTensor<float> outGm;
    LocalTensor<int32_t> lo;
    LocalTensor<float> tau;
    LocalTensor<float> ang;
    LocalTensor<float> sn;
    LocalTensor<float> ca;
    LocalTensor<float> cb;
    LocalTensor<float> cn;
    LocalTensor<float> ap;
    LocalTensor<float> bp;
    LocalTensor<float> two;
    LocalTensor<int32_t> tMax;
    LocalTensor<uint8_t> mask;
    LocalTensor<uint8_t> sinTmp;
    uint64_t start_ = 0;
    uint32_t length_ = 0;
    uint32_t n_ = 0;
    uint32_t ndim_ = 0;
    uint32_t tile_ = 0;
    bool rotate_ = false;
    float theta_ = 0.0f;
    float thetaFull_ = 0.0f;
    float signQw_ = 0.0f;
    float vv_ = 0.0f;
    float v_[3] = {0.0f, 0.0f, 0.0f};
    float sv_[3] = {0.0f, 0.0f, 0.0f};
    float t_[3] = {0.0f, 0.0f, 0.0f};
};

extern "C" __global__ __aicore__ void motion_compensation(GM_ADDR points, GM_ADDR timestamp, GM_ADDR out,
                                                          GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    if (TILING_KEY_IS(1)) {
        KernelMotionCompensation op;
        op.Init(points, timestamp, out, tilingData, &pipe);
        op.Process();
    }
}
