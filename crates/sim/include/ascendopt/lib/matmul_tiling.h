// ascendopt host (op_host) emulation: the Matmul API's tiling side (guide
// 6.2.4.2.2 "Matmul Tiling侧接口": MatmulApiTiling, MultiCoreMatmulTiling,
// SetAType/SetBType/SetCType/SetBiasType, SetShape, SetOrgShape,
// SetFixSplit, SetBias, SetBufferSpace, SetDim, GetTiling; and the
// TCubeTiling struct, table 6-1072). Clean-room: the interface is the
// guide's; the way the tiling is chosen is ours, written to meet the
// constraints of table 6-1073 (and HF section D):
//
// - Cores: MultiCoreMatmulTiling::SetDim(d) splits M and N over at most d
//   cores (K is not split); of the factorings mDim x nDim <= d it takes the
//   one with the smallest per-core tile (rounded up to 16 x 16 fractals),
//   then the least GM traffic per
//   core (singleCoreM + singleCoreN), then the larger mDim;
//   singleCoreM = ceil(M / mDim) rounded up to 16 (at most M), singleCoreN
//   likewise, usedCoreNum = ceil(M / singleCoreM) * ceil(N / singleCoreN). MatmulApiTiling is one core.
// - Base block: SetFixSplit's values where given; otherwise baseM up to
//   128 and baseN up to 256 (multiples of 16, no larger than the core's
//   tile rounded up to 16), baseK up to 64 elements of a 2-byte type (128
//   of int8, 32 of float), a multiple of C0; then baseK shrinks while a
//   double-buffered block does not fit L0A / L0B (64 KB) and baseN while
//   baseM x baseN x 4 does not fit L0C (128 KB) or the bias table (1 KB of
//   float).
// - L1: stepM = stepN = 1; stepKa = stepKb = the whole K (in base blocks)
//   when its double-buffered blocks fit L1 (the guide's tuning advice,
//   TCubeTiling结构体 "性能调优推荐取值": set stepKa/stepKb first so that K
//   is fully loaded; the guide bounds the steps only by L1, table 6-1073);
//   otherwise (ours: the guide gives no rule for a K that cannot be fully
//   loaded) 4 blocks, or fewer so that they fit. Fewer, larger partial
//   loads keep no L1 buffer free for the next tile's load: on
//   matmul_all_reduce's benchmark case (K = 10 blocks) 2 loads of 5
//   measured 406 us against 375 us for 3 loads of 4. depthA1 = stepM * stepKa * 2 (double buffered,
//   depthA1 / (stepM * stepKa) = 2 as the guide recommends), depthB1
//   likewise; the A and B blocks (2 x step x base block each) and the bias
//   row must fit L1 (512 KB, or SetBufferSpace's L1 size). (Until
//   2026-12-06 the step was capped at 4 even when the whole K fit: a rule
//   of ours the guide does not have.)
// - dbL0A = dbL0B = 2, dbL0C = 1; iterateOrder 0 (M first); isBias from
//   SetBias / EnableBias.
// GetTiling returns 0, or -1 when the types, shapes or split cannot work
// (the reason is kept for GetErrorInfo-style diagnostics in `error_`).
#ifndef ASCENDOPT_LIB_MATMUL_TILING_H
#define ASCENDOPT_LIB_MATMUL_TILING_H

#include "../../register/tilingdata_base.h"
#include "../../tiling/platform/platform_ascendc.h"
#include "cube_tiling_fields.h"

namespace AscendC {
namespace tiling {
#ifndef ASCENDOPT_PLAIN_TCUBETILING
#define ASCENDOPT_PLAIN_TCUBETILING
struct TCubeTiling {
  ASCENDOPT_TCUBETILING_FIELDS(ASCENDOPT_TCUBETILING_PLAIN_FIELD)
};
#endif
}  // namespace tiling
}  // namespace AscendC

