// ascendopt AscendC emulation: the table of a kernel library's template
// instances (tpl_instances.h fills it while the library loads;
// kernel_entry.cpp's ascendopt_kernel_tpl_entry reads it for the launch).
// Plain C++: kernel_entry.cpp includes it alone.
#ifndef ASCENDOPT_KERNEL_TPL_TABLE_H
#define ASCENDOPT_KERNEL_TPL_TABLE_H

#include <stdint.h>

namespace ascendopt {
namespace tpl {

constexpr uint32_t kMaxInstances = 256;

struct Instances {
  uint32_t count;
  uint64_t keys[kMaxInstances];
  const void* entries[kMaxInstances];
};

// Defined in kernel_entry.cpp, one per kernel library (hidden, as
// g_kernel_types).
extern Instances g_tpl_instances __attribute__((visibility("hidden")));

}  // namespace tpl
}  // namespace ascendopt

#endif
