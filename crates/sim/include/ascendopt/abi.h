/* ascendopt simulator: the C ABI between the AscendC emulation headers and the
 * Rust runtime.
 *
 * Every AscendC API call made by a kernel becomes one call through the
 * function table `AscRuntime`; the Rust side (crates/sim/src/abi.rs mirrors
 * every struct here field by field, `#[repr(C)]`) owns all on-chip memory,
 * computes the result and records one instruction in the trace.
 *
 * Rules:
 *  - Plain C, fixed-width types only. Bump ASC_ABI_VERSION on any change.
 *  - Local (on-chip) memory is named by (memory kind, byte address); global
 *    memory by real host pointers, which the runtime bounds-checks against
 *    the allocations it made.
 *  - A fatal error (UB overflow, GM out of bounds, deadlock, ...) does not
 *    return: the runtime writes the failed result and ends the worker.
 */
#ifndef ASCENDOPT_ABI_H
#define ASCENDOPT_ABI_H

#include <stdint.h>

#define ASC_ABI_VERSION 6u

#ifdef __cplusplus
extern "C" {
#endif

/* ---- element types ---------------------------------------------------- */
enum AscDtype {
  ASC_DT_NONE = 0,
  ASC_DT_F16 = 1,
  ASC_DT_BF16 = 2,
  ASC_DT_F32 = 3,
  ASC_DT_I8 = 4,
  ASC_DT_U8 = 5,
  ASC_DT_I16 = 6,
  ASC_DT_U16 = 7,
  ASC_DT_I32 = 8,
  ASC_DT_U32 = 9,
  ASC_DT_I64 = 10,
  ASC_DT_U64 = 11,
  ASC_DT_BOOL = 12,
  ASC_DT_F64 = 13,
  /* complex64 (interleaved float32 re, im): GM tensors and host tiling only;
     kernels address it as float pairs. */
  ASC_DT_C64 = 14
};

/* ---- memories ----------------------------------------------------------- */
enum AscMem {
  ASC_MEM_GM = 0,
  ASC_MEM_UB = 1,
  ASC_MEM_L1 = 2,
  ASC_MEM_L0A = 3,
  ASC_MEM_L0B = 4,
  ASC_MEM_L0C = 5,
  ASC_MEM_BT = 6,
  ASC_MEM_FB = 7
};

/* ---- pipes (also the halves of a HardEvent: event = src * 8 + dst) ----- */
enum AscPipe {
  ASC_PIPE_S = 0,
  ASC_PIPE_V = 1,
  ASC_PIPE_M = 2,
  ASC_PIPE_MTE1 = 3,
  ASC_PIPE_MTE2 = 4,
  ASC_PIPE_MTE3 = 5,
  ASC_PIPE_FIX = 6,
  ASC_PIPE_ALL = 7
};

/* Source location of the API call in the kernel (file may be NULL). */
typedef struct AscLoc {
  const char* file;
  int32_t line;
} AscLoc;

/* A view of on-chip memory: `elems` elements of `dtype` at byte `addr`. */
typedef struct AscLocal {
  uint8_t mem;   /* AscMem */
  uint8_t dtype; /* AscDtype */
  uint16_t reserved;
  uint32_t addr;  /* byte offset inside the core's memory `mem` */
  uint32_t elems; /* logical size of the view, in elements */
} AscLocal;

/* ---- vector instructions ------------------------------------------------ */
enum AscVecOpCode {
  /* binary, dst = f(src0, src1) */
  ASC_VOP_ADD = 1,
  ASC_VOP_SUB = 2,
  ASC_VOP_MUL = 3,
  ASC_VOP_DIV = 4,
  ASC_VOP_MAX = 5,
  ASC_VOP_MIN = 6,
  ASC_VOP_AND = 7,
  ASC_VOP_OR = 8,
  ASC_VOP_ADD_RELU = 9,
  ASC_VOP_FUSED_MUL_ADD = 10, /* dst = src0 * dst + src1 */
  ASC_VOP_MUL_ADD_DST = 11,   /* dst = src0 * src1 + dst */
  ASC_VOP_SUB_RELU = 12,
  /* unary, dst = f(src0) */
  ASC_VOP_EXP = 20,
  ASC_VOP_LN = 21,
  ASC_VOP_ABS = 22,
  ASC_VOP_RECIPROCAL = 23,
  ASC_VOP_SQRT = 24,
  ASC_VOP_RSQRT = 25,
  ASC_VOP_RELU = 26,
  ASC_VOP_NOT = 27,
  ASC_VOP_NEG = 28,
  /* vector-scalar, dst = f(src0, scalar) */
  ASC_VOP_ADDS = 40,
  ASC_VOP_MULS = 41,
  ASC_VOP_MAXS = 42,
  ASC_VOP_MINS = 43,
  ASC_VOP_SUBS = 44,
  ASC_VOP_DIVS = 45,
  ASC_VOP_LEAKY_RELU = 46,
  ASC_VOP_AXPY = 47, /* dst += scalar * src0 (src0 dtype may differ: src_dtype) */
  ASC_VOP_SHIFT_LEFT = 48,
  ASC_VOP_SHIFT_RIGHT = 49,
  /* fill and index */
  ASC_VOP_DUPLICATE = 60,       /* dst = scalar */
  ASC_VOP_CREATE_VEC_INDEX = 61, /* dst[i] = scalar + i; count form only */
  ASC_VOP_BRCB = 62,            /* p[0]=dstBlkStride p[1]=dstRepStride, repeat */
  ASC_VOP_GATHER = 63,          /* src1 = u32 byte offsets, p[0] = srcBaseAddr */
  ASC_VOP_COPY = 64,            /* dst = src0; mask forms (count form for the library's own use) */
  ASC_VOP_GATHER_MASK = 65,     /* p[2] = 1: src1 = pattern tensor (src_dtype), else p[0] = built-in
                                   pattern 1..7; p[1] = reduceMode; mask[0] = mask; repeat;
                                   src0_blk, src0_rep, src1_rep; result = elements kept */
  ASC_VOP_TRANS_DATA_5HD = 66,  /* p[0], p[1] = low, high half of the host address of uint64_t[32] (16 dst then 16 src UB
                                   block addresses); p[2] = dstHighHalf, p[3] = srcHighHalf;
                                   repeat; dst_rep, src0_rep */
  /* conversion */
  ASC_VOP_CAST = 70, /* round = AscRound, src_dtype -> dtype */
  /* compare and select */
  ASC_VOP_COMPARE = 80,  /* round = AscCmp; dst is a u8 bit mask */
  ASC_VOP_COMPARES = 81, /* round = AscCmp; scalar operand */
  ASC_VOP_SELECT = 82,   /* src2 = u8 bit mask; p[0] = SELMODE; mode 1 uses scalar */
  /* reductions */
  ASC_VOP_REDUCE_SUM = 90, /* src1 = work tensor; p[0] = calIndex */
  ASC_VOP_REDUCE_MAX = 91,
  ASC_VOP_REDUCE_MIN = 92,
  ASC_VOP_WHOLE_REDUCE_SUM = 93, /* p[0]=dstRepStride p[1]=srcBlkStride p[2]=srcRepStride p[3]=ReduceOrder */
  ASC_VOP_WHOLE_REDUCE_MAX = 94,
  ASC_VOP_WHOLE_REDUCE_MIN = 95,
  ASC_VOP_BLOCK_REDUCE_SUM = 96, /* p[0]=dstRepStride p[1]=srcBlkStride p[2]=srcRepStride */
  ASC_VOP_BLOCK_REDUCE_MAX = 97,
  ASC_VOP_BLOCK_REDUCE_MIN = 98,
  ASC_VOP_PAIR_REDUCE_SUM = 99,
  /* sorting (8-byte (score, index) structures) */
  ASC_VOP_SORT32 = 100,  /* src0 = scores (dtype), src1 = u32 indices; repeat x 32 */
  ASC_VOP_MRG_SORT = 101 /* src0..src2 = lists 1..3, list 4 at UB byte p[6]; p[0..3] = lengths,
                            p[4] = ifExhaustedSuspension, p[5] = validBit; repeat;
                            result = structures taken from each list, 16 bits each */
};

/* How the number of elements processed is given. */
enum AscVecForm {
  ASC_FORM_COUNT = 0,     /* `count` elements, contiguous (count form API) */
  ASC_FORM_MASK_CONT = 1, /* mask[0] = first N elements per repeat; repeat + strides */
  ASC_FORM_MASK_BITS = 2, /* mask[0] = low 64 lanes, mask[1] = high 64 lanes */
  ASC_FORM_MASK_CUR = 3   /* mask already set by SetVectorMask (isSetMask=false) */
};

/* Cast round modes (AscendC RoundMode). */
enum AscRound {
  ASC_RND_NONE = 0,
  ASC_RND_RINT = 1,
  ASC_RND_FLOOR = 2,
  ASC_RND_CEIL = 3,
  ASC_RND_ROUND = 4,
  ASC_RND_TRUNC = 5,
  ASC_RND_ODD = 6,
  ASC_RND_HYBRID = 7
};

/* Compare modes (AscendC CMPMODE). */
enum AscCmp {
  ASC_CMP_LT = 0,
  ASC_CMP_GT = 1,
  ASC_CMP_EQ = 2,
  ASC_CMP_LE = 3,
  ASC_CMP_GE = 4,
  ASC_CMP_NE = 5
};

typedef struct AscVecOp {
  uint32_t op;        /* AscVecOpCode */
  uint8_t dtype;      /* element type of dst (and of the sources unless noted) */
  uint8_t src_dtype;  /* source type for Cast / Axpy / Compare (else = dtype) */
  uint8_t form;       /* AscVecForm */
  uint8_t round;      /* AscRound for Cast, AscCmp for Compare(s) */
  AscLocal dst;
  AscLocal src0;
  AscLocal src1;
  AscLocal src2;
  uint64_t count;     /* ASC_FORM_COUNT: number of elements */
  uint64_t mask[2];   /* mask forms */
  uint32_t repeat;    /* mask forms: repeat times */
  uint32_t dst_blk, src0_blk, src1_blk; /* data-block strides, 32 B units */
  uint32_t dst_rep, src0_rep, src1_rep; /* repeat strides, 32 B units */
  uint64_t scalar_bits; /* scalar operand, as bits of `scalar_dtype` */
  uint8_t scalar_dtype;
  uint8_t reserved[7];
  uint32_t p[8];      /* op-specific parameters (see AscVecOpCode) */
  AscLoc loc;
} AscVecOp;

/* ---- data movement ------------------------------------------------------ */
/* One end of a copy: on-chip (mem != GM: mem/addr) or global (gm pointer). */
typedef struct AscAddr {
  uint8_t mem;   /* AscMem */
  uint8_t reserved[3];
  uint32_t addr; /* byte address for on-chip memories */
  void* gm;      /* host pointer for ASC_MEM_GM */
} AscAddr;

enum AscCopyKind {
  ASC_COPY_COUNT = 0,  /* DataCopy(dst, src, count): count*size rounded down to 32 B */
  ASC_COPY_PARAMS = 1, /* DataCopyParams: block_count x block_len (32 B units), gaps in 32 B */
  ASC_COPY_PAD = 2,    /* DataCopyPad: block_len in bytes; GM stride bytes, UB stride 32 B blocks */
  ASC_COPY_GM_FILL = 3 /* InitGlobalMemory: `count` elements of dst (GM) set to pad_bits (MTE3) */
};

typedef struct AscCopyOp {
  uint8_t kind;  /* AscCopyKind */
  uint8_t dtype; /* element type */
  uint8_t is_pad;     /* DataCopyPadExtParams.isPad */
  uint8_t left_pad;   /* elements */
  uint8_t right_pad;  /* elements */
  uint8_t reserved[3];
  AscAddr dst;
  AscAddr src;
  uint64_t count;
  uint32_t block_count;
  uint32_t block_len;
  uint32_t src_gap; /* srcGap / srcStride */
  uint32_t dst_gap; /* dstGap / dstStride */
  uint64_t pad_bits; /* paddingValue as bits of dtype */
  AscLoc loc;
} AscCopyOp;

/* ---- synchronisation and mask state ------------------------------------ */
enum AscSyncKind {
  ASC_SYNC_SET_FLAG = 0,    /* a = event (src*8+dst), b = id */
  ASC_SYNC_WAIT_FLAG = 1,   /* a = event, b = id */
  ASC_SYNC_BARRIER = 2,     /* a = pipe */
  ASC_SYNC_ALL = 3,         /* SyncAll across blocks */
  ASC_SYNC_DCACHE = 4,      /* DataCacheCleanAndInvalid */
  ASC_SYNC_ATOMIC_ADD = 5,  /* a = dtype; following UB->GM copies accumulate */
  ASC_SYNC_ATOMIC_NONE = 6,
  ASC_SYNC_MASK_COUNT = 7,  /* SetMaskCount */
  ASC_SYNC_MASK_NORM = 8,   /* SetMaskNorm */
  ASC_SYNC_RESET_MASK = 9,  /* ResetMask */
  ASC_SYNC_ATOMIC_MAX = 10, /* a = dtype */
  ASC_SYNC_ATOMIC_MIN = 11, /* a = dtype */
  /* appended in ABI 5 (MIX kernels, ascendopt/kernel/mix.h) */
  ASC_SYNC_CROSS_SET = 12,  /* a = mode | pipe << 8, b = flag id */
  ASC_SYNC_CROSS_WAIT = 13  /* a = pipe << 8, b = flag id */
};

/* ---- cube path (ABI 4): L1 / L0A / L0B / L0C, Mmad, Fixpipe ------------- */
enum AscCubeOpCode {
  /* DataCopy with Nd2NzParams, GM -> L1 (A1/B1) or UB: src0 = GM; p[0] ndNum,
     p[1] nValue, p[2] dValue, p[3] srcNdMatrixStride (elements), p[4] srcDValue
     (elements), p[5] dstNzC0Stride (32 B), p[6] dstNzNStride (32 B), p[7]
     dstNzMatrixStride (elements) */
  ASC_CUBE_ND2NZ = 1,
  /* LoadData with LoadData2DParams, L1 -> L0A/L0B (or GM -> L1/L0A/L0B): p[0]
     startIndex, p[1] repeatTimes, p[2] srcStride, p[3] dstGap (512 B units),
     p[4] ifTranspose, p[5] addrMode (1 = decreasing) */
  ASC_CUBE_LOAD2D = 2,
  /* Mmad: dst = L0C, src0 = L0A (A), src1 = L0B (B), bias (mem 0xff = none);
     dtype = C, src_dtype = A, src1_dtype = B; p[0] m, p[1] n, p[2] k, p[3]
     cmatrixInitVal, p[4] cmatrixSource, p[5] unitFlag */
  ASC_CUBE_MMAD = 3,
  /* Fixpipe (FixpipeParamsV220), L0C -> GM: dtype = dst, src_dtype = L0C;
     p[0] nSize, p[1] mSize, p[2] srcStride, p[3] dstStride, p[4] quantPre
     (AscQuantMode), p[5] ndNum, p[6] srcNdStride, p[7] dstNdStride, p[8]
     reluEn, p[9] unitFlag, p[10] layout (AscCo2Layout), p[11]
     isChannelSplit; scalar = deqScalar; src1 = the cbufWorkspace (A1,
     uint64 per column) of the per-channel modes, else mem 0xff */
  ASC_CUBE_FIXPIPE = 4,
  /* Fill / InitConstValue of an A1/B1 (L1) or A2/B2 (L0A/L0B) tensor: p[0]
     repeatTimes, p[1] blockNum, p[2] dstGap (blocks: 32 B in L1, 512 B in
     L0); scalar = initValue as bits of dtype */
  ASC_CUBE_FILL = 5,
  /* LoadDataWithTranspose (LoadData2dTransposeParams), A1 -> A2 / B1 -> B2:
     p[0] startIndex, p[1] repeatTimes, p[2] srcStride (square matrices), p[3]
     dstGap (512 B), p[4] dstFracGap (512 B), p[5] addrMode (1 = decreasing) */
  ASC_CUBE_LOAD2D_TRANSPOSE = 6,
  /* LoadData with LoadData3DParamsV2 (Load3Dv2, img2col), A1 -> A2 / B1 ->
     B2: p[0] padList (left | right << 8 | top << 16 | bottom << 24), p[1] l1H
     | l1W << 16, p[2] channelSize, p[3] kExtension | mExtension << 16, p[4]
     kStartPt | mStartPt << 16, p[5] strideW | strideH << 8 | dilationFilterW
     << 16 | dilationFilterH << 24, p[6] filterW | filterH << 16 (the +256 of
     filterSizeW/H included), p[7] flags (ASC_LOAD3D_*); scalar = padValue
     as bits of dtype */
  ASC_CUBE_LOAD3D_V2 = 7,
  /* LoadData with LoadData3DParamsV1 (Load3Dv1): recorded to be refused on
     Atlas A2 (guide table 6-168); no parameters */
  ASC_CUBE_LOAD3D_V1 = 8,
  /* SetFmatrix: p[0] l1H | l1W << 16, p[1] padList (as ASC_CUBE_LOAD3D_V2),
     p[2] FmatrixMode (0 left, 1 right) */
  ASC_CUBE_SET_FMATRIX = 9,
  /* SetLoadDataPaddingValue: dtype, scalar = the value as bits of dtype */
  ASC_CUBE_SET_LOAD3D_PAD = 10,
  /* SetLoadDataRepeat (LoadDataRepeatParam): p[0] repeatStride, p[1]
     repeatTime, p[2] repeatMode */
  ASC_CUBE_SET_LOAD3D_REPEAT = 11,
  /* SetLoadDataBoundary: p[0] boundaryValue */
  ASC_CUBE_SET_LOAD3D_BOUNDARY = 12
};

/* Flags of ASC_CUBE_LOAD3D_V2 p[7]. */
enum AscLoad3dFlag {
  ASC_LOAD3D_TRANSPOSE = 1,    /* enTranspose */
  ASC_LOAD3D_SMALL_K = 2,      /* enSmallK */
  ASC_LOAD3D_FMATRIX_RIGHT = 4, /* fMatrixCtrl */
  ASC_LOAD3D_SET_FMATRIX = 8,  /* IsResetLoad3dConfig::isSetFMatrix */
  ASC_LOAD3D_SET_PADDING = 16  /* IsResetLoad3dConfig::isSetPadding */
};

/* Fixpipe quantisation modes (QuantMode_t). */
enum AscQuantMode {
  ASC_QUANT_NONE = 0,
  ASC_QUANT_F322F16 = 1,
  ASC_QUANT_F322BF16 = 2,
  ASC_QUANT_DEQF16 = 3,
  ASC_QUANT_VDEQF16 = 4,
  ASC_QUANT_QF322B8_PRE = 5,
  ASC_QUANT_VQF322B8_PRE = 6,
  ASC_QUANT_REQ8 = 7,
  ASC_QUANT_VREQ8 = 8
};

/* Fixpipe output layouts (CO2Layout). */
enum AscCo2Layout { ASC_CO2_NZ = 0, ASC_CO2_ROW_MAJOR = 1, ASC_CO2_COLUMN_MAJOR = 2 };

#define ASC_MEM_NONE 0xffu

typedef struct AscCubeOp {
  uint32_t op;        /* AscCubeOpCode */
  uint8_t dtype;      /* element type of dst */
  uint8_t src_dtype;  /* element type of src0 */
  uint8_t src1_dtype; /* element type of src1 */
  uint8_t bias_dtype; /* element type of bias */
  AscAddr dst;
  AscAddr src0;
  AscAddr src1;
  AscAddr bias;
  uint64_t scalar;
  uint32_t p[12];
  AscLoc loc;
} AscCubeOp;

/* ---- the function table the runtime hands to a kernel library ---------- */
typedef struct AscRuntime {
  uint32_t abi_version;
  uint32_t reserved;

  /* identity */
  int64_t (*block_idx)(void);
  int64_t (*block_num)(void);
  uint64_t (*tiling_key)(void);
  uint64_t (*system_cycle)(void);

  /* TPipe / TQue / TBuf. Positions are AscendC TPosition codes (see
   * kernel_operator.h); a TQueBind passes src | dst << 8. Handles are >= 0. */
  int32_t (*que_create)(uint32_t pos, uint32_t depth, uint32_t num, uint32_t len, AscLoc loc);
  int32_t (*buf_create)(uint32_t pos, uint32_t len, AscLoc loc);
  AscLocal (*buf_get)(int32_t handle, uint8_t dtype, uint32_t elems, AscLoc loc);
  AscLocal (*que_alloc)(int32_t handle, uint8_t dtype, AscLoc loc);
  void (*que_enque)(int32_t handle, AscLocal t, AscLoc loc);
  AscLocal (*que_deque)(int32_t handle, uint8_t dtype, AscLoc loc);
  void (*que_free)(int32_t handle, AscLocal t, AscLoc loc);
  void (*pipe_reset)(AscLoc loc);
  int32_t (*fetch_event_id)(uint32_t event, AscLoc loc);
  void (*release_event_id)(uint32_t event, int32_t id, AscLoc loc);

  /* instructions */
  void (*vec)(const AscVecOp* op);
  void (*copy)(const AscCopyOp* op);
  void (*sync)(uint32_t kind, uint32_t a, uint32_t b, AscLoc loc);
  void (*set_vector_mask)(uint8_t dtype, uint64_t hi, uint64_t lo, AscLoc loc);

  /* scalar access (PIPE_S) */
  uint64_t (*local_get)(AscLocal t, uint32_t index, AscLoc loc);
  void (*local_set)(AscLocal t, uint32_t index, uint64_t bits, AscLoc loc);
  uint64_t (*gm_get)(const void* p, uint8_t dtype, AscLoc loc);
  void (*gm_set)(void* p, uint8_t dtype, uint64_t bits, AscLoc loc);
  void (*gm_read_bytes)(const void* p, void* dst, uint64_t len, AscLoc loc);

  /* diagnostics */
  void (*print)(const char* text);
  void (*trap)(const char* message, AscLoc loc);

  /* ---- appended in ABI 2 ---- */
  /* LocalTensor::operator(): the host address of element `index` of `t`
   * (bounds-checked; one scalar access that reads and writes it). */
  void* (*local_ref)(AscLocal t, uint32_t index, AscLoc loc);
  /* A vector instruction with a scalar result, as `vec` otherwise:
   * GatherMask returns the elements it kept (rsvdCnt), MrgSort the
   * structures it took from each list (4 x 16 bits, list 1 lowest). */
  uint64_t (*vec_result)(const AscVecOp* op);
  /* PopStackBuffer: the rest of the memory behind position `pos` (TPosition
   * code), from the end of what TPipe allocated there, as `dtype` elements;
   * nothing is allocated. */
  AscLocal (*local_rest)(uint32_t pos, uint8_t dtype, AscLoc loc);
  /* The launch's workspace argument (where the system workspace starts). */
  void* (*workspace_base)(void);
  /* Bytes of the system workspace at its start (GetLibApiWorkSpaceSize). */
  uint64_t (*sys_workspace_bytes)(void);

  /* ---- appended in ABI 3 ---- */
  /* The kernel's own code touched the 64-byte line at `line` (an address
   * rounded down to 64) with a plain load or store (kernel_entry.cpp's
   * instrumentation hooks call it for lines not touched just before).
   * Returns 1 when the line is GM (the touch is recorded), 2 when it lies
   * in the guard before or after a GM allocation (an access out of
   * bounds: the hook then calls `scalar_stray`), else 0. */
  int32_t (*scalar_touch)(const void* line, uint32_t store);

  /* ---- appended in ABI 4 ---- */
  /* A cube-path instruction (AscCubeOp): ND2NZ copy, LoadData, Mmad,
   * Fixpipe. */
  void (*cube)(const AscCubeOp* op);

  /* ---- appended in ABI 5 ---- */
  /* The calling core in a typed launch (runtime/mix.rs): what = 0 its
   * type (1 AIC, 2 AIV), 1 GetSubBlockIdx, 2 GetSubBlockNum, 3 the AI
   * core it belongs to, 4 the AIVs of its AI core still running, 5 the
   * AIV whose request the Matmul server's last wait took (-1: none; see
   * runtime/mix.rs serve_wait), 6 the AIVs of its AI core. */
  int64_t (*core_info)(uint32_t what);
  /* The 4096-byte scratch shared by the cores of the caller's AI core
   * (the Matmul API's messages; null in an untyped launch). */
  void* (*group_mailbox)(void);

  /* ---- appended in ABI 6 ---- */
  /* The kernel's own code loaded (`store` 0) or stored `size` bytes at
   * `addr`, and a line of it lies in the guard of a GM allocation
   * (`scalar_touch` returned 2): the runtime records the fault, naming the
   * allocation and the offset, at `pc` (the return address in the
   * kernel's code), and unwinds the kernel; it returns only when no line
   * of the access is out of bounds after all. */
  void (*scalar_stray)(const void* addr, uint64_t size, uint32_t store, const void* pc);
  /* The kernel's own code called `target`, outside the kernel library's
   * code, through a pointer (the build's check before every indirect call;
   * kernel_entry.cpp): the runtime records the fault at `pc` and unwinds. */
  void (*stray_call)(const void* target, const void* pc);
} AscRuntime;

/* Counters of the kernel's own code on the calling block's thread
 * (thread-local in kernel_entry.cpp). The instrumented kernel code adds
 * its instructions to alu/loads/stores (offsets 0, 8, 16: the build's
 * instrumentation pass writes them into the assembly); the runtime reads
 * and clears them at every API call it records. */
typedef struct AscScalarCounters {
  uint64_t alu;
  uint64_t loads;
  uint64_t stores;
  uint64_t gm_accesses; /* loads and stores that reached GM */
  uint64_t recent[4];   /* lines touched just before: (address >> 6) << 1 | is_gm; 0 = none */
} AscScalarCounters;

/* Exported by every kernel library (crates/sim/runtime_src/kernel_entry.cpp).
 *
 * Fatal faults: a runtime call that finds a fatal fault records it and then
 * calls ascendopt_kernel_throw(), which throws a C++ exception that unwinds
 * the kernel (through the runtime's "C-unwind" frames) back to
 * ascendopt_kernel_call, which returns 1. The runtime functions are
 * therefore declared C-unwind on the Rust side. */
void ascendopt_kernel_attach(const AscRuntime* rt);
/* Calls `entry` (an extern "C" kernel taking `nargs` GM_ADDR arguments,
 * nargs <= 32). Returns 0 when it ran to the end, 1 when a fault stopped it,
 * 2 when nargs is too large, 3 when the kernel threw a C++ exception. */
int32_t ascendopt_kernel_call(void (*entry)(void), uint32_t nargs, uint8_t** args);
/* Throws the fault exception; only the runtime calls it. */
void ascendopt_kernel_throw(void);
/* The calling thread's counters of the kernel's own code. */
AscScalarCounters* ascendopt_kernel_scalar_counters(void);

#ifdef __cplusplus
}
#endif

#endif /* ASCENDOPT_ABI_H */