#define ASCENDOPT_TCUBETILING_CLASS_FIELD(name) TILING_DATA_FIELD_DEF(int32_t, name)
namespace optiling {
BEGIN_TILING_DATA_DEF(TCubeTiling)
ASCENDOPT_TCUBETILING_FIELDS(ASCENDOPT_TCUBETILING_CLASS_FIELD)
END_TILING_DATA_DEF;
}  // namespace optiling
#undef ASCENDOPT_TCUBETILING_CLASS_FIELD
static_assert(sizeof(optiling::TCubeTiling) == sizeof(AscendC::tiling::TCubeTiling),
              "TCubeTiling: host class and plain struct differ");

namespace matmul_tiling {

// LCM is VECCALC's other name (guide 6.2.6.7 TPosition: `LCM = VECCALC`;
// CV fusion examples set the C matrix's position with it).
enum class TPosition : int32_t {
  GM = 0,
  VECIN,
  VECCALC,
  VECOUT,
  A1,
  A2,
  B1,
  B2,
  C1,
  C2,
  CO1,
  CO2,
  TSCM,
  MAX,
  LCM = VECCALC
};
enum class CubeFormat : int32_t { ND = 0, NZ, ZN, ZZ, NN, ND_ALIGN, SCALAR, VECTOR, ROW_MAJOR, COLUMN_MAJOR };
// The values of ge::DataType for the types the cube takes.
enum class DataType : int32_t {
  DT_FLOAT = 0,
  DT_FLOAT16 = 1,
  DT_INT8 = 2,
  DT_INT32 = 3,
  DT_UINT8 = 4,
  DT_INT16 = 6,
  DT_UINT16 = 7,
  DT_UINT32 = 8,
  DT_INT64 = 9,
  DT_BF16 = 27,
  DT_INT4 = 29,
};
enum class MatrixTraverse : int32_t { NOSET = 0, FIRSTM = 1, FIRSTN = 2 };
enum class MatrixMadType : int32_t { NORMAL = 0, HF32 = 1 };

struct ascendopt_matrix {
  TPosition pos = TPosition::GM;
  CubeFormat format = CubeFormat::ND;
  DataType type = DataType::DT_FLOAT16;
  bool trans = false;
  bool set = false;
};

class MatmulApiTilingBase {
 public:
  MatmulApiTilingBase() = default;
  explicit MatmulApiTilingBase(const platform_ascendc::PlatformAscendC& ascendcPlatform)
      : cores_((int32_t)ascendcPlatform.GetCoreNumAic()) {}
  virtual ~MatmulApiTilingBase() = default;

  int32_t SetAType(TPosition pos, CubeFormat type, DataType dataType, bool isTrans = false) {
    a_ = {pos, type, dataType, isTrans, true};
    return 0;
  }
  int32_t SetBType(TPosition pos, CubeFormat type, DataType dataType, bool isTrans = false) {
    b_ = {pos, type, dataType, isTrans, true};
    return 0;
  }
  int32_t SetCType(TPosition pos, CubeFormat type, DataType dataType) {
    c_ = {pos, type, dataType, false, true};
    return 0;
  }
  int32_t SetBiasType(TPosition pos, CubeFormat type, DataType dataType) {
    bias_ = {pos, type, dataType, false, true};
    return 0;
  }
  int32_t SetShape(int32_t m, int32_t n, int32_t k) {
    m_ = m;
    n_ = n;
    k_ = k;
    return 0;
  }
  int32_t SetOrgShape(int32_t orgMIn, int32_t orgNIn, int32_t orgKIn) {
    return SetOrgShape(orgMIn, orgNIn, orgKIn, orgKIn);
  }
  int32_t SetOrgShape(int32_t orgMIn, int32_t orgNIn, int32_t orgKaIn, int32_t orgKbIn) {
    org_m_ = orgMIn;
    org_n_ = orgNIn;
    org_ka_ = orgKaIn;
    org_kb_ = orgKbIn;
    return 0;
  }
  int32_t SetFixSplit(int32_t baseMIn = -1, int32_t baseNIn = -1, int32_t baseKIn = -1) {
    fix_m_ = baseMIn;
    fix_n_ = baseNIn;
    fix_k_ = baseKIn;
    return 0;
  }
  int32_t SetBias(bool isBiasIn = false) {
    bias_on_ = isBiasIn;
    return 0;
  }
  int32_t EnableBias(bool isBiasIn = false) { return SetBias(isBiasIn); }
  int32_t SetBufferSpace(int32_t l1Size = -1, int32_t l0CSize = -1, int32_t ubSize = -1, int32_t btSize = -1) {
    l1_ = l1Size > 0 ? l1Size : L1_BYTES;
    l0c_ = l0CSize > 0 ? l0CSize : L0C_BYTES;
    (void)ubSize;
    bt_ = btSize > 0 ? btSize : BT_BYTES;
    return 0;
  }
  int32_t SetTraverse(MatrixTraverse traverse) {
    order_ = traverse == MatrixTraverse::FIRSTN ? 1 : 0;
    return 0;
  }
  int32_t SetMadType(MatrixMadType) { return 0; }
  int32_t SetDoubleBuffer(bool a, bool b, bool c, bool bias, bool transND2NZ = true, bool transNZ2ND = true) {
    (void)bias;
    (void)transND2NZ;
    (void)transNZ2ND;
    db_a_ = a ? 2 : 1;
    db_b_ = b ? 2 : 1;
    db_c_ = c ? 2 : 1;
    return 0;
  }
  int32_t SetSingleShape(int32_t singleMIn = -1, int32_t singleNIn = -1, int32_t singleKIn = -1) {
    single_m_ = singleMIn;
    single_n_ = singleNIn;
    single_k_ = singleKIn;
    return 0;
  }
  int32_t GetBaseM() const { return plain_.baseM; }
  int32_t GetBaseN() const { return plain_.baseN; }
  int32_t GetBaseK() const { return plain_.baseK; }

