// ascendopt AscendC emulation: printf, trap/assert, tiling macros.
#ifndef ASCENDOPT_KERNEL_MISC_H
#define ASCENDOPT_KERNEL_MISC_H

#include <stdarg.h>
#include <stddef.h>

#include "tensor.h"
#include "tiling.h"
#include "vec_arith.h"
#include "pipe.h"

extern "C" int vsnprintf(char* str, size_t size, const char* format, va_list ap) noexcept;
extern "C" int snprintf(char* str, size_t size, const char* format, ...) noexcept;

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

// Type equality as real kernels test it (`if constexpr
// (IsSameType<T, float>::value)`).
template <typename A, typename B>
struct IsSameType {
  static constexpr bool value = false;
};
template <typename A>
struct IsSameType<A, A> {
  static constexpr bool value = true;
};

// Floats in one 32-byte data block (hardware-facts.md section C), a name
// real kernels use from AscendC without defining it.
constexpr int32_t ONE_BLK_FLOAT_NUM = 8;

// CANN's internal utility class, whose mask calls public operators make
// directly (cann-ops norm/ kernels): SetMask<T>(n) sets a continuous mask
// of the first n lanes (SetVectorMask<T>(n)), SetMaskCount<T>() and
// SetMaskNorm<T>() switch the mask mode, GetC0Count(size) is the elements
// of `size` bytes in one 32-byte block.
class AscendCUtils {
 public:
  template <typename T>
  static void SetMask(int32_t len, ASC_LOC) {
    SetVectorMask<T, MaskMode::NORMAL>(len, loc_);
  }
  template <typename T>
  static void SetMask(uint64_t maskHigh, uint64_t maskLow, ASC_LOC) {
    SetVectorMask<T, MaskMode::NORMAL>(maskHigh, maskLow, loc_);
  }
  template <typename T>
  static void SetMaskCount(ASC_LOC) {
    ::AscendC::SetMaskCount(loc_);
  }
  template <typename T>
  static void SetMaskNorm(ASC_LOC) {
    ::AscendC::SetMaskNorm(loc_);
  }
  static constexpr int32_t GetC0Count(int32_t typeSize) { return typeSize <= 0 ? 0 : 32 / typeSize; }
};

}  // namespace AscendC

// CANN code names GetTPipePtr unqualified as well.
using AscendC::GetTPipePtr;

namespace AscendC {
// ascendc_assert / assert with an optional printf-style message (guide
// 6.2.3.11.2.1/2): a false condition stops the launch, naming the
// condition, the message and the line.
inline void ascendopt_assert_at(bool ok, const char* cond, const char* file, int line) {
  if (!ok) {
    char text[1024];
    snprintf(text, sizeof(text), "Assertion `%s' failed", cond);
    ASC_RT->trap(text, AscLoc{file, line});
  }
}
template <class... Args>
inline void ascendopt_assert_at(bool ok, const char* cond, const char* file, int line, const char* fmt,
                                Args&&... args) {
  if (!ok) {
    char msg[768];
    snprintf(msg, sizeof(msg), fmt, args...);
    char text[1024];
    snprintf(text, sizeof(text), "Assertion `%s' failed: %s", cond, msg);
    ASC_RT->trap(text, AscLoc{file, line});
  }
}
}  // namespace AscendC

#define ASSERT_MSG(cond, ...) \
  ::AscendC::ascendopt_assert_at((bool)(cond), #cond, __FILE__, __LINE__, ##__VA_ARGS__)
#define ascendc_assert(cond, ...) \
  ::AscendC::ascendopt_assert_at((bool)(cond), #cond, __FILE__, __LINE__, ##__VA_ARGS__)
#ifndef assert
#define assert(cond, ...) ::AscendC::ascendopt_assert_at((bool)(cond), #cond, __FILE__, __LINE__, ##__VA_ARGS__)
#endif

#define PRINTF AscendC::printf
// ASSERT is CANN's internal check macro (the guide documents assert and
// ascendc_assert above, which check). The kernel unit is the device build
// (__NPU_ARCH__ defined), where ASSERT expands to nothing, and kernels written
// for the device rely on that: `this->n = n ASSERT(n != 0);` compiles there
// with its semicolon missing, and `uint32_t a = p.a ASSERT(a != 0);` checks a
// variable inside its own initializer. So it expands to nothing here too.
#ifndef ASSERT
#define ASSERT(cond)
#endif

#endif
