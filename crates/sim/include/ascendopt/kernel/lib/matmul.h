// ascendopt AscendC emulation: the high-level Matmul API (guide 6.2.4.2.1
// "Matmul Kernel侧接口": MatmulType, Matmul, REGIST_MATMUL_OBJ, Init,
// SetTensorA/B, SetBias, DisableBias, SetOrgShape, SetSingleShape,
// SetTail, Iterate, GetTensorC, IterateAll, End; MatmulConfig and the
// constant-tiling helpers GetMMConfig / GetMatmulApiTiling; HF section D).
// Clean-room, from the documented behaviour; built on the emulated basic
// cube API, so every cube instruction is traced, timed and checked like a
// hand-written kernel's.
//
// How it runs:
// - In a MIX launch (the Matmul API makes a kernel MIX AIC:AIV 1:2 unless
//   it declares a type or defines ASCENDC_CUBE_ONLY; runtime/mix.rs) the
//   AIVs are clients and the AIC of their AI core the server (HF section
//   D: "AIV is the client and sends messages to the AIC server").
//   REGIST_MATMUL_OBJ on the AIC serves requests until both AIVs returned,
//   then returns from the kernel; on an AIV it initialises the objects.
//   A request is the AIV's object (read by the AIC in place) plus the
//   operation, put in its AI core's mailbox and signalled with a
//   cross-core flag (an internal flag id, so user flags 0-10 stay free;
//   the guide warns not to mix CrossCoreSetFlag with the Matmul API); the
//   AIV waits for the AIC's answer flag, set on PIPE_FIX after its last
//   Fixpipe, so the results are in GM when the AIV goes on.
// - In a cube-only launch (AIC_ONLY, or no AIVs in the AI core) the AIC
//   computes in place.
// - Work per output tile (baseM x baseN of singleCoreM x singleCoreN,
//   tails clipped): for each baseK block of K, A and B in L1 (see below),
//   L1 -> L0A/L0B with LoadData (dbL0A / dbL0B buffers: 2 double-buffers
//   MTE1 against the cube, 1 makes each load wait for the last Mmad), Mmad
//   accumulating in L0C, the bias row through C1 -> C2 on the first block;
//   then one Fixpipe to GM (ND, F322F16/F322BF16 for a half/bfloat16 C;
//   SetAtomicAdd with enAtomic). Tiles go in iterateOrder (0: M first).
// - L1 as the tiling says (guide 6.2.4.2.2 TCubeTiling结构体; 3.10.4.2 and
//   3.10.4.4 on the MTE2 moves): one GM -> L1 load is one
//   DataCopy(Nd2NzParams) of stepM x stepKa base blocks of A (stepN x
//   stepKb of B); A1 keeps depthA1 / (stepM x stepKa) loads (B1 likewise,
//   at most two), and a tile whose blocks are still in L1 takes them from
//   there (L1Cache below). With two loads kept (db = 2), entering a K
//   chunk also issues the load of the tile's next K chunk into the other
//   buffer, so MTE2 moves it while MTE1 and the cube work on this one
//   (within a tile). Across tiles, an MDL configuration's doMTE2Preload
//   (1: A, 2: B; guide 3.10.4.14) loads the next tile's block of that side
//   on entering a tile when K is in one load and two buffers are kept (in
//   IterateAll; tile-by-tile Iterate requests do not preload, since the
//   next request may never come). So with K in one load B is
//   read from GM once per column of tiles in M-first order, A once per row
//   in N-first order; with K in more loads than L1 keeps, every tile reads
//   its blocks again.
// - C in UB (MatmulType<VECIN/VECCALC/VECOUT>): the AIC writes the tile to
//   the AIV's slice of the system workspace (baseM x baseN, row stride
//   baseN) and the AIV copies it into the tensor (MTE2), then its vector
//   pipe waits for that copy.
//
// Limits (each a fault or a compile error naming it): ND only (NZ inputs
// or outputs); A transposed only for half/bfloat16; B not transposed for
// half/bfloat16 (LoadData's 16 x 16 transpose) and float (B in L1 as one
// small NZ matrix per 16 K rows, LoadDataWithTranspose to L0B, baseK a
// multiple of 16), int8 B must be given transposed; the bias
// row is float (int32 for int8) and N a multiple of 8; batch matmul,
// quantised outputs, MDL/IBShare differences (all run as NORM but for
// MDL's doMTE2Preload), callbacks,
// async (Iterate<false>) runs synchronously.
#ifndef ASCENDOPT_KERNEL_LIB_MATMUL_H
#define ASCENDOPT_KERNEL_LIB_MATMUL_H

#include "../../../kernel_tiling/kernel_tiling.h"
#include "../cube.h"
#include "../kernel_type.h"
#include "../pipe.h"
#include "../sync.h"
#include "../workspace.h"
#include "../misc.h"

