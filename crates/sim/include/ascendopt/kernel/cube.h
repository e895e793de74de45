// ascendopt AscendC emulation: the cube data path of Atlas A2 (910B).
// GM -(MTE2, DataCopy with Nd2NzParams)-> L1 (A1/B1) -(MTE1, LoadData)->
// L0A (A2) / L0B (B2) -(Mmad, PIPE_M)-> L0C (CO1) -(Fixpipe)-> GM.
// Clean-room, written from the guide (2.6 hardware; 6.2.3.1.1.5 ND2NZ,
// 6.2.3.2.1.2 LoadData, 6.2.3.2.2.1 Mmad, 6.2.3.2.1.12 Fixpipe) and
// ref/hardware-facts.md section D. Every call becomes one AscCubeOp; the
// runtime (crates/sim/src/runtime/cube.rs) checks positions, types,
// alignment and ranges, moves or computes the bytes in the fractal layouts
// and records one instruction.
#ifndef ASCENDOPT_KERNEL_CUBE_H
#define ASCENDOPT_KERNEL_CUBE_H

#include "copy.h"

// Fixpipe quantisation modes (guide table 6-197, quantPre).
enum class QuantMode_t : uint8_t {
  NoQuant = ASC_QUANT_NONE,
  F322F16 = ASC_QUANT_F322F16,
  F322BF16 = ASC_QUANT_F322BF16,
  DEQF16 = ASC_QUANT_DEQF16,
  VDEQF16 = ASC_QUANT_VDEQF16,
  QF322B8_PRE = ASC_QUANT_QF322B8_PRE,
  VQF322B8_PRE = ASC_QUANT_VQF322B8_PRE,
  REQ8 = ASC_QUANT_REQ8,
  VREQ8 = ASC_QUANT_VREQ8
};

namespace AscendC {
using ::QuantMode_t;

// ---- fractal geometry (guide 6.2.3.2.2.1) ----------------------------------
// A cube fractal is 16 rows; an A/B fractal row holds 32 B of its type (C0
// elements), a C fractal 16 elements.
constexpr int32_t BLOCK_CUBE = 16;
constexpr int32_t CUBE_MAX_SIZE = 256;
constexpr int32_t ONE_BLOCK_SIZE = 32;

// ---- DataCopy with ND -> NZ conversion (guide 6.2.3.1.1.5) -----------------
struct Nd2NzParams {
  uint16_t ndNum = 0;
  uint16_t nValue = 0;
  uint16_t dValue = 0;
  uint16_t srcNdMatrixStride = 0;
  uint16_t srcDValue = 0;
  uint16_t dstNzC0Stride = 0;
  uint16_t dstNzNStride = 0;
  uint16_t dstNzMatrixStride = 0;
  Nd2NzParams() {}
  Nd2NzParams(uint16_t ndNumIn, uint16_t nValueIn, uint16_t dValueIn, uint16_t srcNdMatrixStrideIn,
              uint16_t srcDValueIn, uint16_t dstNzC0StrideIn, uint16_t dstNzNStrideIn,
              uint16_t dstNzMatrixStrideIn)
      : ndNum(ndNumIn),
        nValue(nValueIn),
        dValue(dValueIn),
        srcNdMatrixStride(srcNdMatrixStrideIn),
        srcDValue(srcDValueIn),
        dstNzC0Stride(dstNzC0StrideIn),
        dstNzNStride(dstNzNStrideIn),
        dstNzMatrixStride(dstNzMatrixStrideIn) {}
};

namespace detail {
inline AscAddr no_addr() {
  AscAddr a{};
  a.mem = (uint8_t)ASC_MEM_NONE;
  return a;
}
inline AscCubeOp cube_op(uint32_t code, const ::ascendopt::Loc& loc) {
  AscCubeOp op;
  memset(&op, 0, sizeof(op));
  op.op = code;
  op.dst = no_addr();
  op.src0 = no_addr();
  op.src1 = no_addr();
  op.bias = no_addr();
  op.loc = loc.c();
  return op;
}
}  // namespace detail

template <class T>
inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const Nd2NzParams& p, ASC_LOC) {
  AscCubeOp op = detail::cube_op(ASC_CUBE_ND2NZ, loc_);
  op.dtype = ::ascendopt::dtype_of<T>();
  op.src_dtype = op.dtype;
  op.dst = detail::local_addr(dst);
  op.src0 = detail::global_addr(src);
  op.p[0] = p.ndNum;
  op.p[1] = p.nValue;
  op.p[2] = p.dValue;
  op.p[3] = p.srcNdMatrixStride;
  op.p[4] = p.srcDValue;
  op.p[5] = p.dstNzC0Stride;
  op.p[6] = p.dstNzNStride;
  op.p[7] = p.dstNzMatrixStride;
  ASC_RT->cube(&op);
}