  int64_t GetTiling(optiling::TCubeTiling& tiling) {
    if (compute() != 0) return -1;
    memcpy((void*)&tiling, &plain_, sizeof(plain_));
    return 0;
  }
  int64_t GetTiling(AscendC::tiling::TCubeTiling& tiling) {
    if (compute() != 0) return -1;
    tiling = plain_;
    return 0;
  }
  // Why the last GetTiling returned -1 (ascendopt's addition).
  const char* ascendopt_error() const { return error_; }

 protected:
  static constexpr int32_t L1_BYTES = 512 * 1024;
  static constexpr int32_t L0A_BYTES = 64 * 1024;
  static constexpr int32_t L0B_BYTES = 64 * 1024;
  static constexpr int32_t L0C_BYTES = 128 * 1024;
  static constexpr int32_t BT_BYTES = 1024;

  static int32_t bytes_of(DataType t) {
    switch (t) {
      case DataType::DT_FLOAT:
      case DataType::DT_INT32:
      case DataType::DT_UINT32:
        return 4;
      case DataType::DT_FLOAT16:
      case DataType::DT_BF16:
      case DataType::DT_INT16:
      case DataType::DT_UINT16:
        return 2;
      case DataType::DT_INT8:
      case DataType::DT_UINT8:
        return 1;
      default:
        return 0;
    }
  }
  static int32_t up(int32_t v, int32_t a) { return (v + a - 1) / a * a; }
  static int32_t cdiv(int32_t v, int32_t a) { return (v + a - 1) / a; }

  int32_t fail(const char* why) {
    error_ = why;
    return -1;
  }

  // Cores available to split over (MultiCoreMatmulTiling::SetDim).
  virtual int32_t dim() const { return 1; }