namespace matmul {

// Kernels that say `using namespace matmul;` name the basic API (DataCopy,
// GetSysWorkSpacePtr, ...) unqualified too.
using namespace AscendC;

enum class CubeFormat : int32_t { ND = 0, NZ, ZN, ZZ, NN, ND_ALIGN, SCALAR, VECTOR, ROW_MAJOR, COLUMN_MAJOR };
enum class LayoutMode : int32_t { NONE = 0, BSNGD, SBNGD, BNGS1S2, NORMAL };

template <TPosition POSITION, CubeFormat FORMAT, typename TYPE, bool ISTRANS = false,
          LayoutMode LAYOUT = LayoutMode::NONE, bool IBSHARE = false>
struct MatmulType {
  constexpr static TPosition pos = POSITION;
  constexpr static CubeFormat format = FORMAT;
  using T = TYPE;
  constexpr static bool isTrans = ISTRANS;
  constexpr static LayoutMode layout = LAYOUT;
  constexpr static bool ibShare = IBSHARE;
};

enum class MatmulConfigMode : int32_t { CONFIG_NORM = 0, CONFIG_MDL, CONFIG_SPECIALMDL, CONFIG_IBSHARE };
enum class IterateOrder : int32_t { ORDER_M = 0, ORDER_N, UNDEF };
enum class ScheduleType : int32_t { INNER_PRODUCT = 0, OUTER_PRODUCT };
enum class BatchMode : int32_t { NONE = 0, BATCH_LESS_THAN_L1, BATCH_LARGE_THAN_L1, SINGLE_LARGE_THAN_L1 };

// The fields a kernel sets or reads (guide 6.2.4.2.1.3); the emulation
// runs every configuration as the NORM template, with an MDL
// configuration's doMTE2Preload.
struct MatmulConfig {
  bool doNorm = true;
  bool doBasicBlock = false;
  bool doMultiDataLoad = false;
  uint32_t basicM = 0;
  uint32_t basicN = 0;
  uint32_t basicK = 0;
  bool intrinsicsCheck = false;
  bool isNBatch = false;
  bool enVecND2NZ = false;
  bool doSpecialBasicBlock = false;
  uint32_t doMTE2Preload = 0;
  uint32_t singleCoreM = 0;
  uint32_t singleCoreN = 0;
  uint32_t singleCoreK = 0;
  uint32_t stepM = 0;
  uint32_t stepN = 0;
  uint32_t baseMN = 0;
  uint32_t singleCoreMN = 0;
  bool enUnitFlag = true;
  bool isPerTensor = false;
  bool hasAntiQuantOffset = false;
  bool doIBShareNorm = false;
  bool doSpecialMDL = false;
  bool enableInit = true;
  BatchMode batchMode = BatchMode::NONE;
  bool enableEnd = true;
  bool enableGetTensorC = true;
  bool enableSetOrgShape = true;
  bool enableSetBias = true;
  bool enableSetTail = true;
  bool enableQuantVector = true;
  bool enableSetDefineData = true;
  uint8_t iterateMode = 0;
  bool enableReuse = true;
  bool enableUBReuse = false;
  bool enableL1CacheUB = false;
  bool intraBlockPartSum = false;
  IterateOrder iterateOrder = IterateOrder::UNDEF;
  ScheduleType scheduleType = ScheduleType::INNER_PRODUCT;
  bool enableDoubleCache = false;
  bool isBiasBatch = true;
  bool enableStaticPadZeros = false;
  bool isPartialOutput = false;
  bool enableMixDualMaster = false;
  bool isA2B2Shared = false;
  bool isEnableChannelSplit = false;
  bool enableKdimReorderLoad = false;
  bool isCO1Shared = false;
  uint32_t sharedCO1BufferSize = 0;
};

struct MatmulShapeParams {
  uint32_t singleCoreM = 0;
  uint32_t singleCoreN = 0;
  uint32_t singleCoreK = 0;
  uint32_t basicM = 0;
  uint32_t basicN = 0;
  uint32_t basicK = 0;
};

struct MatmulQuantParams {
  bool isPerTensor = false;
  bool hasAntiQuantOffset = false;
};
struct MatmulBatchParams {
  bool isNBatch = false;
  BatchMode batchMode = BatchMode::NONE;
  bool isBiasBatch = true;
};
struct MatmulFuncParams {
  bool intrinsicsCheck = false;
  bool enVecND2NZ = false;
  bool enableDoubleCache = false;
  bool enableL1CacheUB = false;
  uint32_t doMTE2Preload = 0;
  IterateOrder iterateOrder = IterateOrder::UNDEF;
  ScheduleType scheduleType = ScheduleType::INNER_PRODUCT;
  bool enableReuse = true;
  bool enableUBReuse = false;
};

namespace detail {
constexpr void apply(MatmulConfig& c, const MatmulShapeParams& p) {
  c.singleCoreM = p.singleCoreM;
  c.singleCoreN = p.singleCoreN;
  c.singleCoreK = p.singleCoreK;
  c.basicM = p.basicM;
  c.basicN = p.basicN;
  c.basicK = p.basicK;
}
constexpr void apply(MatmulConfig& c, const MatmulQuantParams& p) {
  c.isPerTensor = p.isPerTensor;
  c.hasAntiQuantOffset = p.hasAntiQuantOffset;
}
constexpr void apply(MatmulConfig& c, const MatmulBatchParams& p) {
  c.isNBatch = p.isNBatch;
  c.batchMode = p.batchMode;
  c.isBiasBatch = p.isBiasBatch;
}
constexpr void apply(MatmulConfig& c, const MatmulFuncParams& p) {
  c.intrinsicsCheck = p.intrinsicsCheck;
  c.enVecND2NZ = p.enVecND2NZ;
  c.enableDoubleCache = p.enableDoubleCache;
  c.enableL1CacheUB = p.enableL1CacheUB;
  c.doMTE2Preload = p.doMTE2Preload;
  c.iterateOrder = p.iterateOrder;
  c.scheduleType = p.scheduleType;
  c.enableReuse = p.enableReuse;
  c.enableUBReuse = p.enableUBReuse;
}
}  // namespace detail

template <MatmulConfigMode MODE, class... ARGS>
constexpr MatmulConfig GetMMConfig(ARGS&&... args) {
  MatmulConfig c;
  c.doNorm = MODE == MatmulConfigMode::CONFIG_NORM || MODE == MatmulConfigMode::CONFIG_IBSHARE;
  c.doIBShareNorm = MODE == MatmulConfigMode::CONFIG_IBSHARE;
  c.doSpecialMDL = MODE == MatmulConfigMode::CONFIG_SPECIALMDL;
  (detail::apply(c, args), ...);
  return c;
}

constexpr MatmulConfig GetNormalConfig(bool intrinsicsLimit = false, bool batchLoop = false, bool isVecND2NZ = false,
                                       BatchMode bmmMode = BatchMode::NONE, bool isMsgReuse = true,
                                       IterateOrder iterateOrder = IterateOrder::UNDEF,
                                       ScheduleType scheduleType = ScheduleType::INNER_PRODUCT, bool enUnitFlag = true,
                                       bool enableMixDualMaster = false) {
  MatmulConfig c;
  c.intrinsicsCheck = intrinsicsLimit;
  c.isNBatch = batchLoop;
  c.enVecND2NZ = isVecND2NZ;
  c.batchMode = bmmMode;
  c.enableReuse = isMsgReuse;
  c.iterateOrder = iterateOrder;
  c.scheduleType = scheduleType;
  c.enUnitFlag = enUnitFlag;
  c.enableMixDualMaster = enableMixDualMaster;
  return c;
}
constexpr MatmulConfig GetMDLConfig(bool intrinsicsLimit = false, bool batchLoop = false, uint32_t doMTE2Preload = 0,
                                    bool isVecND2NZ = false, bool isPerTensor = false, bool hasAntiQuantOffset = false,
                                    bool enUnitFlag = false, bool isMsgReuse = true, bool enableUBReuse = true,
                                    bool enableL1CacheUB = false, bool enableMixDualMaster = false,
                                    bool enableKdimReorderLoad = false) {
  MatmulConfig c;
  c.doNorm = false;
  c.intrinsicsCheck = intrinsicsLimit;
  c.isNBatch = batchLoop;
  c.doMTE2Preload = doMTE2Preload;
  c.enVecND2NZ = isVecND2NZ;
  c.isPerTensor = isPerTensor;
  c.hasAntiQuantOffset = hasAntiQuantOffset;
  c.enUnitFlag = enUnitFlag;
  c.enableReuse = isMsgReuse;
  c.enableUBReuse = enableUBReuse;
  c.enableL1CacheUB = enableL1CacheUB;
  c.enableMixDualMaster = enableMixDualMaster;
  c.enableKdimReorderLoad = enableKdimReorderLoad;
  return c;
}
constexpr MatmulConfig GetSpecialMDLConfig(bool intrinsicsLimit = false, bool batchLoop = false,
                                           uint32_t doMTE2Preload = 0, bool isVecND2NZ = false,
                                           bool isPerTensor = false, bool hasAntiQuantOffset = false) {
  MatmulConfig c = GetMDLConfig(intrinsicsLimit, batchLoop, doMTE2Preload, isVecND2NZ, isPerTensor, hasAntiQuantOffset);
  c.doSpecialMDL = true;
  return c;
}
constexpr MatmulConfig GetIBShareNormConfig(bool intrinsicsLimit = false, bool batchLoop = false,
                                            bool isVecND2NZ = false, BatchMode bmmMode = BatchMode::NONE,
                                            bool isDoubleCache = false, bool enUnitFlag = true) {
  MatmulConfig c = GetNormalConfig(intrinsicsLimit, batchLoop, isVecND2NZ, bmmMode);
  c.doIBShareNorm = true;
  c.enableDoubleCache = isDoubleCache;
  c.enUnitFlag = enUnitFlag;
  return c;
}
constexpr MatmulConfig GetBasicConfig(uint32_t basicM, uint32_t basicN, uint32_t basicK, bool intrinsicsLimit = false,
                                      bool batchLoop = false, BatchMode bmmMode = BatchMode::NONE) {
  MatmulConfig c = GetNormalConfig(intrinsicsLimit, batchLoop, false, bmmMode);
  c.doBasicBlock = true;
  c.basicM = basicM;
  c.basicN = basicN;
  c.basicK = basicK;
  return c;
}

constexpr MatmulConfig CFG_NORM = GetNormalConfig();
constexpr MatmulConfig CFG_MDL = GetMDLConfig();
constexpr MatmulConfig CFG_IBSHARE_NORM = GetIBShareNormConfig();
constexpr MatmulConfig MM_CFG_BB = GetBasicConfig(128, 128, 128);

// The constant tiling of a fully-specified Matmul (guide 6.2.4.2.1.48
// GetMatmulApiTiling): the shapes the config gives. The kernel still
// takes the runtime TCubeTiling when REGIST_MATMUL_OBJ passes one, as the
// guide requires them to agree.
struct MatmulApiStaticTiling {
  int32_t usedCoreNum = -1;
  int32_t M = -1;
  int32_t N = -1;
  int32_t Ka = -1;
  int32_t Kb = -1;
  int32_t singleCoreM = -1;
  int32_t singleCoreN = -1;
  int32_t singleCoreK = -1;
  int32_t baseM = -1;
  int32_t baseN = -1;
  int32_t baseK = -1;
  int32_t depthA1 = -1;
  int32_t depthB1 = -1;
  int32_t stepM = -1;
  int32_t stepN = -1;
  int32_t isBias = -1;
  int32_t transLength = -1;
  int32_t iterateOrder = -1;
  int32_t stepKa = -1;
  int32_t stepKb = -1;
  int32_t dbL0A = -1;
  int32_t dbL0B = -1;
  int32_t dbL0C = -1;
  MatmulConfig cfg = CFG_NORM;
};

template <class A_TYPE, class B_TYPE, class C_TYPE, class BIAS_TYPE>
constexpr MatmulApiStaticTiling GetMatmulApiTiling(const MatmulConfig& mmCFG, int32_t l1Size = 512 * 1024) {
  (void)l1Size;
  MatmulApiStaticTiling t;
  t.cfg = mmCFG;
  if (mmCFG.singleCoreM > 0) t.singleCoreM = (int32_t)mmCFG.singleCoreM;
  if (mmCFG.singleCoreN > 0) t.singleCoreN = (int32_t)mmCFG.singleCoreN;
  if (mmCFG.singleCoreK > 0) t.singleCoreK = (int32_t)mmCFG.singleCoreK;
  if (mmCFG.basicM > 0) t.baseM = (int32_t)mmCFG.basicM;
  if (mmCFG.basicN > 0) t.baseN = (int32_t)mmCFG.basicN;
  if (mmCFG.basicK > 0) t.baseK = (int32_t)mmCFG.basicK;
  return t;
}

namespace detail {

// Internal cross-core flags of the Matmul messages (above the user's 0-10):
// AIV s asks on REQ_FLAG + s, the AIC answers on DONE_FLAG.
constexpr uint32_t REQ_FLAG = 20;
constexpr uint32_t DONE_FLAG = 22;
constexpr uint32_t MODE_TO_AIC = 16;
constexpr uint32_t MODE_TO_AIV = 32;
constexpr uint32_t MODE_SERVER = 64;

enum Op : int32_t { OP_ALL = 1, OP_TILE = 2 };

// One AIV's request in its AI core's mailbox.
struct Request {
  uint64_t state;  // the AIV's MmState
  int32_t index;   // which registered object
  int32_t op;
  int32_t tile;
  int32_t ldc;
  uint64_t dst;  // GM address of the output
  int32_t atomic;
  int32_t pad;
};
struct Mailbox {
  Request req[2];
};
static_assert(sizeof(Mailbox) <= 4096, "the runtime's mailbox holds 4096 bytes");

// A Matmul object's state as the AIC reads it.
struct MmState {
  uint64_t a = 0, b = 0, bias = 0;
  int32_t transA = 0, transB = 0, hasBias = 0;
  int32_t orgM = 0, orgN = 0, orgKa = 0, orgKb = 0;
  int32_t singleM = 0, singleN = 0, singleK = 0;
  int32_t baseM = 0, baseN = 0, baseK = 0;
  int32_t order = 0;
  // L1 residency (TCubeTiling): one GM -> L1 load of A moves stepM x stepKa
  // base blocks, of B stepN x stepKb; A1 holds depthA1 base blocks, B1
  // depthB1 (guide 6.2.4.2.2 TCubeTiling结构体; HF section D).
  int32_t stepK = 1;  // stepKa
  int32_t stepKb = 1;
  int32_t stepM = 1, stepN = 1;
  int32_t depthA1 = 0, depthB1 = 0;  // 0: not given (two loads' worth)
  // L0A / L0B buffers (TCubeTiling dbL0A / dbL0B: "whether MTE1 of the
  // left / right matrix double-buffers", 1 or 2).
  int32_t dbA = 2, dbB = 2;
  uint32_t gen = 0;  // bumped by every setter: A1/B1 contents go stale
  int32_t next = 0;  // tiles handed out by Iterate
  int32_t current = -1;
  uint64_t workspace = 0;  // this AIV's slice of the system workspace
  int32_t ready = 0;
  // MatmulConfig doMTE2Preload of an MDL template (guide 6.2.4.2.1.3,
  // 3.10.4.14): 1 loads the next M tile's A ahead, 2 the next N tile's B.
  int32_t preload = 0;
};

inline int32_t up(int32_t v, int32_t a) { return (v + a - 1) / a * a; }
inline int32_t cdiv(int32_t v, int32_t a) { return a == 0 ? 0 : (v + a - 1) / a; }

inline void trap(const char* what, const ::ascendopt::Loc& loc) { ASC_RT->trap(what, loc.c()); }

inline int32_t tiles_m(const MmState& s) { return cdiv(s.singleM, s.baseM); }
inline int32_t tiles_n(const MmState& s) { return cdiv(s.singleN, s.baseN); }

template <class T>
struct L0cOf {
  using type = float;
};
template <>
struct L0cOf<int8_t> {
  using type = int32_t;
};

// What one A1 or B1 buffer holds: the base blocks of one load (`group`
// of stepM M blocks or stepN N blocks, `chunk` of stepKa/stepKb K
// blocks), of the object state `owner` at generation `gen`.
template <class T>
struct L1Slot {
  uint64_t owner = 0;
  uint32_t gen = 0;
  int32_t group = -1;
  int32_t chunk = -1;
  uint32_t used = 0;  // last use, for least-recently-used replacement
  bool pending = false;  // enqueued by its load, not yet dequeued by MTE1
  AscendC::LocalTensor<T> t;
  bool valid() const { return group >= 0; }
};

// A1 or B1 as the Matmul API keeps it (guide 6.2.4.2.2 TCubeTiling结构体:
// "depthA1为A1中全载baseM*baseK的份数", depthA1 = stepM * stepKa * db; HF
// section D): `slots` = depth / (step x stepK) loads stay in L1 (db = 2:
// two), and a tile whose blocks are still there reads them from L1 instead
// of GM. A load into a full A1/B1 replaces the least recently used one.
// Reuse follows from the iterate order: with K in one load (singleCoreK <=
// stepKa * baseK) and iterateOrder 0 (M first) B stays while the M tiles of
// its column go by; with iterateOrder 1, A across the N tiles. With K in
// more loads than fit, every tile loads its blocks again, which is the
// guide's count of the data the API moves (3.10.4.2: A moved N / baseN
// times, B M / baseM times when K is not fully loaded).
template <class T, TPosition POS>
struct L1Cache {
  AscendC::TQue<POS, 2> q;
  L1Slot<T> slot[2];
  int32_t slots = 2;
  uint32_t clock = 0;

