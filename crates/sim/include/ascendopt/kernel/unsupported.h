// ascendopt AscendC emulation: APIs that exist in AscendC but are not
// emulated yet. Calling one fails to compile with a message naming it.
#ifndef ASCENDOPT_KERNEL_UNSUPPORTED_H
#define ASCENDOPT_KERNEL_UNSUPPORTED_H

#include "types.h"

#define ASCENDOPT_UNSUPPORTED(Name)                                                         \
  template <class... Ts, class... As>                                                       \
  inline void Name(As&&...) {                                                               \
    static_assert(::ascendopt::always_false<Ts..., As...>,                                  \
                  "not supported by the ascendopt simulator: " #Name);                     \
  }

namespace AscendC {
ASCENDOPT_UNSUPPORTED(SimpleSoftMax)
ASCENDOPT_UNSUPPORTED(LogSoftMax)
ASCENDOPT_UNSUPPORTED(SoftmaxFlash)
ASCENDOPT_UNSUPPORTED(LayerNorm)
ASCENDOPT_UNSUPPORTED(BatchNorm)
ASCENDOPT_UNSUPPORTED(GroupNorm)
ASCENDOPT_UNSUPPORTED(Transpose)
ASCENDOPT_UNSUPPORTED(TransData)
ASCENDOPT_UNSUPPORTED(TopK)
ASCENDOPT_UNSUPPORTED(Scatter)
ASCENDOPT_UNSUPPORTED(Silu)
ASCENDOPT_UNSUPPORTED(Swish)
ASCENDOPT_UNSUPPORTED(SwiGLU)
ASCENDOPT_UNSUPPORTED(Gelu)
ASCENDOPT_UNSUPPORTED(FasterGelu)
ASCENDOPT_UNSUPPORTED(DumpTensor)
}  // namespace AscendC

#endif
