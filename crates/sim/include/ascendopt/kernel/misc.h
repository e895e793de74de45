// ascendopt AscendC emulation: printf, trap/assert, tiling macros.
#ifndef ASCENDOPT_KERNEL_MISC_H
#define ASCENDOPT_KERNEL_MISC_H

#include <stdarg.h>
#include <stddef.h>

#include "tensor.h"
#include "tiling.h"

extern "C" int vsnprintf(char* str, size_t size, const char* format, va_list ap) noexcept;

namespace AscendC {

// AscendC printf: formatted on the CPU and collected by the runtime.
inline void printf(const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  ASC_RT->print(buf);
}

inline void trap(ASC_LOC) { ASC_RT->trap("trap() called", loc_.c()); }

inline void ascendopt_assert(bool ok, const char* text, ASC_LOC) {
  if (!ok) ASC_RT->trap(text, loc_.c());
}

}  // namespace AscendC

#define PRINTF AscendC::printf
#ifndef ASSERT
#define ASSERT(cond) ::AscendC::ascendopt_assert((cond), "assertion failed: " #cond)
#endif

#endif