  // The slot that holds (group, chunk) of this state, or -1.
  int32_t find(const MmState& s, int32_t group, int32_t chunk) {
    for (int32_t i = 0; i < slots; ++i) {
      L1Slot<T>& e = slot[i];
      if (e.valid() && e.owner == (uint64_t)(uintptr_t)&s && e.gen == s.gen && e.group == group &&
          e.chunk == chunk) {
        e.used = ++clock;
        return i;
      }
    }
    return -1;
  }
  // A slot for a new load: a free one, else the least recently used (its
  // tensor freed, so the load waits for MTE1's reads of it).
  int32_t take(const MmState& s, int32_t group, int32_t chunk, const ::ascendopt::Loc& loc) {
    int32_t v = 0;
    for (int32_t i = 0; i < slots; ++i) {
      if (!slot[i].valid()) {
        v = i;
        break;
      }
      if (slot[i].used < slot[v].used) v = i;
    }
    L1Slot<T>& e = slot[v];
    if (e.valid()) q.FreeTensor(e.t, loc);
    e.t = q.template AllocTensor<T>(loc);
    e.owner = (uint64_t)(uintptr_t)&s;
    e.gen = s.gen;
    e.group = group;
    e.chunk = chunk;
    e.used = ++clock;
    return v;
  }
  void free_slot(int32_t i, const ::ascendopt::Loc& loc) {
    if (slot[i].valid()) q.FreeTensor(slot[i].t, loc);
    slot[i].group = -1;
  }
  // Every buffer back to the queue (the end of an IterateAll, another
  // object state, or new tensors).
  void release(const ::ascendopt::Loc& loc) {
    for (int32_t i = 0; i < slots; ++i) {
      if (slot[i].valid()) q.FreeTensor(slot[i].t, loc);
      slot[i].group = -1;
    }
  }
  void drop_stale(const MmState& s, const ::ascendopt::Loc& loc) {
    for (int32_t i = 0; i < slots; ++i) {
      L1Slot<T>& e = slot[i];
      if (e.valid() && (e.owner != (uint64_t)(uintptr_t)&s || e.gen != s.gen)) {
        q.FreeTensor(e.t, loc);
        e.group = -1;
      }
    }
  }
};

inline int32_t l1_slots(int32_t depth, int32_t step, int32_t stepK) {
  if (depth <= 0) return 2;
  const int32_t per = step * stepK;
  const int32_t n = per > 0 ? depth / per : 1;
  return n < 1 ? 1 : n > 2 ? 2 : n;
}

// The AIC's queues of one registered object.
template <class AT, class BT, class BiasT>
struct CubeQueues {
  using L0C = typename L0cOf<AT>::type;
  L1Cache<AT, TPosition::A1> a1;
  L1Cache<BT, TPosition::B1> b1;
  AscendC::TQue<TPosition::A2, 2> a2;
  AscendC::TQue<TPosition::B2, 2> b2;
  AscendC::TQue<TPosition::CO1, 1> c;
  AscendC::TQue<TPosition::C1, 1> bias1;
  AscendC::TQue<TPosition::C2, 1> bias2;
  bool ready = false;