// ---- LoadData 2D (guide 6.2.3.2.1.2) ----------------------------------------
struct LoadData2DParams {
  uint16_t startIndex = 0;
  uint8_t repeatTimes = 0;
  uint16_t srcStride = 0;
  uint8_t sid = 0;
  uint16_t dstGap = 0;
  bool ifTranspose = false;
  uint8_t addrMode = 0;
  LoadData2DParams() {}
  LoadData2DParams(uint16_t startIndexIn, uint8_t repeatTimesIn, uint16_t srcStrideIn, uint8_t sidIn,
                   uint16_t dstGapIn, bool ifTransposeIn, uint8_t addrModeIn)
      : startIndex(startIndexIn),
        repeatTimes(repeatTimesIn),
        srcStride(srcStrideIn),
        sid(sidIn),
        dstGap(dstGapIn),
        ifTranspose(ifTransposeIn),
        addrMode(addrModeIn) {}
};

namespace detail {
inline void load2d(AscCubeOp& op, const LoadData2DParams& p) {
  op.p[0] = p.startIndex;
  op.p[1] = p.repeatTimes;
  op.p[2] = p.srcStride;
  op.p[3] = p.dstGap;
  op.p[4] = p.ifTranspose ? 1u : 0u;
  op.p[5] = p.addrMode;
  ASC_RT->cube(&op);
}
}  // namespace detail

template <class T>
inline void LoadData(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LoadData2DParams& p, ASC_LOC) {
  AscCubeOp op = detail::cube_op(ASC_CUBE_LOAD2D, loc_);
  op.dtype = ::ascendopt::dtype_of<T>();
  op.src_dtype = op.dtype;
  op.dst = detail::local_addr(dst);
  op.src0 = detail::local_addr(src);
  detail::load2d(op, p);
}
template <class T>
inline void LoadData(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const LoadData2DParams& p, ASC_LOC) {
  AscCubeOp op = detail::cube_op(ASC_CUBE_LOAD2D, loc_);
  op.dtype = ::ascendopt::dtype_of<T>();
  op.src_dtype = op.dtype;
  op.dst = detail::local_addr(dst);
  op.src0 = detail::global_addr(src);
  detail::load2d(op, p);
}

// ---- LoadDataWithTranspose (guide 6.2.3.2.1.5) -------------------------------
// Each repeat transposes one square of the source: 16 x 16 of a 2-byte type
// (one fractal), 16 x 16 of a 4-byte type (two 16 x 8 fractals side by
// side) or 32 x 32 of int8/uint8 (two 16 x 32 fractals one above the
// other), and writes it back as one or two fractals: the second
// (1 + dstFracGap) fractals after the first; a repeat's first fractal
// (1 + dstGap) fractals after the previous repeat's. startIndex and
// srcStride count squares.
struct LoadData2dTransposeParams {
  uint16_t startIndex = 0;
  uint8_t repeatTimes = 0;
  uint16_t srcStride = 0;
  uint16_t dstGap = 0;
  uint16_t dstFracGap = 0;
  bool addrMode = false;
  LoadData2dTransposeParams() {}
  LoadData2dTransposeParams(uint16_t startIndexIn, uint8_t repeatTimesIn, uint16_t srcStrideIn, uint16_t dstGapIn,
                            uint16_t dstFracGapIn, bool addrModeIn = false)
      : startIndex(startIndexIn),
        repeatTimes(repeatTimesIn),
        srcStride(srcStrideIn),
        dstGap(dstGapIn),
        dstFracGap(dstFracGapIn),
        addrMode(addrModeIn) {}
};

