// ascendopt AscendC emulation: workspaces and temporary space (guide
// 6.2.3.6.2: GetSysWorkSpacePtr, SetSysWorkspace, GetUserWorkspace,
// PopStackBuffer) and InitGlobalMemory (hiascend API reference,
// "InitGlobalMemory"). Clean-room, from the documented behaviour.
//
// - The kernel's workspace argument is the whole workspace the host asked
//   for: the system workspace (GetLibApiWorkSpaceSize bytes) first, the
//   user's after it. An msopgen build sets the system workspace pointer
//   itself (guide: "采用工程化算子开发方式...时，不需要开发者手动设置，框架会自动设置"),
//   so GetSysWorkSpacePtr returns the workspace argument until the kernel
//   calls SetSysWorkspace. GetUserWorkspace(w) is w plus the system
//   workspace's size; if the host did not add that size, the user part
//   lies past the allocation and the first access faults naming it.
// - PopStackBuffer<T, pos> hands out the rest of the memory behind pos
//   (after what TPipe allocated there) without allocating it.
// - InitGlobalMemory(gm, size, value) sets `size` elements of gm to value
//   with one MTE3 transfer (so UB users wait for MTE3, as the reference
//   says).
#ifndef ASCENDOPT_KERNEL_WORKSPACE_H
#define ASCENDOPT_KERNEL_WORKSPACE_H

#include "copy.h"

namespace ascendopt {
// Set by SetSysWorkspace on this block (thread).
inline thread_local uint8_t* g_sys_workspace = nullptr;
inline thread_local bool g_sys_workspace_set = false;
}  // namespace ascendopt

namespace AscendC {

inline void SetSysWorkspace(GM_ADDR workspace) {
  ::ascendopt::g_sys_workspace = workspace;
  ::ascendopt::g_sys_workspace_set = true;
}

inline __gm__ uint8_t* GetSysWorkSpacePtr() {
  if (::ascendopt::g_sys_workspace_set) return ::ascendopt::g_sys_workspace;
  return (uint8_t*)ASC_RT->workspace_base();
}

inline GM_ADDR GetUserWorkspace(GM_ADDR workspace) {
  return (GM_ADDR)((uintptr_t)workspace + (uintptr_t)ASC_RT->sys_workspace_bytes());
}

template <typename T, TPosition pos>
inline bool PopStackBuffer(LocalTensor<T>& popLocal, ASC_LOC) {
  popLocal = LocalTensor<T>::from_desc(ASC_RT->local_rest((uint32_t)pos, ::ascendopt::dtype_of<T>(), loc_.c()), pos);
  return true;
}

// Takes a const reference so that a slice (`yGm[offset]`) may be passed
// as well.
template <typename T>
inline void InitGlobalMemory(const GlobalTensor<T>& gmWorkspaceAddr, const uint64_t size, const T value, ASC_LOC) {
  AscCopyOp op = detail::base_op<T>(ASC_COPY_GM_FILL, detail::global_addr(gmWorkspaceAddr), AscAddr{}, loc_);
  op.count = size;
  op.pad_bits = ::ascendopt::to_bits<T>(value);
  ASC_RT->copy(&op);
}
// The earlier name of InitGlobalMemory, which public operators still call
// with the same arguments (`InitOutput(yGm[offset], count, (float)0)`).
template <typename T>
inline void InitOutput(const GlobalTensor<T>& gm, const uint64_t size, const T value, ASC_LOC) {
  InitGlobalMemory(gm, size, value, loc_);
}

}  // namespace AscendC

#endif