  void init(AscendC::TPipe* pipe, const MmState& s, const ::ascendopt::Loc& loc) {
    if (ready) return;
    constexpr int32_t C0 = 32 / (int32_t)sizeof(AT);
    constexpr int32_t KA = 16 > C0 ? 16 : C0;
    int32_t bm = up(s.baseM, 16), bn = up(s.baseN, 16), bk = up(s.baseK, KA);
    // One A1 buffer: stepM M blocks by stepKa K blocks; B1 likewise.
    int32_t amL1 = up(s.baseM * s.stepM, 16), bnL1 = up(s.baseN * s.stepN, 16);
    int32_t akL1 = up(s.baseK * s.stepK, KA), bkL1 = up(s.baseK * s.stepKb, KA);
    a1.slots = l1_slots(s.depthA1, s.stepM, s.stepK);
    b1.slots = l1_slots(s.depthB1, s.stepN, s.stepKb);
    pipe->InitBuffer(a1.q, (uint8_t)a1.slots, (uint32_t)(amL1 * akL1 * sizeof(AT)), loc);
    pipe->InitBuffer(b1.q, (uint8_t)b1.slots, (uint32_t)(bnL1 * bkL1 * sizeof(BT)), loc);
    // One L0A (L0B) buffer with dbL0A (dbL0B) = 1: the next block's
    // LoadData waits for the Mmad that reads the previous one.
    pipe->InitBuffer(a2, (uint8_t)s.dbA, (uint32_t)(bm * bk * sizeof(AT)), loc);
    pipe->InitBuffer(b2, (uint8_t)s.dbB, (uint32_t)(bn * bk * sizeof(BT)), loc);
    pipe->InitBuffer(c, 1, (uint32_t)(bm * bn * sizeof(L0C)), loc);
    if (s.hasBias) {
      pipe->InitBuffer(bias1, 1, (uint32_t)(bn * sizeof(BiasT)), loc);
      pipe->InitBuffer(bias2, 1, (uint32_t)(bn * sizeof(BiasT)), loc);
    }
    ready = true;
  }
};

// A's K chunk `ch` of M group `g` (stepM blocks) in A1, loaded from GM
// with one DataCopy(Nd2NzParams) (enqueued; `fresh`) unless it is still
// there. Returns its slot.
template <class AT, class BT, class BiasT>
inline int32_t a_in_l1(CubeQueues<AT, BT, BiasT>& q, const MmState& s, int32_t g, int32_t ch,
                      int32_t kc0, int32_t ktc, bool& fresh, const ::ascendopt::Loc& loc) {
  using namespace AscendC;
  constexpr int32_t C0 = 32 / (int32_t)sizeof(AT);
  int32_t i = q.a1.find(s, g, ch);
  fresh = false;
  if (i >= 0) {
    fresh = q.a1.slot[i].pending;
    return i;
  }
  i = q.a1.take(s, g, ch, loc);
  const int32_t r0 = g * s.stepM * s.baseM;
  const int32_t rows = s.singleM - r0 < s.stepM * s.baseM ? s.singleM - r0 : s.stepM * s.baseM;
  GlobalTensor<AT> aGm;
  aGm.SetGlobalBuffer((__gm__ AT*)s.a);
  LocalTensor<AT>& a1 = q.a1.slot[i].t;
  if (!s.transA) {
    DataCopy(a1, aGm[(uint64_t)r0 * s.orgKa + kc0],
             Nd2NzParams(1, (uint16_t)rows, (uint16_t)ktc, 0, (uint16_t)s.orgKa, (uint16_t)up(rows, 16), 1, 0), loc);
  } else {
    DataCopy(a1, aGm[(uint64_t)kc0 * s.orgM + r0],
             Nd2NzParams(1, (uint16_t)ktc, (uint16_t)rows, 0, (uint16_t)s.orgM, (uint16_t)up(ktc, C0), 1, 0), loc);
  }
  q.a1.q.EnQue(a1, loc);
  q.a1.slot[i].pending = true;
  fresh = true;
  return i;
}

// B's K chunk `ch` of N group `h` (stepN blocks) in B1, as a_in_l1.
template <class AT, class BT, class BiasT>
inline int32_t b_in_l1(CubeQueues<AT, BT, BiasT>& q, const MmState& s, int32_t h, int32_t ch,
                      int32_t kc0, int32_t ktc, bool& fresh, const ::ascendopt::Loc& loc) {
  using namespace AscendC;
  constexpr int32_t C0 = 32 / (int32_t)sizeof(AT);
  int32_t i = q.b1.find(s, h, ch);
  fresh = false;
  if (i >= 0) {
    fresh = q.b1.slot[i].pending;
    return i;
  }
  i = q.b1.take(s, h, ch, loc);
  const int32_t c0 = h * s.stepN * s.baseN;
  const int32_t cols = s.singleN - c0 < s.stepN * s.baseN ? s.singleN - c0 : s.stepN * s.baseN;
  GlobalTensor<BT> bGm;
  bGm.SetGlobalBuffer((__gm__ BT*)s.b);
  LocalTensor<BT>& b1 = q.b1.slot[i].t;
  if (!s.transB && sizeof(BT) == 4) {
    // A 4-byte B for LoadDataWithTranspose (guide 6.2.3.2.1.5): each 16-row
    // K block is its own small NZ matrix of up(cols, 16) / 8 fractals, so
    // the two 16 x 8 fractals of one 16 x 16 square lie side by side; a K
    // tail under 16 rows is a copy of its own.
    if (s.baseK % 16 != 0) {
      trap("Matmul: a float B not transposed needs baseK a multiple of 16 (LoadDataWithTranspose squares)", loc);
    }
    const int32_t colsP = up(cols, 16);
    const int32_t full = ktc / 16, tail = ktc % 16;
    if (full > 0 && 16 * s.orgN <= 65535 && 16 * colsP <= 65535) {
      DataCopy(b1, bGm[(uint64_t)kc0 * s.orgN + c0],
               Nd2NzParams((uint16_t)full, 16, (uint16_t)cols, (uint16_t)(16 * s.orgN), (uint16_t)s.orgN, 16, 1,
                           (uint16_t)(16 * colsP)),
               loc);
    } else {
      // The matrix strides do not fit Nd2NzParams' 16 bits: a copy per block.
      for (int32_t f = 0; f < full; ++f) {
        DataCopy(b1[f * 16 * colsP], bGm[(uint64_t)(kc0 + f * 16) * s.orgN + c0],
                 Nd2NzParams(1, 16, (uint16_t)cols, 0, (uint16_t)s.orgN, 16, 1, 0), loc);
      }
    }
    if (tail > 0) {
      DataCopy(b1[full * 16 * colsP], bGm[(uint64_t)(kc0 + full * 16) * s.orgN + c0],
               Nd2NzParams(1, (uint16_t)tail, (uint16_t)cols, 0, (uint16_t)s.orgN, 16, 1, 0), loc);
    }
  } else if (!s.transB) {
    DataCopy(b1, bGm[(uint64_t)kc0 * s.orgN + c0],
             Nd2NzParams(1, (uint16_t)ktc, (uint16_t)cols, 0, (uint16_t)s.orgN, (uint16_t)up(ktc, C0), 1, 0), loc);
  } else {
    DataCopy(b1, bGm[(uint64_t)c0 * s.orgKb + kc0],
             Nd2NzParams(1, (uint16_t)cols, (uint16_t)ktc, 0, (uint16_t)s.orgKb, (uint16_t)up(cols, 16), 1, 0), loc);
  }
  q.b1.q.EnQue(b1, loc);
  q.b1.slot[i].pending = true;
  fresh = true;
  return i;
}

inline void tile_pos(const MmState& s, int32_t t, int32_t& mi, int32_t& ni);

// One output tile (mi, ni) of the core's singleM x singleN: the K loop in
// L0C, then a Fixpipe to `dst` (row stride ldc elements). `next` is the
// tile the same request computes after this one (-1: none), for MTE2
// Preload.
template <class AT, class BT, class CT, class BiasT>
inline void compute_tile(CubeQueues<AT, BT, BiasT>& q, const MmState& s, int32_t mi, int32_t ni, CT* dst,
                         int32_t ldc, bool atomic, const ::ascendopt::Loc& loc, int32_t next = -1) {
  using namespace AscendC;
  using L0C = typename L0cOf<AT>::type;
  constexpr int32_t C0 = 32 / (int32_t)sizeof(AT);
  constexpr int32_t FRAC = 512 / (int32_t)sizeof(AT);
  const int32_t m0 = mi * s.baseM, n0 = ni * s.baseN;
  const int32_t mt = s.singleM - m0 < s.baseM ? s.singleM - m0 : s.baseM;
  const int32_t nt = s.singleN - n0 < s.baseN ? s.singleN - n0 : s.baseN;
  if (mt <= 0 || nt <= 0) return;
  const int32_t mA = up(mt, 16), nA = up(nt, 16), mB = mA / 16, nB = nA / 16;
  // The L1 groups of this tile and where it sits in them (in fractals).
  const int32_t g = mi / s.stepM, h = ni / s.stepN;
  const int32_t gRows = s.singleM - g * s.stepM * s.baseM < s.stepM * s.baseM ? s.singleM - g * s.stepM * s.baseM
                                                                              : s.stepM * s.baseM;
  const int32_t hCols = s.singleN - h * s.stepN * s.baseN < s.stepN * s.baseN ? s.singleN - h * s.stepN * s.baseN
                                                                              : s.stepN * s.baseN;
  const int32_t gB = up(gRows, 16) / 16, hB = up(hCols, 16) / 16;
  const int32_t iOff = (m0 - g * s.stepM * s.baseM) / 16, jOff = (n0 - h * s.stepN * s.baseN) / 16;
  if (s.hasBias) {
    GlobalTensor<BiasT> biasGm;
    biasGm.SetGlobalBuffer((__gm__ BiasT*)s.bias);
    constexpr int32_t BC0 = 32 / (int32_t)sizeof(BiasT);
    LocalTensor<BiasT> b1 = q.bias1.template AllocTensor<BiasT>(loc);
    DataCopy(b1, biasGm[n0], (uint32_t)up(nt, BC0), loc);
    q.bias1.EnQue(b1, loc);
    b1 = q.bias1.template DeQue<BiasT>(loc);
    LocalTensor<BiasT> b2 = q.bias2.template AllocTensor<BiasT>(loc);
    DataCopy(b2, b1, (uint32_t)up(nt, BC0), loc);
    q.bias2.EnQue(b2, loc);
    q.bias1.FreeTensor(b1, loc);
  }
  LocalTensor<L0C> c1 = q.c.template AllocTensor<L0C>(loc);
  // K in chunks: A loads stepKa base blocks, B stepKb. The emulation walks
  // K in base blocks and loads a chunk of each when the walk enters it (a
  // chunk still in L1 is not loaded again); with two L1 buffers the next
  // chunk's load goes out then too (below).
  const int32_t kLa = s.baseK * s.stepK, kLb = s.baseK * s.stepKb;
  // A load the iterate order cannot use again before least-recently-used
  // replacement drops it (a tile's K needs more loads than A1 keeps, or,
  // M first, the M groups' loads together do) goes back right after its
  // last block, so the next load need not wait for later MTE1 work. The GM
  // traffic is the same either way.
  const int32_t chA = cdiv(s.singleK, kLa), chB = cdiv(s.singleK, kLb);
  const int32_t groupsM = cdiv(tiles_m(s), s.stepM), groupsN = cdiv(tiles_n(s), s.stepN);
  const bool keepA = (s.order == 0 ? groupsM * chA : chA) <= q.a1.slots;
  const bool keepB = (s.order == 0 ? chB : groupsN * chB) <= q.b1.slots;
  for (int32_t k0 = 0; k0 < s.singleK; k0 += s.baseK) {
    const int32_t kt = s.singleK - k0 < s.baseK ? s.singleK - k0 : s.baseK;
    const int32_t kA = up(kt, C0), kB = kA / C0;
    const int32_t cha = k0 / kLa, chb = k0 / kLb;
    const int32_t kca = cha * kLa, kcb = chb * kLb;
    const int32_t kta = s.singleK - kca < kLa ? s.singleK - kca : kLa;
    const int32_t ktb = s.singleK - kcb < kLb ? s.singleK - kcb : kLb;
    const int32_t kBa = up(kta, C0) / C0, kBb = up(ktb, C0) / C0;
    const int32_t kba = (k0 - kca) / C0, kbb = (k0 - kcb) / C0;  // first K fractal of this block in the chunk
    // Both loads go out before MTE1 waits for either.
    bool freshA = false, freshB = false;
    const int32_t sa = a_in_l1(q, s, g, cha, kca, kta, freshA, loc);
    const int32_t sb = b_in_l1(q, s, h, chb, kcb, ktb, freshB, loc);
    if (freshA) {
      q.a1.slot[sa].t = q.a1.q.template DeQue<AT>(loc);
      q.a1.slot[sa].pending = false;
    }
    if (freshB) {
      q.b1.slot[sb].t = q.b1.q.template DeQue<BT>(loc);
      q.b1.slot[sb].pending = false;
    }
    // Entering a chunk with two L1 buffers (depth = 2 x step x stepK, the
    // guide's db = 2): the next chunk of this tile's K goes to the other
    // buffer now, so MTE2 moves it while MTE1 and the cube work on this
    // one; it is dequeued when the walk enters it. With one buffer the
    // next load must wait for this chunk's last L1 -> L0 read.
    if (q.a1.slots >= 2 && k0 == kca && kca + kLa < s.singleK) {
      const int32_t kn = kca + kLa;
      bool f = false;
      a_in_l1(q, s, g, cha + 1, kn, s.singleK - kn < kLa ? s.singleK - kn : kLa, f, loc);
    }
    if (q.b1.slots >= 2 && k0 == kcb && kcb + kLb < s.singleK) {
      const int32_t kn = kcb + kLb;
      bool f = false;
      b_in_l1(q, s, h, chb + 1, kn, s.singleK - kn < kLb ? s.singleK - kn : kLb, f, loc);
    }
    // MTE2 Preload (guide 3.10.4.14: MDL only, K in one load, two L1
    // buffers on that side): entering the tile also loads the next tile's
    // B (2) or A (1) into the other buffer, when it is another group, so
    // MTE2 moves it while MTE1 and the cube work on this tile instead of
    // after it. The next tile dequeues it as its own load.
    if (k0 == 0 && next >= 0 && s.preload != 0) {
      int32_t nm = 0, nn = 0;
      tile_pos(s, next, nm, nn);
      bool f = false;
      if (s.preload == 2 && chB == 1 && q.b1.slots >= 2 && nn / s.stepN != h) {
        b_in_l1(q, s, nn / s.stepN, 0, 0, s.singleK, f, loc);
      } else if (s.preload == 1 && chA == 1 && q.a1.slots >= 2 && nm / s.stepM != g) {
        a_in_l1(q, s, nm / s.stepM, 0, 0, s.singleK, f, loc);
      }
    }
    const LocalTensor<AT>& a1 = q.a1.slot[sa].t;
    const LocalTensor<BT>& b1 = q.b1.slot[sb].t;
    // L1 -> L0A (ZZ): fractal row i takes fractals (i, kba ..).
    LocalTensor<AT> a2 = q.a2.template AllocTensor<AT>(loc);
    for (int32_t i = 0; i < mB; ++i) {
      if (!s.transA) {
        LoadData(a2[i * kB * FRAC], a1,
                 LoadData2DParams((uint16_t)(kba * gB + iOff + i), (uint8_t)kB, (uint16_t)gB, 0, 0, false, 0), loc);
      } else {
        LoadData(a2[i * kB * FRAC], a1,
                 LoadData2DParams((uint16_t)((iOff + i) * kBa + kba), (uint8_t)kB, 1, 0, 0, true, 0), loc);
      }
    }
    q.a2.EnQue(a2, loc);
    // L1 -> L0B (ZN): K fractal row kb takes fractals (kb, 0 .. nB).
    LocalTensor<BT> b2 = q.b2.template AllocTensor<BT>(loc);
    if (!s.transB && sizeof(BT) == 4) {
      // Square (16 K rows, 16 N columns) kq of the tile's K to fractal rows
      // 2kq (k 0-7) and 2kq + 1 (k 8-15) of the ZN layout, nB apart.
      const int32_t kq0 = (k0 - kcb) / 16;
      for (int32_t kq = 0; kq < up(kt, 16) / 16; ++kq) {
        LoadDataWithTranspose(b2[2 * kq * nB * FRAC], b1,
                              LoadData2dTransposeParams((uint16_t)((kq0 + kq) * hB + jOff), (uint8_t)nB, 1, 0,
                                                        (uint16_t)(nB - 1)),
                              loc);
      }
    } else if (!s.transB) {
      for (int32_t kb = 0; kb < kB; ++kb) {
        LoadData(b2[kb * nB * FRAC], b1,
                 LoadData2DParams((uint16_t)(jOff * kBb + kbb + kb), (uint8_t)nB, (uint16_t)kBb, 0, 0, true, 0), loc);
      }
    } else if (hB == nB) {
      LoadData(b2, b1, LoadData2DParams((uint16_t)(kbb * nB), (uint8_t)(kB * nB), 1, 0, 0, false, 0), loc);
    } else {
      for (int32_t kb = 0; kb < kB; ++kb) {
        LoadData(b2[kb * nB * FRAC], b1,
                 LoadData2DParams((uint16_t)((kbb + kb) * hB + jOff), (uint8_t)nB, 1, 0, 0, false, 0), loc);
      }
    }
    q.b2.EnQue(b2, loc);
    a2 = q.a2.template DeQue<AT>(loc);
    b2 = q.b2.template DeQue<BT>(loc);
    MmadParams p;
    p.m = (uint16_t)mt;
    p.n = (uint16_t)nt;
    p.k = (uint16_t)kt;
    p.cmatrixInitVal = k0 == 0;
    if (s.hasBias && k0 == 0) {
      LocalTensor<BiasT> bias2 = q.bias2.template DeQue<BiasT>(loc);
      Mmad(c1, a2, b2, bias2, p, loc);
      q.bias2.FreeTensor(bias2, loc);
    } else {
      Mmad(c1, a2, b2, p, loc);
    }
    q.a2.FreeTensor(a2, loc);
    q.b2.FreeTensor(b2, loc);
    const bool last = k0 + s.baseK >= s.singleK;
    if (!keepA && (last || k0 + s.baseK >= kca + kta)) q.a1.free_slot(sa, loc);
    if (!keepB && (last || k0 + s.baseK >= kcb + ktb)) q.b1.free_slot(sb, loc);
  }
  q.c.EnQue(c1, loc);
  c1 = q.c.template DeQue<L0C>(loc);
  GlobalTensor<CT> cGm;
  cGm.SetGlobalBuffer((__gm__ CT*)dst);
  FixpipeParamsV220 fp;
  fp.nSize = (uint16_t)nt;
  fp.mSize = (uint16_t)mt;
  fp.srcStride = (uint16_t)mA;
  fp.dstStride = (uint32_t)ldc;
  fp.ndNum = 1;
  if (sizeof(CT) == 2) {
    fp.quantPre = AscendC::IsSameType<CT, half>::value ? QuantMode_t::F322F16 : QuantMode_t::F322BF16;
  }
  if (atomic) SetAtomicAdd<CT>(loc);
  Fixpipe(cGm, c1, fp, loc);
  if (atomic) SetAtomicNone(loc);
  q.c.FreeTensor(c1, loc);
}

// The (mi, ni) of tile t in the object's iterate order.
inline void tile_pos(const MmState& s, int32_t t, int32_t& mi, int32_t& ni) {
  if (s.order == 0) {
    mi = t % tiles_m(s);
    ni = t / tiles_m(s);
  } else {
    ni = t % tiles_n(s);
    mi = t / tiles_n(s);
  }
}

// Runs one request on the calling (cube) core.
template <class AT, class BT, class CT, class BiasT>
inline void run_request(CubeQueues<AT, BT, BiasT>& q, AscendC::TPipe* pipe, const MmState& s, int32_t op,
                        int32_t tile, uint64_t dst, int32_t ldc, bool atomic, const ::ascendopt::Loc& loc) {
  if (s.a == 0 || s.b == 0) {
    trap("Matmul: SetTensorA and SetTensorB must come before Iterate/IterateAll/GetTensorC", loc);
    return;
  }
  q.init(pipe, s, loc);
  // Blocks of another state, or loaded before a setter changed the inputs,
  // are stale; an IterateAll or a new Iterate pass starts from GM.
  if (op == OP_ALL || tile == 0) {
    q.a1.release(loc);
    q.b1.release(loc);
  } else {
    q.a1.drop_stale(s, loc);
    q.b1.drop_stale(s, loc);
  }
  if (op == OP_ALL) {
    const int32_t total = tiles_m(s) * tiles_n(s);
    for (int32_t t = 0; t < total; ++t) {
      int32_t mi, ni;
      tile_pos(s, t, mi, ni);
      compute_tile<AT, BT, CT, BiasT>(q, s, mi, ni, (CT*)dst + (uint64_t)mi * s.baseM * ldc + (uint64_t)ni * s.baseN,
                                      ldc, atomic, loc, t + 1 < total ? t + 1 : -1);
    }
  } else {
    int32_t mi, ni;
    tile_pos(s, tile, mi, ni);
    compute_tile<AT, BT, CT, BiasT>(q, s, mi, ni, (CT*)dst, ldc, atomic, loc);
  }
}

}  // namespace detail

template <class A_TYPE, class B_TYPE, class C_TYPE, class BIAS_TYPE = C_TYPE,
          const auto& MM_CFG = CFG_NORM, class... EXTRA>
class Matmul {
 public:
  using AT = typename A_TYPE::T;
  using BT = typename B_TYPE::T;
  using CT = typename C_TYPE::T;
  using BiasT = typename BIAS_TYPE::T;
  using L0C = typename detail::L0cOf<AT>::type;
  static_assert(A_TYPE::format == CubeFormat::ND && B_TYPE::format == CubeFormat::ND,
                "not supported by the ascendopt simulator: Matmul with NZ inputs (ND only)");
  static_assert(C_TYPE::format == CubeFormat::ND || C_TYPE::format == CubeFormat::ND_ALIGN,
                "not supported by the ascendopt simulator: Matmul with an NZ output (ND only)");
  static_assert(std::is_same<AT, BT>::value, "Matmul: A and B must have the same type");
  static_assert(std::is_same<AT, half>::value || std::is_same<AT, bfloat16_t>::value ||
                    std::is_same<AT, float>::value || std::is_same<AT, int8_t>::value,
                "Matmul: A/B of half, bfloat16_t, float or int8_t");
  static constexpr bool C_IN_UB = C_TYPE::pos == TPosition::VECIN || C_TYPE::pos == TPosition::VECCALC ||
                                  C_TYPE::pos == TPosition::VECOUT;