template <class T>
inline void LoadDataWithTranspose(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                                  const LoadData2dTransposeParams& p, ASC_LOC) {
  AscCubeOp op = detail::cube_op(ASC_CUBE_LOAD2D_TRANSPOSE, loc_);
  op.dtype = ::ascendopt::dtype_of<T>();
  op.src_dtype = op.dtype;
  op.dst = detail::local_addr(dst);
  op.src0 = detail::local_addr(src);
  op.p[0] = p.startIndex;
  op.p[1] = p.repeatTimes;
  op.p[2] = p.srcStride;
  op.p[3] = p.dstGap;
  op.p[4] = p.dstFracGap;
  op.p[5] = p.addrMode ? 1u : 0u;
  ASC_RT->cube(&op);
}

// ---- Load3D: img2col from A1/B1 to A2/B2 (guide 6.2.3.2.1.4 Load3D,
// 6.2.3.2.1.7 SetFmatrix, 6.2.3.2.1.9-11) ------------------------------------
// Whether a Load3D call sets the feature-map registers (l1H, l1W, padList)
// and the padding value from its parameters, or uses what SetFmatrix and
// SetLoadDataPaddingValue set.
struct IsResetLoad3dConfig {
  bool isSetFMatrix = true;
  bool isSetPadding = true;
};
constexpr IsResetLoad3dConfig IS_RESER_LOAD3D_DEFAULT_CONFIG = {true, true};

enum class FmatrixMode : uint8_t { FMATRIX_LEFT = 0, FMATRIX_RIGHT = 1 };

namespace detail {
inline uint32_t pad_list(const uint8_t p[4]) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
}  // namespace detail

// Load3Dv1 (table 6-170). Atlas A2 has no Load3Dv1 (table 6-168 lists it
// for the training series and the inference AI Core only): the runtime
// refuses it with a fault naming the call.
template <class T>
struct LoadData3DParamsV1 {
  uint8_t padList[4] = {0, 0, 0, 0};
  uint16_t l1H = 0;
  uint16_t l1W = 0;
  uint16_t c1Index = 0;
  uint8_t fetchFilterW = 0;
  uint8_t fetchFilterH = 0;
  int16_t leftTopW = 0;
  int16_t leftTopH = 0;
  uint8_t strideW = 0;
  uint8_t strideH = 0;
  uint8_t filterW = 0;
  uint8_t filterH = 0;
  uint8_t dilationFilterW = 0;
  uint8_t dilationFilterH = 0;
  uint8_t jumpStride = 0;
  uint8_t repeatMode = 0;
  uint8_t repeatTime = 0;
  uint8_t cSize = 0;
  T padValue = T(0);
  LoadData3DParamsV1() {}
  LoadData3DParamsV1(const uint8_t padListIn[4], uint16_t l1HIn, uint16_t l1WIn, uint16_t c1IndexIn,
                     uint8_t fetchFilterWIn, uint8_t fetchFilterHIn, int16_t leftTopWIn, int16_t leftTopHIn,
                     uint8_t strideWIn, uint8_t strideHIn, uint8_t filterWIn, uint8_t filterHIn,
                     uint8_t dilationFilterWIn, uint8_t dilationFilterHIn, uint8_t jumpStrideIn,
                     uint8_t repeatModeIn, uint8_t repeatTimeIn, uint8_t cSizeIn, T padValueIn)
      : l1H(l1HIn),
        l1W(l1WIn),
        c1Index(c1IndexIn),
        fetchFilterW(fetchFilterWIn),
        fetchFilterH(fetchFilterHIn),
        leftTopW(leftTopWIn),
        leftTopH(leftTopHIn),
        strideW(strideWIn),
        strideH(strideHIn),
        filterW(filterWIn),
        filterH(filterHIn),
        dilationFilterW(dilationFilterWIn),
        dilationFilterH(dilationFilterHIn),
        jumpStride(jumpStrideIn),
        repeatMode(repeatModeIn),
        repeatTime(repeatTimeIn),
        cSize(cSizeIn),
        padValue(padValueIn) {
    for (int i = 0; i < 4; i++) padList[i] = padListIn[i];
  }
};

