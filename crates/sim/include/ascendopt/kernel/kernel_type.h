// ascendopt AscendC emulation: the kernel type a kernel declares (guide
// 6.2.3.14.12 "设置Kernel类型": KERNEL_TASK_TYPE_DEFAULT, KERNEL_TASK_TYPE)
// and whether it uses the Matmul API, registered when the kernel library
// loads so that the launch knows which cores to start before any runs
// (runtime/mix.rs).
//
// The device compiler reads the declaration statically, wherever it sits
// in the kernel. Here each use names a static member of a class template
// instantiated for the declared value; its initialiser runs while the
// library loads and writes `g_kernel_types`, which kernel_entry.cpp hands
// to the runtime. Plain C++: no other header needed (kernel_entry.cpp
// includes this one alone).
#ifndef ASCENDOPT_KERNEL_KERNEL_TYPE_H
#define ASCENDOPT_KERNEL_KERNEL_TYPE_H

#include <stdint.h>

namespace ascendopt {

// Layout shared with runtime/mix.rs (RegisteredTypes).
struct KernelTypes {
  int32_t default_type;
  int32_t count;
  uint64_t keys[32];
  int32_t types[32];
  int32_t matmul_api;
  int32_t cube_only;
};

// Defined in kernel_entry.cpp, one per kernel library: hidden, so that two
// libraries in one process (an inline variable would be one GNU-unique
// symbol for the whole process) never share it.
extern KernelTypes g_kernel_types __attribute__((visibility("hidden")));

// The registrars have internal linkage for the same reason: a template's
// static member of vague linkage would be initialised by the first library
// that loads only.
namespace {

inline int register_key_type(uint64_t key, int32_t type) {
  KernelTypes& t = g_kernel_types;
  for (int32_t i = 0; i < t.count; ++i) {
    if (t.keys[i] == key) {
      t.types[i] = type;
      return 0;
    }
  }
  if (t.count < 32) {
    t.keys[t.count] = key;
    t.types[t.count] = type;
    t.count += 1;
  }
  return 0;
}

template <int32_t T>
struct DefaultKernelType {
  static inline int registered = (g_kernel_types.default_type = T, 0);
};

template <uint64_t K, int32_t T>
struct KeyKernelType {
  static inline int registered = register_key_type(K, T);
};

template <int32_t CubeOnly>
struct MatmulApiUse {
  static inline int registered = (g_kernel_types.matmul_api = 1, g_kernel_types.cube_only = CubeOnly, 0);
};

}  // namespace
}  // namespace ascendopt

#define KERNEL_TASK_TYPE_DEFAULT(t) ((void)&::ascendopt::DefaultKernelType<(int32_t)(t)>::registered)
#define KERNEL_TASK_TYPE(key, t) ((void)&::ascendopt::KeyKernelType<(uint64_t)(key), (int32_t)(t)>::registered)

#endif
