// ComplexMatMul kernel: z = x @ y (+ bias), complex64, as one real matrix
// product per batch on the cube (see the host code for the layout):
//
//   [M, 2K] (x as floats) x B' [2K, 2N] = [M, 2N] (z as floats),
//   B' row 2k = y row k = (yr, yi, ...), row 2k + 1 = (-yi, yr, ...).
//
// A MIX kernel (the Matmul API makes it AIC:AIV 1:2). The vector cores
// first build B' in the workspace: each takes UB tiles of y's rows in turn,
// copies them to B''s even rows and, by one Gather from [tile | -tile],
// their pair-swapped, sign-flipped copies to the odd rows. With a bias they
// also copy it into z. After SyncAll each vector core takes work items
// (batch b, singleCoreM x singleCoreN block of z) round-robin and has its AI
// core's cube core compute the block with one IterateAll: onto the bias
// already in z by atomic add, or straight into z.
#include "kernel_operator.h"
#include "lib/matmul_intf.h"

using namespace AscendC;

namespace {
constexpr uint32_t UB_TILE = 4096;  // floats of one B' build tile (the host's constant)

using AType = matmul::MatmulType<TPosition::GM, matmul::CubeFormat::ND, float>;
using BType = matmul::MatmulType<TPosition::GM, matmul::CubeFormat::ND, float>;
using CType = matmul::MatmulType<TPosition::GM, matmul::CubeFormat::ND, float>;
using BiasType = matmul::MatmulType<TPosition::GM, matmul::CubeFormat::ND, float>;

class BuildB {
public:
    __aicore__ inline BuildB(TPipe& pipe, GM_ADDR y, GM_ADDR w, uint64_t rows, uint32_t width, uint32_t rowsPerTile,
                             uint32_t segLen)
        : rows_(rows), width_(width), rowsPerTile_(rowsPerTile), segLen_(segLen)
    {
        yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(y));
        wGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(w));
        pipe.InitBuffer(inQ_, 2, 2 * UB_TILE * sizeof(float));
        pipe.InitBuffer(outQ_, 2, 2 * UB_TILE * sizeof(float));
        pipe.InitBuffer(offBuf_, UB_TILE * sizeof(int32_t));
    }

    // Byte offsets of the Gather into [tile | -tile]: element t of the
    // result is -tile[t + 1] for even t and tile[t - 1] for odd t. Eight by
    // the scalar unit, then doubled by vector adds (offset t + len is
    // offset t + 4 len for an even len).
    __aicore__ inline void MakeOffsets()
    {
        LocalTensor<int32_t> off = offBuf_.Get<int32_t>();
        for (int32_t t = 0; t < 8; ++t) {
            off.SetValue(t, t % 2 == 0 ? static_cast<int32_t>(4 * (UB_TILE + t + 1)) : 4 * (t - 1));
        }
        event_t sv = static_cast<event_t>(GetTPipePtr()->FetchEventID(HardEvent::S_V));
        SetFlag<HardEvent::S_V>(sv);
        WaitFlag<HardEvent::S_V>(sv);
        for (uint32_t len = 8; len < UB_TILE; len *= 2) {
            Adds(off[len], off, static_cast<int32_t>(4 * len), len);
            PipeBarrier<PIPE_V>();
        }
    }

    __aicore__ inline void Run(uint32_t idx, uint32_t workers)
    {
        const uint32_t segs = (width_ + segLen_ - 1) / segLen_;
        const uint64_t rowTiles = (rows_ + rowsPerTile_ - 1) / rowsPerTile_;
        const uint64_t units = rowTiles * segs;
        for (uint64_t u = idx; u < units; u += workers) {
            const uint64_t r0 = (u / segs) * rowsPerTile_;
            const uint32_t c0 = static_cast<uint32_t>(u % segs) * segLen_;
            const uint32_t nr = static_cast<uint32_t>(rows_ - r0 < rowsPerTile_ ? rows_ - r0 : rowsPerTile_);
            const uint32_t cl = width_ - c0 < segLen_ ? width_ - c0 : segLen_;
            Tile(r0, c0, nr, cl);
        }
    }

private:
    __aicore__ inline void Tile(uint64_t r0, uint32_t c0, uint32_t nr, uint32_t cl)
    {
        const uint32_t pitch = (cl + 7) / 8 * 8;  // floats of a row in UB
        const uint32_t count = nr * pitch;
        LocalTensor<float> in = inQ_.AllocTensor<float>();
        DataCopyExtParams load(static_cast<uint16_t>(nr), cl * sizeof(float), (width_ - cl) * sizeof(float), 0, 0);
        DataCopyPad(in, yGm_[r0 * width_ + c0], load, DataCopyPadExtParams<float>(false, 0, 0, 0.0f));
        inQ_.EnQue(in);
        in = inQ_.DeQue<float>();
        LocalTensor<float> out = outQ_.AllocTensor<float>();
        // [tile | -tile] in the input buffer, then the even rows' copy and
        // the odd rows' swap into the output buffer.
        Muls(in[UB_TILE], in, -1.0f, count);
        Muls(out, in, 1.0f, count);
        PipeBarrier<PIPE_V>();
        LocalTensor<uint32_t> off = offBuf_.Get<uint32_t>();
        Gather(out[UB_TILE], in, off, 0, count);
        inQ_.FreeTensor(in);
        outQ_.EnQue(out);
        out = outQ_.DeQue<float>();
        // B' rows 2r (y as it is) and 2r + 1 (swapped): rows 2 x width apart.
        DataCopyExtParams store(static_cast<uint16_t>(nr), cl * sizeof(float), 0, (2 * width_ - cl) * sizeof(float),
                                0);
        DataCopyPad(wGm_[2 * r0 * width_ + c0], out, store);
        DataCopyPad(wGm_[(2 * r0 + 1) * width_ + c0], out[UB_TILE], store);
        outQ_.FreeTensor(out);
    }

    uint64_t rows_;
    uint32_t width_;
    uint32_t rowsPerTile_;
    uint32_t segLen_;
    GlobalTensor<float> yGm_;
    GlobalTensor<float> wGm_;
    TQue<TPosition::VECIN, 2> inQ_;
    TQue<TPosition::VECOUT, 2> outQ_;
    TBuf<TPosition::VECCALC> offBuf_;
};