// Load3Dv2 (table 6-171): the feature map in A1/B1 is C1 x l1H x l1W x C0
// (C0 = 32 B of T, C1 = channelSize / C0); the destination is the part
// [mStartPt, +mExtension) x [kStartPt, +kExtension) of the img2col matrix
// whose row m is output position (m / Wo, m % Wo) and whose column k is
// (c1, kh, kw, c0) with c0 fastest. The runtime documents the reading.
template <class T>
struct LoadData3DParamsV2 {
  uint8_t padList[4] = {0, 0, 0, 0};
  uint16_t l1H = 0;
  uint16_t l1W = 0;
  uint16_t channelSize = 0;
  uint16_t kExtension = 0;
  uint16_t mExtension = 0;
  uint16_t kStartPt = 0;
  uint16_t mStartPt = 0;
  uint8_t strideW = 1;
  uint8_t strideH = 1;
  uint8_t filterW = 1;
  uint8_t filterH = 1;
  uint8_t dilationFilterW = 1;
  uint8_t dilationFilterH = 1;
  bool enTranspose = false;
  bool enSmallK = false;
  T padValue = T(0);
  bool filterSizeW = false;
  bool filterSizeH = false;
  bool fMatrixCtrl = false;
  LoadData3DParamsV2() {}
  LoadData3DParamsV2(const uint8_t padListIn[4], uint16_t l1HIn, uint16_t l1WIn, uint16_t channelSizeIn,
                     uint16_t kExtensionIn, uint16_t mExtensionIn, uint16_t kStartPtIn, uint16_t mStartPtIn,
                     uint8_t strideWIn, uint8_t strideHIn, uint8_t filterWIn, uint8_t filterHIn,
                     uint8_t dilationFilterWIn, uint8_t dilationFilterHIn, bool enTransposeIn, bool enSmallKIn,
                     T padValueIn)
      : LoadData3DParamsV2(padListIn, l1HIn, l1WIn, channelSizeIn, kExtensionIn, mExtensionIn, kStartPtIn,
                           mStartPtIn, strideWIn, strideHIn, filterWIn, filterHIn, dilationFilterWIn,
                           dilationFilterHIn, enTransposeIn, enSmallKIn, padValueIn, false, false, false) {}
  // The full form (20 fields; 19 would read as a LoadData3DParamsV1).
  LoadData3DParamsV2(const uint8_t padListIn[4], uint16_t l1HIn, uint16_t l1WIn, uint16_t channelSizeIn,
                     uint16_t kExtensionIn, uint16_t mExtensionIn, uint16_t kStartPtIn, uint16_t mStartPtIn,
                     uint8_t strideWIn, uint8_t strideHIn, uint8_t filterWIn, uint8_t filterHIn,
                     uint8_t dilationFilterWIn, uint8_t dilationFilterHIn, bool enTransposeIn, bool enSmallKIn,
                     T padValueIn, bool filterSizeWIn, bool filterSizeHIn, bool fMatrixCtrlIn)
      : l1H(l1HIn),
        l1W(l1WIn),
        channelSize(channelSizeIn),
        kExtension(kExtensionIn),
        mExtension(mExtensionIn),
        kStartPt(kStartPtIn),
        mStartPt(mStartPtIn),
        strideW(strideWIn),
        strideH(strideHIn),
        filterW(filterWIn),
        filterH(filterHIn),
        dilationFilterW(dilationFilterWIn),
        dilationFilterH(dilationFilterHIn),
        enTranspose(enTransposeIn),
        enSmallK(enSmallKIn),
        padValue(padValueIn),
        filterSizeW(filterSizeWIn),
        filterSizeH(filterSizeHIn),
        fMatrixCtrl(fMatrixCtrlIn) {
    for (int i = 0; i < 4; i++) padList[i] = padListIn[i];
  }
};