  int32_t compute() {
    error_ = "";
    if (!a_.set || !b_.set || !c_.set) return fail("SetAType, SetBType and SetCType are required");
    const int32_t sa = bytes_of(a_.type), sb = bytes_of(b_.type), sc = bytes_of(c_.type);
    if (sa == 0 || sb == 0 || sc == 0 || a_.type != b_.type)
      return fail("A and B must have the same cube input type (half, bfloat16, float or int8) and C a known type");
    const bool int8 = a_.type == DataType::DT_INT8;
    const int32_t l0c_elem = 4;  // float or int32 in L0C
    if (m_ <= 0 || n_ <= 0 || k_ <= 0) return fail("SetShape needs M, N and K above 0");
    const int32_t orgM = org_m_ > 0 ? org_m_ : m_, orgN = org_n_ > 0 ? org_n_ : n_;
    const int32_t orgKa = org_ka_ > 0 ? org_ka_ : k_, orgKb = org_kb_ > 0 ? org_kb_ : k_;
    // Multi-core split of M and N.
    int32_t best_m = 1, best_n = 1;
    int64_t best_tile = -1, best_traffic = 0;
    const int32_t d = dim() > 0 ? dim() : 1;
    for (int32_t md = 1; md <= d; ++md) {
      for (int32_t nd = 1; md * nd <= d; ++nd) {
        if (md > m_ || nd > n_) continue;
        const int64_t sm = cdiv(m_, md), sn = cdiv(n_, nd);
        // The cube works on 16 x 16 fractals: a tile's cost is its
        // fractal-aligned area.
        const int64_t tile = (int64_t)up((int32_t)sm, 16) * up((int32_t)sn, 16), traffic = sm + sn;
        if (best_tile < 0 || tile < best_tile || (tile == best_tile && traffic < best_traffic) ||
            (tile == best_tile && traffic == best_traffic && md > best_m)) {
          best_tile = tile;
          best_traffic = traffic;
          best_m = md;
          best_n = nd;
        }
      }
    }
    // Per-core blocks start on whole fractals (16 rows / columns), so every
    // core's A, B and C offsets stay aligned; the last core takes the rest.
    int32_t singleM = up(cdiv(m_, best_m), 16), singleN = up(cdiv(n_, best_n), 16), singleK = k_;
    if (singleM > m_) singleM = m_;
    if (singleN > n_) singleN = n_;
    if (single_m_ > 0) singleM = single_m_;
    if (single_n_ > 0) singleN = single_n_;
    if (single_k_ > 0) singleK = single_k_;
    const int32_t c0 = 32 / sa;
    // Base block.
    int32_t baseM = fix_m_ > 0 ? fix_m_ : (up(singleM, 16) < 128 ? up(singleM, 16) : 128);
    int32_t baseN = fix_n_ > 0 ? fix_n_ : (up(singleN, 16) < 256 ? up(singleN, 16) : 256);
    const int32_t k_default = int8 ? 128 : (sa == 4 ? 32 : 64);
    int32_t baseK = fix_k_ > 0 ? fix_k_ : (up(singleK, c0) < k_default ? up(singleK, c0) : k_default);
    if (baseM % 16 != 0 || baseN % 16 != 0) return fail("baseM and baseN must be multiples of 16");
    if (baseK % c0 != 0 && baseK % 16 != 0) return fail("baseK must be a multiple of C0 (32 bytes)");
    const int32_t bias_elem = bias_on_ ? (bias_.set ? bytes_of(bias_.type) : 4) : 0;
    if (fix_k_ <= 0) {
      while (baseK > c0 && (baseM * baseK * sa * db_a_ > L0A_BYTES || baseN * baseK * sb * db_b_ > L0B_BYTES))
        baseK -= c0;
    }
    if (fix_n_ <= 0) {
      while (baseN > 16 && (baseM * baseN * l0c_elem * db_c_ > l0c_ || baseN * bias_elem > bt_)) baseN -= 16;
    }
    if (baseM * baseK * sa * db_a_ > L0A_BYTES) return fail("baseM x baseK does not fit L0A (64 KB)");
    if (baseN * baseK * sb * db_b_ > L0B_BYTES) return fail("baseN x baseK does not fit L0B (64 KB)");
    if (baseM * baseN * l0c_elem * db_c_ > l0c_) return fail("baseM x baseN does not fit L0C");
    if (baseN * bias_elem > bt_) return fail("the bias row of baseN does not fit the bias table");
    // L1 depth.
    const int32_t kBlocks = cdiv(singleK, baseK);
    auto l1_need = [&](int32_t s) {
      return (int64_t)2 * s * baseM * baseK * sa + (int64_t)2 * s * baseN * baseK * sb + (int64_t)baseN * bias_elem;
    };
    // K fully loaded when it fits; else up to 4 blocks.
    int32_t step = kBlocks;
    if (l1_need(step) > l1_) {
      step = kBlocks < 4 ? kBlocks : 4;
      while (step > 1 && l1_need(step) > l1_) --step;
      if (l1_need(step) > l1_) return fail("the A and B blocks do not fit L1");
    }
    AscendC::tiling::TCubeTiling t;
    t.usedCoreNum = cdiv(m_, singleM) * cdiv(n_, singleN);
    t.M = orgM;
    t.N = orgN;
    t.Ka = orgKa;
    t.Kb = orgKb;
    t.singleCoreM = singleM;
    t.singleCoreN = singleN;
    t.singleCoreK = singleK;
    t.baseM = baseM;
    t.baseN = baseN;
    t.baseK = baseK;
    t.stepM = 1;
    t.stepN = 1;
    t.stepKa = step;
    t.stepKb = step;
    t.depthA1 = step * 2;
    t.depthB1 = step * 2;
    t.isBias = bias_on_ ? 1 : 0;
    t.transLength = baseM * baseN * sc;
    t.iterateOrder = order_;
    t.dbL0A = db_a_;
    t.dbL0B = db_b_;
    t.dbL0C = db_c_;
    plain_ = t;
    return 0;
  }

