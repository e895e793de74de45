// ascendopt AscendC emulation: flags, barriers, SyncAll, atomics, data cache
// (hardware-facts.md section A "Explicit sync"; guide 6.2.3.7).
#ifndef ASCENDOPT_KERNEL_SYNC_H
#define ASCENDOPT_KERNEL_SYNC_H

#include "tensor.h"

namespace AscendC {

template <HardEvent E>
inline void SetFlag(int32_t id, ASC_LOC) {
  ASC_RT->sync(ASC_SYNC_SET_FLAG, (uint32_t)E, (uint32_t)id, loc_.c());
}
template <HardEvent E>
inline void WaitFlag(int32_t id, ASC_LOC) {
  ASC_RT->sync(ASC_SYNC_WAIT_FLAG, (uint32_t)E, (uint32_t)id, loc_.c());
}
template <pipe_t P>
inline void PipeBarrier(ASC_LOC) {
  ASC_RT->sync(ASC_SYNC_BARRIER, (uint32_t)P, 0, loc_.c());
}

// The destination pipe waits for the source pipe's event `id` (guide
// 6.2.3.7.1.2 TQueSync): SetFlag/WaitFlag with the pipes as template
// arguments.
template <pipe_t src, pipe_t dst>
class TQueSync {
 public:
  void SetFlag(TEventID id, ASC_LOC) {
    ASC_RT->sync(ASC_SYNC_SET_FLAG, (uint32_t)src * 8u + (uint32_t)dst, (uint32_t)id, loc_.c());
  }
  void WaitFlag(TEventID id, ASC_LOC) {
    ASC_RT->sync(ASC_SYNC_WAIT_FLAG, (uint32_t)src * 8u + (uint32_t)dst, (uint32_t)id, loc_.c());
  }
};

// SyncAll<true> (the default) waits for the vector cores only; in a MIX
// launch SyncAll<false> waits for the cube cores too (guide 6.2.3.7.2.3).
// Launches with one kind of core wait for every core either way.
template <bool isAIVOnly = true>
inline void SyncAll(ASC_LOC) {
  ASC_RT->sync(ASC_SYNC_ALL, isAIVOnly ? 1u : 0u, 0, loc_.c());
}
template <bool isAIVOnly = true>
inline void SyncAll(const GlobalTensor<int32_t>&, const LocalTensor<int32_t>&, int32_t usedCores = 0, ASC_LOC) {
  (void)usedCores;
  ASC_RT->sync(ASC_SYNC_ALL, isAIVOnly ? 1u : 0u, 0, loc_.c());
}

// Synchronisation between the cores of a separated-architecture launch
// (guide 6.2.3.7.2.4-5; runtime/mix.rs has the counting rules): the set
// sits in `pipe` and fires once the pipe's earlier work is done; the wait
// blocks `pipe` (the scalar unit by default) until the flag's counter on
// this core is above zero. Modes 0 (all cores of the caller's type), 1 (the
// AIVs of one AI core) and 2 (an AIC and its AIVs); flag ids 0-10.
template <uint8_t modeId, pipe_t pipe>
inline void CrossCoreSetFlag(uint16_t flagId, ASC_LOC) {
  ASC_RT->sync(ASC_SYNC_CROSS_SET, (uint32_t)modeId | ((uint32_t)pipe << 8), (uint32_t)flagId, loc_.c());
}
template <uint8_t modeId = 0, pipe_t pipe = PIPE_S>
inline void CrossCoreWaitFlag(uint16_t flagId, ASC_LOC) {
  ASC_RT->sync(ASC_SYNC_CROSS_WAIT, (uint32_t)modeId | ((uint32_t)pipe << 8), (uint32_t)flagId, loc_.c());
}

template <class T>
inline void SetAtomicAdd(ASC_LOC) {
  ASC_RT->sync(ASC_SYNC_ATOMIC_ADD, ::ascendopt::dtype_of<T>(), 0, loc_.c());
}
template <class T>
inline void SetAtomicMax(ASC_LOC) {
  ASC_RT->sync(ASC_SYNC_ATOMIC_MAX, ::ascendopt::dtype_of<T>(), 0, loc_.c());
}
template <class T>
inline void SetAtomicMin(ASC_LOC) {
  ASC_RT->sync(ASC_SYNC_ATOMIC_MIN, ::ascendopt::dtype_of<T>(), 0, loc_.c());
}
inline void SetAtomicNone(ASC_LOC) { ASC_RT->sync(ASC_SYNC_ATOMIC_NONE, 0, 0, loc_.c()); }

// ---- unlocated overloads (see ASC_UNLOCATED_OVERLOAD) ----------------------------------
ASC_UNLOCATED_OVERLOAD((HardEvent E), (E), void, SetFlag, (int32_t id), (id))
ASC_UNLOCATED_OVERLOAD((HardEvent E), (E), void, WaitFlag, (int32_t id), (id))
template <pipe_t P, ASC_UNLOCATED_PACK>
inline void PipeBarrier(ascendopt_unlocated_...) {
  PipeBarrier<P>(::ascendopt::Loc::none());
}

enum class CacheLine : uint8_t { SINGLE_CACHE_LINE = 0, ENTIRE_DATA_CACHE };
enum class DcciDst : uint8_t { CACHELINE_ALL = 0, CACHELINE_UB, CACHELINE_OUT, CACHELINE_ATOMIC };

template <class T, CacheLine entireType = CacheLine::SINGLE_CACHE_LINE, DcciDst dst = DcciDst::CACHELINE_OUT>
inline void DataCacheCleanAndInvalid(const GlobalTensor<T>&, ASC_LOC) {
  ASC_RT->sync(ASC_SYNC_DCACHE, 0, 0, loc_.c());
}
template <class T, CacheLine entireType = CacheLine::SINGLE_CACHE_LINE, DcciDst dst = DcciDst::CACHELINE_OUT>
inline void DataCacheCleanAndInvalid(const LocalTensor<T>&, ASC_LOC) {
  ASC_RT->sync(ASC_SYNC_DCACHE, 0, 0, loc_.c());
}

}  // namespace AscendC

// The device compiler's intrinsics of the same operations, which kernels
// call directly at global scope: `set_flag(PIPE_V, PIPE_MTE3, EVENT_ID0)`,
// `wait_flag(...)`, `pipe_barrier(PIPE_V)`.
inline void set_flag(pipe_t src, pipe_t dst, int32_t id, ASC_LOC) {
  ASC_RT->sync(ASC_SYNC_SET_FLAG, (uint32_t)src * 8u + (uint32_t)dst, (uint32_t)id, loc_.c());
}
inline void wait_flag(pipe_t src, pipe_t dst, int32_t id, ASC_LOC) {
  ASC_RT->sync(ASC_SYNC_WAIT_FLAG, (uint32_t)src * 8u + (uint32_t)dst, (uint32_t)id, loc_.c());
}
inline void pipe_barrier(pipe_t p, ASC_LOC) { ASC_RT->sync(ASC_SYNC_BARRIER, (uint32_t)p, 0, loc_.c()); }
namespace AscendC {
using ::pipe_barrier;
}

#endif