// SetLoadDataRepeat's parameters (table 6-193), in the order the guide's
// examples initialise them: {repeatStride, repeatTime, repeatMode}.
struct LoadDataRepeatParam {
  uint16_t repeatStride = 0;
  uint8_t repeatTime = 1;
  uint8_t repeatMode = 0;
  LoadDataRepeatParam() {}
  LoadDataRepeatParam(uint16_t repeatStrideIn, uint8_t repeatTimeIn, uint8_t repeatModeIn)
      : repeatStride(repeatStrideIn), repeatTime(repeatTimeIn), repeatMode(repeatModeIn) {}
};

template <class T, const IsResetLoad3dConfig& defaultConfig = IS_RESER_LOAD3D_DEFAULT_CONFIG, class U = T,
          typename std::enable_if<std::is_same<T, U>::value, bool>::type = true>
inline void LoadData(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LoadData3DParamsV2<U>& p,
                     ASC_LOC) {
  AscCubeOp op = detail::cube_op(ASC_CUBE_LOAD3D_V2, loc_);
  op.dtype = ::ascendopt::dtype_of<T>();
  op.src_dtype = op.dtype;
  op.dst = detail::local_addr(dst);
  op.src0 = detail::local_addr(src);
  op.scalar = ::ascendopt::to_bits<T>(p.padValue);
  op.p[0] = detail::pad_list(p.padList);
  op.p[1] = (uint32_t)p.l1H | ((uint32_t)p.l1W << 16);
  op.p[2] = p.channelSize;
  op.p[3] = (uint32_t)p.kExtension | ((uint32_t)p.mExtension << 16);
  op.p[4] = (uint32_t)p.kStartPt | ((uint32_t)p.mStartPt << 16);
  op.p[5] = (uint32_t)p.strideW | ((uint32_t)p.strideH << 8) | ((uint32_t)p.dilationFilterW << 16) |
            ((uint32_t)p.dilationFilterH << 24);
  op.p[6] = ((uint32_t)p.filterW + (p.filterSizeW ? 256u : 0u)) |
            (((uint32_t)p.filterH + (p.filterSizeH ? 256u : 0u)) << 16);
  op.p[7] = (p.enTranspose ? (uint32_t)ASC_LOAD3D_TRANSPOSE : 0u) | (p.enSmallK ? (uint32_t)ASC_LOAD3D_SMALL_K : 0u) |
            (p.fMatrixCtrl ? (uint32_t)ASC_LOAD3D_FMATRIX_RIGHT : 0u) |
            (defaultConfig.isSetFMatrix ? (uint32_t)ASC_LOAD3D_SET_FMATRIX : 0u) |
            (defaultConfig.isSetPadding ? (uint32_t)ASC_LOAD3D_SET_PADDING : 0u);
  ASC_RT->cube(&op);
}

template <class T, const IsResetLoad3dConfig& defaultConfig = IS_RESER_LOAD3D_DEFAULT_CONFIG, class U = T,
          typename std::enable_if<std::is_same<T, U>::value, bool>::type = true>
inline void LoadData(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LoadData3DParamsV1<U>& p,
                     ASC_LOC) {
  (void)p;
  AscCubeOp op = detail::cube_op(ASC_CUBE_LOAD3D_V1, loc_);
  op.dtype = ::ascendopt::dtype_of<T>();
  op.src_dtype = op.dtype;
  op.dst = detail::local_addr(dst);
  op.src0 = detail::local_addr(src);
  ASC_RT->cube(&op);
}

