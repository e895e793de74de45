// ascendopt AscendC emulation: the names a kernel sees without including
// anything of AscendC's own, because the device compiler (bisheng) and
// CANN's CPU-debug build provide them: the pipe and event enumerations
// (pipe_t / PIPE_*, event_t / EVENT_ID*), the lower-case intrinsics real
// kernels call directly (set_flag, wait_flag, pipe_barrier, get_block_idx,
// get_block_num, get_subblockid), the scalar type names float16_t and
// float32_t, the likely/unlikely branch hints, and the core-type names
// (g_coreType, AIV, AIC, ASCEND_IS_AIV, ASCEND_IS_AIC; guide 2.4.1 "SIMD
// BuiltIn关键字").
//
// Clean-room: written from the guide's descriptions and examples (2.4.1;
// 6.2.3.7.1 SetFlag/WaitFlag and PipeBarrier, whose examples cast
// FetchEventID's result to event_t and pass EVENT_ID0; 6.2.3.9 system
// variables) and from how the public operators use these names. All of it
// is at global scope, as the compiler's builtins are, and re-declared in
// namespace AscendC where CANN code qualifies them (AscendC::PIPE_V,
// AscendC::g_coreType).
#ifndef ASCENDOPT_KERNEL_BUILTINS_H
#define ASCENDOPT_KERNEL_BUILTINS_H

#include <stdint.h>

#include "../abi.h"

// ---- pipes and event ids ----------------------------------------------------
// The codes are the ABI's (a HardEvent is src * 8 + dst).
enum pipe_t : uint8_t {
  PIPE_S = ASC_PIPE_S,
  PIPE_V = ASC_PIPE_V,
  PIPE_M = ASC_PIPE_M,
  PIPE_MTE1 = ASC_PIPE_MTE1,
  PIPE_MTE2 = ASC_PIPE_MTE2,
  PIPE_MTE3 = ASC_PIPE_MTE3,
  PIPE_FIX = ASC_PIPE_FIX,
  PIPE_ALL = ASC_PIPE_ALL
};

// Hardware event ids 0..7 (6 and 7 are reserved for the framework,
// hardware-facts.md section A); kernels pass them to set_flag / SetFlag.
enum event_t : uint8_t {
  EVENT_ID0 = 0,
  EVENT_ID1 = 1,
  EVENT_ID2 = 2,
  EVENT_ID3 = 3,
  EVENT_ID4 = 4,
  EVENT_ID5 = 5,
  EVENT_ID6 = 6,
  EVENT_ID7 = 7
};

// ---- block identity as variables ----------------------------------------------
// The device compiler also exposes the block's index and count as the
// variables block_idx and block_num; the runtime sets them on each block's
// thread before the kernel runs (runtime_src/kernel_entry.cpp).
extern thread_local int64_t block_idx;
extern thread_local int64_t block_num;

// ---- scalar type names ------------------------------------------------------
// float16_t is the device's binary16 (AscendC's half, declared in types.h);
// float32_t its binary32.
typedef float float32_t;

// ---- branch hints -------------------------------------------------------------
#ifndef likely
#define likely(x) __builtin_expect(!!(x), 1)
#endif
#ifndef unlikely
#define unlikely(x) __builtin_expect(!!(x), 0)
#endif

// ---- core types (guide 2.4.1: ASCEND_IS_AIV / ASCEND_IS_AIC) ---------------------
// The core the calling block runs on, set by the runtime on each block's
// thread before the kernel starts (kernel_entry.cpp): AIC or AIV in a launch
// whose kernel type is declared (KERNEL_TASK_TYPE_DEFAULT, or MIX through
// the Matmul API; runtime/mix.rs), AIV otherwise. The device compiler
// builds a MIX kernel once per core type and drops the other type's
// branches; here both are compiled and the branch is taken at run time,
// which `if ASCEND_IS_AIV { ... }` cannot tell apart.
namespace AscendC {
constexpr int32_t AIC = 1;
constexpr int32_t AIV = 2;
constexpr int32_t MIX = 3;
constexpr int32_t AIC_TYPE = AIC;
constexpr int32_t AIV_TYPE = AIV;
extern thread_local int32_t g_coreType;
}  // namespace AscendC
#define ASCEND_IS_AIV (::AscendC::g_coreType == ::AscendC::AIV)
#define ASCEND_IS_AIC (::AscendC::g_coreType == ::AscendC::AIC)
#define ASCEND_IS_NOT_AIV (::AscendC::g_coreType != ::AscendC::AIV)
#define ASCEND_IS_NOT_AIC (::AscendC::g_coreType != ::AscendC::AIC)

#endif