  Matmul() { (void)&::ascendopt::MatmulApiUse<ascendopt_cube_only()>::registered; }

  // Called by REGIST_MATMUL_OBJ (or by the kernel directly).
  void Init(const TCubeTiling* cubeTiling, AscendC::TPipe* tpipe = nullptr, ASC_LOC) {
    pipe_ = tpipe != nullptr ? tpipe : AscendC::GetTPipePtr();
    st_.preload = MM_CFG_PRELOAD();
    if (cubeTiling == nullptr) {
      from_static(loc_);
      return;
    }
    const TCubeTiling& t = *cubeTiling;
    st_.orgM = t.M;
    st_.orgN = t.N;
    st_.orgKa = t.Ka;
    st_.orgKb = t.Kb;
    st_.singleM = t.singleCoreM;
    st_.singleN = t.singleCoreN;
    st_.singleK = t.singleCoreK;
    st_.baseM = t.baseM;
    st_.baseN = t.baseN;
    st_.baseK = t.baseK;
    st_.order = t.iterateOrder;
    st_.stepK = t.stepKa > 0 ? t.stepKa : 1;
    st_.stepKb = t.stepKb > 0 ? t.stepKb : st_.stepK;
    st_.stepM = t.stepM > 0 ? t.stepM : 1;
    st_.stepN = t.stepN > 0 ? t.stepN : 1;
    st_.depthA1 = t.depthA1 > 0 ? t.depthA1 : 0;
    st_.depthB1 = t.depthB1 > 0 ? t.depthB1 : 0;
    st_.dbA = l0_buffers(t.dbL0A, loc_);
    st_.dbB = l0_buffers(t.dbL0B, loc_);
    ++st_.gen;
    if (MM_CFG_ORDER() >= 0) st_.order = MM_CFG_ORDER();
    st_.hasBias = t.isBias;
    if (!agrees_with_constant_base(loc_)) return;
    validate(loc_);
  }
  void SetSubBlockIdx(uint8_t idx) { sub_ = idx; }
  uint8_t GetSubBlockIdx() { return sub_; }
  void SetTensorA(const AscendC::GlobalTensor<AT>& gm, bool isTransposeA = false) {
    st_.a = (uint64_t)(uintptr_t)gm.GetPhyAddr();
    st_.transA = (A_TYPE::isTrans || isTransposeA) ? 1 : 0;
    st_.next = 0;
    ++st_.gen;
  }
  void SetTensorB(const AscendC::GlobalTensor<BT>& gm, bool isTransposeB = false) {
    st_.b = (uint64_t)(uintptr_t)gm.GetPhyAddr();
    st_.transB = (B_TYPE::isTrans || isTransposeB) ? 1 : 0;
    st_.next = 0;
    ++st_.gen;
  }
  void SetBias(const AscendC::GlobalTensor<BiasT>& gm) {
    st_.bias = (uint64_t)(uintptr_t)gm.GetPhyAddr();
    st_.hasBias = 1;
  }
  void DisableBias() { st_.hasBias = 0; }
  void ClearBias() { st_.hasBias = 0; }
  void SetOrgShape(int orgM, int orgN, int orgK) { SetOrgShape(orgM, orgN, orgK, orgK); }
  void SetOrgShape(int orgM, int orgN, int orgKa, int orgKb, int orgKc = 0) {
    (void)orgKc;
    st_.orgM = orgM;
    st_.orgN = orgN;
    st_.orgKa = orgKa;
    st_.orgKb = orgKb;
    ++st_.gen;
  }
  void SetSingleShape(int singleM, int singleN, int singleK) {
    st_.singleM = singleM;
    st_.singleN = singleN;
    st_.singleK = singleK;
    ++st_.gen;
  }
  void SetTail(int tailM = -1, int tailN = -1, int tailK = -1) {
    if (tailM > 0) st_.singleM = tailM;
    if (tailN > 0) st_.singleN = tailN;
    if (tailK > 0) st_.singleK = tailK;
    ++st_.gen;
  }
  void SetHF32(bool = false, int32_t = 0) {}
  template <class T>
  void SetLocalWorkspace(const AscendC::LocalTensor<T>&) {}
  template <class T>
  void SetWorkspace(const AscendC::GlobalTensor<T>&) {}
  void SetWorkspace(__gm__ const void*, int) {}