inline void SetFmatrix(uint16_t l1H, uint16_t l1W, const uint8_t padList[4], const FmatrixMode& fmatrixMode,
                       ASC_LOC) {
  AscCubeOp op = detail::cube_op(ASC_CUBE_SET_FMATRIX, loc_);
  op.p[0] = (uint32_t)l1H | ((uint32_t)l1W << 16);
  op.p[1] = detail::pad_list(padList);
  op.p[2] = (uint32_t)fmatrixMode;
  ASC_RT->cube(&op);
}

template <class T>
inline void SetLoadDataPaddingValue(const T padValue, ASC_LOC) {
  AscCubeOp op = detail::cube_op(ASC_CUBE_SET_LOAD3D_PAD, loc_);
  op.dtype = ::ascendopt::dtype_of<T>();
  op.scalar = ::ascendopt::to_bits<T>(padValue);
  ASC_RT->cube(&op);
}

inline void SetLoadDataRepeat(const LoadDataRepeatParam& repeatParams, ASC_LOC) {
  AscCubeOp op = detail::cube_op(ASC_CUBE_SET_LOAD3D_REPEAT, loc_);
  op.p[0] = repeatParams.repeatStride;
  op.p[1] = repeatParams.repeatTime;
  op.p[2] = repeatParams.repeatMode;
  ASC_RT->cube(&op);
}

inline void SetLoadDataBoundary(uint32_t boundaryValue, ASC_LOC) {
  AscCubeOp op = detail::cube_op(ASC_CUBE_SET_LOAD3D_BOUNDARY, loc_);
  op.p[0] = boundaryValue;
  ASC_RT->cube(&op);
}

// ---- Fill / InitConstValue (guide 6.2.3.2.1.1) -------------------------------
template <class U>
struct InitConstValueParams {
  uint16_t repeatTimes = 0;
  uint16_t blockNum = 0;
  uint16_t dstGap = 0;
  U initValue = U(0);
  InitConstValueParams() {}
  InitConstValueParams(uint16_t repeatTimesIn, uint16_t blockNumIn, uint16_t dstGapIn, U initValueIn)
      : repeatTimes(repeatTimesIn), blockNum(blockNumIn), dstGap(dstGapIn), initValue(initValueIn) {}
};

// Sets repeatTimes x blockNum blocks (32 B in A1/B1, 512 B in A2/B2) of
// dst to initValue, dstGap blocks apart between repeats.
template <class T, class U = T, typename std::enable_if<std::is_same<T, U>::value, bool>::type = true>
inline void Fill(const LocalTensor<T>& dst, const InitConstValueParams<U>& p, ASC_LOC) {
  AscCubeOp op = detail::cube_op(ASC_CUBE_FILL, loc_);
  op.dtype = ::ascendopt::dtype_of<T>();
  op.src_dtype = op.dtype;
  op.dst = detail::local_addr(dst);
  op.scalar = ::ascendopt::to_bits<T>(p.initValue);
  op.p[0] = p.repeatTimes;
  op.p[1] = p.blockNum;
  op.p[2] = p.dstGap;
  ASC_RT->cube(&op);
}
// The older name of Fill.
template <class T, class U = T, typename std::enable_if<std::is_same<T, U>::value, bool>::type = true>
inline void InitConstValue(const LocalTensor<T>& dst, const InitConstValueParams<U>& p, ASC_LOC) {
  Fill(dst, p, loc_);
}