  int32_t cores_ = 24;  // the 910B2's cube cores (HF section F) without a platform
  ascendopt_matrix a_, b_, c_, bias_;
  int32_t m_ = 0, n_ = 0, k_ = 0;
  int32_t org_m_ = -1, org_n_ = -1, org_ka_ = -1, org_kb_ = -1;
  int32_t single_m_ = -1, single_n_ = -1, single_k_ = -1;
  int32_t fix_m_ = -1, fix_n_ = -1, fix_k_ = -1;
  bool bias_on_ = false;
  int32_t l1_ = L1_BYTES, l0c_ = L0C_BYTES, bt_ = BT_BYTES;
  int32_t db_a_ = 2, db_b_ = 2, db_c_ = 1;
  int32_t order_ = 0;
  AscendC::tiling::TCubeTiling plain_;
  const char* error_ = "";
};

// One core's Matmul (guide: 单核Tiling).
class MatmulApiTiling : public MatmulApiTilingBase {
 public:
  MatmulApiTiling() = default;
  explicit MatmulApiTiling(const platform_ascendc::PlatformAscendC& ascendcPlatform)
      : MatmulApiTilingBase(ascendcPlatform) {}
};

// Matmul split over cores (guide: 多核Tiling; SetDim 6.2.4.2.2.26).
class MultiCoreMatmulTiling : public MatmulApiTilingBase {
 public:
  MultiCoreMatmulTiling() = default;
  explicit MultiCoreMatmulTiling(const platform_ascendc::PlatformAscendC& ascendcPlatform)
      : MatmulApiTilingBase(ascendcPlatform) {}
  int32_t SetDim(int32_t dimIn) {
    dim_ = dimIn;
    return 0;
  }
  int32_t SetSingleRange(int32_t = -1, int32_t = -1, int32_t = -1, int32_t = -1, int32_t = -1, int32_t = -1) {
    return 0;
  }
  int32_t EnableMultiCoreSplitK(bool flag) {
    if (flag) ::ascendopt::host::fail("MultiCoreMatmulTiling::EnableMultiCoreSplitK(true) is not emulated");
    return 0;
  }
  int32_t GetSingleShape(int32_t& shapeM, int32_t& shapeN, int32_t& shapeK) {
    if (compute() != 0) return -1;
    shapeM = plain_.singleCoreM;
    shapeN = plain_.singleCoreN;
    shapeK = plain_.singleCoreK;
    return 0;
  }
  int32_t GetCoreNum(int32_t& dim, int32_t& mDim, int32_t& nDim) {
    if (compute() != 0) return -1;
    mDim = cdiv(m_, plain_.singleCoreM);
    nDim = cdiv(n_, plain_.singleCoreN);
    dim = mDim * nDim;
    return 0;
  }

 protected:
  int32_t dim() const override { return dim_ > 0 ? dim_ : cores_; }

 private:
  int32_t dim_ = -1;
};

}  // namespace matmul_tiling

#endif