  // One baseM x baseN tile per call, in iterateOrder; false when done.
  template <bool sync = true>
  bool Iterate(bool enPartialSum = false, ASC_LOC) {
    (void)enPartialSum;
    (void)loc_;
    const int32_t total = detail::tiles_m(st_) * detail::tiles_n(st_);
    if (st_.next >= total) {
      st_.next = 0;
      st_.current = -1;
      return false;
    }
    st_.current = st_.next++;
    return true;
  }

  // The current tile into GM: at its place in C (row stride N), or
  // contiguously (row stride baseN) with enSequentialWrite.
  template <bool sync = true>
  void GetTensorC(const AscendC::GlobalTensor<CT>& gm, uint8_t enAtomic = 0, bool enSequentialWrite = false,
                  ASC_LOC) {
    if (st_.current < 0) {
      detail::trap("Matmul::GetTensorC without a tile from Iterate", loc_);
      return;
    }
    int32_t mi, ni;
    detail::tile_pos(st_, st_.current, mi, ni);
    uint64_t dst = (uint64_t)(uintptr_t)gm.GetPhyAddr();
    int32_t ldc = st_.orgN;
    if (enSequentialWrite) {
      ldc = st_.baseN;
    } else {
      dst += ((uint64_t)mi * st_.baseM * st_.orgN + (uint64_t)ni * st_.baseN) * sizeof(CT);
    }
    request(detail::OP_TILE, st_.current, dst, ldc, enAtomic != 0, PIPE_S, loc_);
  }