// ---- Mmad (guide 6.2.3.2.2.1) -------------------------------------------------
struct MmadParams {
  uint16_t m = 0;
  uint16_t n = 0;
  uint16_t k = 0;
  bool isBias = false;
  int32_t fmOffset = 0;
  bool enSsparse = false;
  bool enWinogradA = false;
  bool enWinogradB = false;
  uint8_t unitFlag = 0;
  bool kDirectionAlign = false;
  bool cmatrixSource = false;
  bool cmatrixInitVal = true;
  bool disableGemv = false;
  MmadParams() {}
  MmadParams(uint16_t mIn, uint16_t nIn, uint16_t kIn, bool isBiasIn = false, int32_t fmOffsetIn = 0,
             bool enSsparseIn = false, bool enWinogradAIn = false, bool enWinogradBIn = false)
      : m(mIn),
        n(nIn),
        k(kIn),
        isBias(isBiasIn),
        fmOffset(fmOffsetIn),
        enSsparse(enSsparseIn),
        enWinogradA(enWinogradAIn),
        enWinogradB(enWinogradBIn) {}
};

namespace detail {
template <class T, class U, class S>
inline AscCubeOp mmad_op(const LocalTensor<T>& dst, const LocalTensor<U>& fm, const LocalTensor<S>& filter,
                         const MmadParams& p, const ::ascendopt::Loc& loc) {
  AscCubeOp op = cube_op(ASC_CUBE_MMAD, loc);
  op.dtype = ::ascendopt::dtype_of<T>();
  op.src_dtype = ::ascendopt::dtype_of<U>();
  op.src1_dtype = ::ascendopt::dtype_of<S>();
  op.dst = local_addr(dst);
  op.src0 = local_addr(fm);
  op.src1 = local_addr(filter);
  op.p[0] = p.m;
  op.p[1] = p.n;
  op.p[2] = p.k;
  // isBias (deprecated) asks to accumulate onto C, as cmatrixInitVal =
  // false does (guide table 6-217).
  op.p[3] = (p.cmatrixInitVal && !p.isBias) ? 1u : 0u;
  op.p[4] = p.cmatrixSource ? 1u : 0u;
  op.p[5] = p.unitFlag;
  return op;
}
}  // namespace detail

// C (CO1, NZ) = or += A (A2, ZZ) x B (B2, ZN).
template <class T, class U, class S>
inline void Mmad(const LocalTensor<T>& dst, const LocalTensor<U>& fm, const LocalTensor<S>& filter,
                 const MmadParams& p, ASC_LOC) {
  AscCubeOp op = detail::mmad_op(dst, fm, filter, p, loc_);
  ASC_RT->cube(&op);
}
// With a bias row (C2, the bias table; or CO1) added to every row of C.
template <class T, class U, class S, class V>
inline void Mmad(const LocalTensor<T>& dst, const LocalTensor<U>& fm, const LocalTensor<S>& filter,
                 const LocalTensor<V>& bias, const MmadParams& p, ASC_LOC) {
  AscCubeOp op = detail::mmad_op(dst, fm, filter, p, loc_);
  op.bias = detail::local_addr(bias);
  op.bias_dtype = ::ascendopt::dtype_of<V>();
  ASC_RT->cube(&op);
}

// ---- Fixpipe (guide 6.2.3.2.1.12) -------------------------------------------
enum class CO2Layout : uint8_t { NZ = ASC_CO2_NZ, ROW_MAJOR = ASC_CO2_ROW_MAJOR, COLUMN_MAJOR = ASC_CO2_COLUMN_MAJOR };
struct FixpipeConfig {
  CO2Layout format;
  bool isToUB;
};
constexpr FixpipeConfig CFG_NZ = {CO2Layout::NZ, false};
constexpr FixpipeConfig CFG_ROW_MAJOR = {CO2Layout::ROW_MAJOR, false};
constexpr FixpipeConfig CFG_COLUMN_MAJOR = {CO2Layout::COLUMN_MAJOR, false};