// z starts as the bias: contiguous pieces of UB_TILE floats, round-robin.
__aicore__ inline void CopyBias(TPipe& pipe, GM_ADDR bias, GM_ADDR z, uint64_t total, uint32_t idx, uint32_t workers)
{
    GlobalTensor<float> bGm;
    GlobalTensor<float> zGm;
    bGm.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(bias));
    zGm.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(z));
    TQueBind<TPosition::VECIN, TPosition::VECOUT, 2> q;
    pipe.InitBuffer(q, 2, UB_TILE * sizeof(float));
    const uint64_t pieces = (total + UB_TILE - 1) / UB_TILE;
    for (uint64_t p = idx; p < pieces; p += workers) {
        const uint64_t at = p * UB_TILE;
        const uint32_t len = static_cast<uint32_t>(total - at < UB_TILE ? total - at : UB_TILE);
        LocalTensor<float> t = q.AllocTensor<float>();
        DataCopyExtParams cp(1, len * sizeof(float), 0, 0, 0);
        DataCopyPad(t, bGm[at], cp, DataCopyPadExtParams<float>(false, 0, 0, 0.0f));
        q.EnQue(t);
        t = q.DeQue<float>();
        DataCopyPad(zGm[at], t, cp);
        q.FreeTensor(t);
    }
}
}  // namespace

extern "C" __global__ __aicore__ void complex_mat_mul(GM_ADDR x, GM_ADDR y, GM_ADDR bias, GM_ADDR z,
                                                      GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    TPipe pipe;
    matmul::Matmul<AType, BType, CType, BiasType> mm;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &tilingData.cubeTilingData);
    const TCubeTiling& t = tilingData.cubeTilingData;
    const uint32_t idx = GetBlockIdx();
    const uint32_t workers = GetBlockNum() * GetSubBlockNum();
    const uint32_t batch = tilingData.batch;
    const uint32_t m = tilingData.m;
    const uint32_t width = 2 * tilingData.n;  // floats of a row of y, B' and z
    const uint64_t kk = 2 * static_cast<uint64_t>(tilingData.k);  // floats of a row of x, rows of B'
    GM_ADDR w = GetUserWorkspace(workspace);
    const bool hasBias = tilingData.hasBias != 0;

    {
        BuildB build(pipe, y, w, static_cast<uint64_t>(batch) * tilingData.k, width, tilingData.rowsPerTile,
                     tilingData.segLen);
        build.MakeOffsets();
        build.Run(idx, workers);
    }
    if (hasBias) {
        CopyBias(pipe, bias, z, static_cast<uint64_t>(batch) * m * width, idx, workers);
    }
    // Every B' row and the bias in GM before any cube core reads them.
    PipeBarrier<PIPE_ALL>();
    SyncAll();

    const uint32_t blocks = tilingData.blocksPerBatch;
    const int32_t mBlocks = (t.M + t.singleCoreM - 1) / t.singleCoreM;
    GlobalTensor<float> aGm;
    GlobalTensor<float> bGm;
    GlobalTensor<float> cGm;
    for (uint32_t item = idx; item < batch * blocks; item += workers) {
        const uint32_t b = item / blocks;
        const int32_t blk = static_cast<int32_t>(item % blocks);
        const int32_t m0 = (blk % mBlocks) * t.singleCoreM;
        const int32_t n0 = (blk / mBlocks) * t.singleCoreN;
        const int32_t tailM = t.M - m0 < t.singleCoreM ? t.M - m0 : t.singleCoreM;
        const int32_t tailN = t.N - n0 < t.singleCoreN ? t.N - n0 : t.singleCoreN;
        if (tailM <= 0 || tailN <= 0) {
            continue;
        }
        aGm.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(x) + (static_cast<uint64_t>(b) * m + m0) * kk);
        bGm.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(w) + static_cast<uint64_t>(b) * kk * width + n0);
        cGm.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(z) + (static_cast<uint64_t>(b) * m + m0) * width + n0);
        mm.SetTensorA(aGm);
        mm.SetTensorB(bGm);
        mm.SetTail(tailM, tailN);
        mm.IterateAll(cGm, hasBias ? 1 : 0);
    }
    mm.End();
}