  // The current tile into a UB tensor (baseM x baseN, row stride baseN).
  template <bool sync = true>
  void GetTensorC(const AscendC::LocalTensor<CT>& ub, uint8_t enAtomic = 0, bool enSequentialWrite = false,
                  ASC_LOC) {
    (void)enSequentialWrite;
    if (st_.current < 0) {
      detail::trap("Matmul::GetTensorC without a tile from Iterate", loc_);
      return;
    }
    if (g_in_cube()) {
      detail::trap("Matmul::GetTensorC into UB on a cube core (it has no UB)", loc_);
      return;
    }
    if (st_.workspace == 0) {
      detail::trap("Matmul::GetTensorC into UB needs the system workspace (REGIST_MATMUL_OBJ with GetSysWorkSpacePtr())", loc_);
      return;
    }
    (void)enAtomic;
    request(detail::OP_TILE, st_.current, st_.workspace, st_.baseN, false, PIPE_MTE2, loc_);
    AscendC::GlobalTensor<CT> ws;
    ws.SetGlobalBuffer((__gm__ CT*)st_.workspace);
    // The copy into `ub` waits for earlier vector and MTE3 work on it (the
    // previous tile's compute and copy-out), and the vector unit for the
    // copy.
    wait_for<AscendC::HardEvent::V_MTE2>(loc_);
    wait_for<AscendC::HardEvent::MTE3_MTE2>(loc_);
    AscendC::DataCopy(ub, ws, (uint32_t)(st_.baseM * st_.baseN), loc_);
    wait_for<AscendC::HardEvent::MTE2_V>(loc_);
  }

  template <AscendC::HardEvent E>
  void wait_for(const ::ascendopt::Loc& loc_) {
    AscendC::TEventID id = pipe_->FetchEventID(E, loc_);
    AscendC::SetFlag<E>(id, loc_);
    AscendC::WaitFlag<E>(id, loc_);
    pipe_->template ReleaseEventID<E>(id, loc_);
  }

  // Every tile of the core's C into GM (row stride N).
  template <bool sync = true>
  void IterateAll(const AscendC::GlobalTensor<CT>& gm, uint8_t enAtomic = 0, bool enSequentialWrite = false,
                  bool waitIterateAll = false, bool fakeMsg = false, ASC_LOC) {
    (void)waitIterateAll;
    (void)fakeMsg;
    int32_t ldc = enSequentialWrite ? st_.singleN : st_.orgN;
    request(detail::OP_ALL, 0, (uint64_t)(uintptr_t)gm.GetPhyAddr(), ldc, enAtomic != 0, PIPE_S, loc_);
  }
  void WaitIterateAll() {}
  void End() {}

  // ---- the AIC's side (REGIST_MATMUL_OBJ's server) ----
  void ascendopt_serve(AscendC::TPipe* pipe, const detail::Request& r, const ::ascendopt::Loc& loc) {
    const detail::MmState* s = (const detail::MmState*)(uintptr_t)r.state;
    detail::run_request<AT, BT, CT, BiasT>(queues_, pipe, *s, r.op, r.tile, r.dst, r.ldc, r.atomic != 0, loc);
  }
  void ascendopt_set_workspace(GM_ADDR ws, int64_t slot) {
    if (ws != nullptr) {
      st_.workspace = (uint64_t)(uintptr_t)ws + (uint64_t)slot * (uint64_t)(st_.baseM * st_.baseN * sizeof(CT));
    }
  }

 private:
  static constexpr int32_t ascendopt_cube_only() {
#ifdef ASCENDC_CUBE_ONLY
    return 1;
#else
    return 0;
#endif
  }
  static constexpr int32_t MM_CFG_ORDER() {
    if constexpr (std::is_same<std::decay_t<decltype(MM_CFG)>, MatmulConfig>::value) {
      return MM_CFG.iterateOrder == IterateOrder::ORDER_M ? 0 : MM_CFG.iterateOrder == IterateOrder::ORDER_N ? 1 : -1;
    } else {
      return -1;
    }
  }
  // doMTE2Preload of an MDL-type configuration (NORM ignores it: the guide
  // gives it to the MDL and SpecialMDL templates only), 0 otherwise.
  static constexpr int32_t MM_CFG_PRELOAD() {
    if constexpr (std::is_same<std::decay_t<decltype(MM_CFG)>, MatmulConfig>::value) {
      return MM_CFG.doNorm ? 0 : (int32_t)MM_CFG.doMTE2Preload;
    } else if constexpr (std::is_same<std::decay_t<decltype(MM_CFG)>, MatmulApiStaticTiling>::value) {
      return MM_CFG.cfg.doNorm ? 0 : (int32_t)MM_CFG.cfg.doMTE2Preload;
    } else {
      return 0;
    }
  }
  static bool g_in_cube() { return AscendC::g_coreType == AscendC::AIC; }

  // A base block fixed at compile time (MatmulConfig basicM/N/K, or the
  // baseM/N/K of a MatmulApiStaticTiling: the guide's tiling
  // constantisation, 3.10.4.6) is what the chip's kernel computes with;
  // the runtime TCubeTiling must say the same, or the host's steps and
  // depths describe another block. A disagreement traps, so a host tiling
  // change the kernel's constants ignore cannot pass for a speedup.
  bool agrees_with_constant_base(const ::ascendopt::Loc& loc) {
    int32_t m = 0, n = 0, k = 0;
    if constexpr (std::is_same<std::decay_t<decltype(MM_CFG)>, MatmulConfig>::value) {
      m = (int32_t)MM_CFG.basicM;
      n = (int32_t)MM_CFG.basicN;
      k = (int32_t)MM_CFG.basicK;
    } else if constexpr (std::is_same<std::decay_t<decltype(MM_CFG)>, MatmulApiStaticTiling>::value) {
      m = MM_CFG.baseM;
      n = MM_CFG.baseN;
      k = MM_CFG.baseK;
    }
    const bool bad = (m > 0 && m != st_.baseM) || (n > 0 && n != st_.baseN) || (k > 0 && k != st_.baseK);
    if (!bad) return true;
    char msg[320];
    ::snprintf(msg, sizeof(msg),
             "Matmul::Init: the kernel's constant base block (basicM/N/K %d/%d/%d in its MatmulConfig; 0 = not fixed) "
             "differs from the runtime TCubeTiling's baseM/N/K %d/%d/%d: the two must agree (guide 3.10.4.6, tiling "
             "constantisation)",
             m, n, k, st_.baseM, st_.baseN, st_.baseK);
    detail::trap(msg, loc);
    return false;
  }