struct FixpipeParamsV220 {
  uint16_t nSize = 0;
  uint16_t mSize = 0;
  uint16_t srcStride = 0;
  uint32_t dstStride = 0;
  QuantMode_t quantPre = QuantMode_t::NoQuant;
  uint64_t deqScalar = 0;
  uint16_t ndNum = 1;
  uint16_t srcNdStride = 0;
  uint16_t dstNdStride = 0;
  bool reluEn = false;
  uint8_t unitFlag = 0;
  bool isChannelSplit = false;
  FixpipeParamsV220() {}
  FixpipeParamsV220(uint16_t nSizeIn, uint16_t mSizeIn, uint16_t srcStrideIn, uint32_t dstStrideIn, bool reluEnIn)
      : nSize(nSizeIn), mSize(mSizeIn), srcStride(srcStrideIn), dstStride(dstStrideIn), reluEn(reluEnIn) {}
};

namespace detail {
template <class T, class U>
inline AscCubeOp fixpipe_op(const GlobalTensor<T>& dst, const LocalTensor<U>& src, const FixpipeParamsV220& p,
                            CO2Layout format, const ::ascendopt::Loc& loc) {
  AscCubeOp op = cube_op(ASC_CUBE_FIXPIPE, loc);
  op.dtype = ::ascendopt::dtype_of<T>();
  op.src_dtype = ::ascendopt::dtype_of<U>();
  op.dst = detail::global_addr(dst);
  op.src0 = detail::local_addr(src);
  op.scalar = p.deqScalar;
  op.p[0] = p.nSize;
  op.p[1] = p.mSize;
  op.p[2] = p.srcStride;
  op.p[3] = p.dstStride;
  op.p[4] = (uint32_t)p.quantPre;
  op.p[5] = p.ndNum;
  op.p[6] = p.srcNdStride;
  op.p[7] = p.dstNdStride;
  op.p[8] = p.reluEn ? 1u : 0u;
  op.p[9] = p.unitFlag;
  op.p[10] = (uint32_t)format;
  op.p[11] = p.isChannelSplit ? 1u : 0u;
  return op;
}
}  // namespace detail

// CO1 -> GM with NZ2ND (CFG_ROW_MAJOR) or not (CFG_NZ), quantPre, reluEn.
template <class T, class U, const FixpipeConfig& config = CFG_ROW_MAJOR>
inline void Fixpipe(const GlobalTensor<T>& dst, const LocalTensor<U>& src, const FixpipeParamsV220& p, ASC_LOC) {
  AscCubeOp op = detail::fixpipe_op(dst, src, p, config.format, loc_);
  ASC_RT->cube(&op);
}
// With per-channel quantisation parameters (VDEQF16, VQF322B8_PRE,
// VREQ8): one uint64_t per column in cbufWorkspace (A1).
template <class T, class U, const FixpipeConfig& config = CFG_ROW_MAJOR, class S = uint64_t,
          typename std::enable_if<std::is_same<S, uint64_t>::value, bool>::type = true>
inline void Fixpipe(const GlobalTensor<T>& dst, const LocalTensor<U>& src, const LocalTensor<S>& cbufWorkspace,
                    const FixpipeParamsV220& p, ASC_LOC) {
  AscCubeOp op = detail::fixpipe_op(dst, src, p, config.format, loc_);
  op.src1 = detail::local_addr(cbufWorkspace);
  ASC_RT->cube(&op);
}

}  // namespace AscendC

// Kernels name the task types unqualified, outside namespace AscendC
// (`KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIC_ONLY)` in a cube-only kernel).
using AscendC::KernelMetaType;
using AscendC::KERNEL_TYPE_AIV_ONLY;
using AscendC::KERNEL_TYPE_AIC_ONLY;
using AscendC::KERNEL_TYPE_MIX_AIV_1_0;
using AscendC::KERNEL_TYPE_MIX_AIC_1_0;
using AscendC::KERNEL_TYPE_MIX_AIC_1_1;
using AscendC::KERNEL_TYPE_MIX_AIC_1_2;
using AscendC::KERNEL_TYPE_AICORE;
using AscendC::KERNEL_TYPE_VECTORCORE;
using AscendC::KERNEL_TYPE_MIX_AICORE;
using AscendC::KERNEL_TYPE_MIX_VECTOR_CORE;

#endif