  void from_static(const ::ascendopt::Loc& loc) {
    if constexpr (std::is_same<std::decay_t<decltype(MM_CFG)>, MatmulApiStaticTiling>::value) {
      st_.singleM = MM_CFG.singleCoreM;
      st_.singleN = MM_CFG.singleCoreN;
      st_.singleK = MM_CFG.singleCoreK;
      st_.baseM = MM_CFG.baseM;
      st_.baseN = MM_CFG.baseN;
      st_.baseK = MM_CFG.baseK;
      st_.orgM = MM_CFG.M > 0 ? MM_CFG.M : MM_CFG.singleCoreM;
      st_.orgN = MM_CFG.N > 0 ? MM_CFG.N : MM_CFG.singleCoreN;
      st_.orgKa = MM_CFG.Ka > 0 ? MM_CFG.Ka : MM_CFG.singleCoreK;
      st_.orgKb = MM_CFG.Kb > 0 ? MM_CFG.Kb : MM_CFG.singleCoreK;
      st_.stepK = MM_CFG.stepKa > 0 ? MM_CFG.stepKa : 1;
      st_.stepKb = MM_CFG.stepKb > 0 ? MM_CFG.stepKb : st_.stepK;
      st_.stepM = MM_CFG.stepM > 0 ? MM_CFG.stepM : 1;
      st_.stepN = MM_CFG.stepN > 0 ? MM_CFG.stepN : 1;
      st_.depthA1 = MM_CFG.depthA1 > 0 ? MM_CFG.depthA1 : 0;
      st_.depthB1 = MM_CFG.depthB1 > 0 ? MM_CFG.depthB1 : 0;
      st_.dbA = l0_buffers(MM_CFG.dbL0A, loc);
      st_.dbB = l0_buffers(MM_CFG.dbL0B, loc);
      ++st_.gen;
      validate(loc);
    } else {
      detail::trap("Matmul::Init: no tiling (REGIST_MATMUL_OBJ with nullptr needs a constant tiling in the template)",
                   loc);
    }
  }

  // dbL0A / dbL0B: 1 or 2 (guide 6.2.4.2.2 TCubeTiling: other values are
  // undefined, refused here); 0 or less is a tiling that does not set it,
  // taken as 2 (the host tiling's value).
  static int32_t l0_buffers(int32_t db, const ::ascendopt::Loc& loc) {
    if (db <= 0 || db == 2) return 2;
    if (db == 1) return 1;
    detail::trap("Matmul: dbL0A / dbL0B must be 1 or 2 (guide: TCubeTiling, other values are undefined)", loc);
    return 2;
  }

  void validate(const ::ascendopt::Loc& loc) {
    if (st_.singleM <= 0 || st_.singleN <= 0 || st_.singleK <= 0 || st_.baseM <= 0 || st_.baseN <= 0 ||
        st_.baseK <= 0) {
      detail::trap("Matmul::Init: the tiling has a zero or negative shape (singleCore or base)", loc);
    }
    if (st_.baseM % 16 != 0 || st_.baseN % 16 != 0) {
      detail::trap("Matmul::Init: baseM and baseN must be multiples of 16 (TCubeTiling constraints)", loc);
    }
    if (st_.baseK % (32 / (int32_t)sizeof(AT)) != 0) {
      detail::trap("Matmul::Init: baseK must be a multiple of C0 (32 bytes of the input type)", loc);
    }

    st_.ready = 1;
  }

  void request(int32_t op, int32_t tile, uint64_t dst, int32_t ldc, bool atomic, pipe_t pipe,
               const ::ascendopt::Loc& loc) {
    if (!st_.ready) {
      detail::trap("Matmul used before Init / REGIST_MATMUL_OBJ", loc);
      return;
    }
    if (g_in_cube()) {
      // A cube-only launch: the AIC computes in place.
      detail::run_request<AT, BT, CT, BiasT>(queues_, pipe_, st_, op, tile, dst, ldc, atomic, loc);
      return;
    }
    detail::Mailbox* box = (detail::Mailbox*)ASC_RT->group_mailbox();
    int64_t sub = AscendC::GetSubBlockIdx();
    if (box == nullptr || sub < 0 || sub > 1 || ASC_RT->core_info(6) == 0) {
      detail::trap("Matmul on a vector core without a cube core (declare KERNEL_TYPE_MIX_AIC_1_2 or _1_1)", loc);
      return;
    }
    detail::Request& r = box->req[sub];
    r.state = (uint64_t)(uintptr_t)&st_;
    r.index = index_;
    r.op = op;
    r.tile = tile;
    r.ldc = ldc;
    r.dst = dst;
    r.atomic = atomic ? 1 : 0;
    if (pipe == PIPE_S) {
      // The AIC may read what this core wrote to GM before.
      AscendC::PipeBarrier<PIPE_ALL>(loc);
    }
    ASC_RT->sync(ASC_SYNC_CROSS_SET, detail::MODE_TO_AIC | ((uint32_t)pipe << 8), detail::REQ_FLAG + (uint32_t)sub,
                 loc.c());
    ASC_RT->sync(ASC_SYNC_CROSS_WAIT, detail::MODE_TO_AIC | ((uint32_t)PIPE_S << 8), detail::DONE_FLAG, loc.c());
  }

 public:
  int32_t index_ = 0;

 private:
  detail::MmState st_;
  AscendC::TPipe* pipe_ = nullptr;
  uint8_t sub_ = 0;
  detail::CubeQueues<AT, BT, BiasT> queues_;
};

namespace detail {

inline void regist_each(AscendC::TPipe*, GM_ADDR, int32_t, const ::ascendopt::Loc&) {}
template <class MM, class TILING, class... REST>
inline void regist_each(AscendC::TPipe* pipe, GM_ADDR ws, int32_t index, const ::ascendopt::Loc& loc, MM& mm,
                        TILING tiling, REST&&... rest) {
  mm.index_ = index;
  mm.SetSubBlockIdx((uint8_t)AscendC::GetSubBlockIdx());
  mm.Init((const TCubeTiling*)tiling, pipe, loc);
  // Each AIV its own slice of the system workspace for C in UB.
  mm.ascendopt_set_workspace(ws, AscendC::GetBlockIdx() * 4 + index);
  regist_each(pipe, ws, index + 1, loc, rest...);
}

inline void serve_one(AscendC::TPipe*, const Request&, int32_t, const ::ascendopt::Loc& loc) {
  trap("Matmul request for an object REGIST_MATMUL_OBJ did not register", loc);
}
template <class MM, class TILING, class... REST>
inline void serve_one(AscendC::TPipe* pipe, const Request& r, int32_t index, const ::ascendopt::Loc& loc, MM& mm,
                      TILING, REST&&... rest) {
  if (r.index == index) {
    mm.ascendopt_serve(pipe, r, loc);
    return;
  }
  serve_one(pipe, r, index + 1, loc, rest...);
}

// The AIC's loop: the AIVs' requests in turn (AIV 0, AIV 1, AIV 0, ...;
// the runtime's serve_wait lets the other go first only while one is
// blocked on it), until every AIV of the AI core returned. So the order of
// the AIC's work, and its trace, never depends on thread timing. True when
// it served (the caller returns).
template <class... OBJS>
inline bool serve(AscendC::TPipe* pipe, GM_ADDR ws, const ::ascendopt::Loc& loc, OBJS&&... objs) {
  (void)ws;
  if (AscendC::g_coreType != AscendC::AIC) return false;
  const int64_t aivs = ASC_RT->core_info(6);
  if (aivs == 0) return false;
  Mailbox* box = (Mailbox*)ASC_RT->group_mailbox();
  bool alive[2] = {true, aivs > 1};
  uint32_t expect = 0;
  while (alive[0] || alive[1]) {
    if (!alive[expect]) {
      expect ^= 1u;
      continue;
    }
    ASC_RT->sync(ASC_SYNC_CROSS_WAIT, MODE_SERVER | ((uint32_t)PIPE_S << 8), REQ_FLAG | (expect << 8), loc.c());
    const int64_t sub = ASC_RT->core_info(5);
    if (sub < 0 || sub > 1) {
      alive[expect] = false;
      expect ^= 1u;
      continue;
    }
    serve_one(pipe, box->req[sub], 0, loc, objs...);
    ASC_RT->sync(ASC_SYNC_CROSS_SET, (MODE_TO_AIV + (uint32_t)sub) | ((uint32_t)PIPE_FIX << 8), DONE_FLAG, loc.c());
    if ((uint32_t)sub == expect && alive[expect ^ 1u]) expect ^= 1u;
  }
  return true;
}

}  // namespace detail
}  // namespace matmul

// REGIST_MATMUL_OBJ(&pipe, workspace, mm1, &tiling1[, mm2, &tiling2 ...])
// (guide 6.2.4.2.1.13): on the AIC of a MIX launch serves the AIVs and
// returns from the kernel; elsewhere initialises the objects.
#define REGIST_MATMUL_OBJ(tpipe, workspace, ...)                                                                  \
  do {                                                                                                            \
    if (::matmul::detail::serve((tpipe), (GM_ADDR)(workspace), ::ascendopt::Loc(), __VA_ARGS__)) return;        \
    ::matmul::detail::regist_each((tpipe), (GM_ADDR)(workspace), 0, ::ascendopt::Loc(), __VA_ARGS__);            \
  } while (0)

#endif
