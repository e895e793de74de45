// ascendopt host (op_host) emulation of securec.h, the bounds-checked C
// string and memory functions (the libboundscheck interface CANN ships):
// each checks its destination size first and returns EOK (0) or an error
// code instead of overrunning. Clean-room, from the documented contract of
// these functions (C11 Annex K style).
#ifndef ASCENDOPT_SECUREC_H
#define ASCENDOPT_SECUREC_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#ifndef EOK
#define EOK 0
#endif
typedef int errno_t;

namespace ascendopt {
namespace securec {
constexpr errno_t kInvalid = 22;   // EINVAL: null pointer or zero size
constexpr errno_t kRange = 34;     // ERANGE: the destination is too small
constexpr errno_t kOverlap = 54;   // the buffers overlap
}  // namespace securec
}  // namespace ascendopt

inline errno_t memset_s(void* dest, size_t destMax, int c, size_t count) {
  if (dest == nullptr || destMax == 0) return ascendopt::securec::kInvalid;
  if (count > destMax) {
    memset(dest, c, destMax);
    return ascendopt::securec::kRange;
  }
  memset(dest, c, count);
  return EOK;
}

inline errno_t memcpy_s(void* dest, size_t destMax, const void* src, size_t count) {
  if (dest == nullptr || destMax == 0) return ascendopt::securec::kInvalid;
  if (src == nullptr) {
    memset(dest, 0, destMax);
    return ascendopt::securec::kInvalid;
  }
  if (count > destMax) {
    memset(dest, 0, destMax);
    return ascendopt::securec::kRange;
  }
  const char* s = static_cast<const char*>(src);
  char* d = static_cast<char*>(dest);
  if ((d < s && d + count > s) || (s < d && s + count > d)) {
    memset(dest, 0, destMax);
    return ascendopt::securec::kOverlap;
  }
  memcpy(dest, src, count);
  return EOK;
}

inline errno_t memmove_s(void* dest, size_t destMax, const void* src, size_t count) {
  if (dest == nullptr || destMax == 0) return ascendopt::securec::kInvalid;
  if (src == nullptr) return ascendopt::securec::kInvalid;
  if (count > destMax) return ascendopt::securec::kRange;
  memmove(dest, src, count);
  return EOK;
}

inline errno_t strncpy_s(char* dest, size_t destMax, const char* src, size_t count) {
  if (dest == nullptr || destMax == 0) return ascendopt::securec::kInvalid;
  if (src == nullptr) {
    dest[0] = '\0';
    return ascendopt::securec::kInvalid;
  }
  size_t n = strnlen(src, count);
  if (n >= destMax) {
    dest[0] = '\0';
    return ascendopt::securec::kRange;
  }
  memcpy(dest, src, n);
  dest[n] = '\0';
  return EOK;
}

inline errno_t strcpy_s(char* dest, size_t destMax, const char* src) {
  return strncpy_s(dest, destMax, src, src != nullptr ? strlen(src) : 0);
}

inline errno_t strcat_s(char* dest, size_t destMax, const char* src) {
  if (dest == nullptr || destMax == 0) return ascendopt::securec::kInvalid;
  size_t used = strnlen(dest, destMax);
  if (used == destMax) return ascendopt::securec::kInvalid;  // not terminated
  if (src == nullptr) return ascendopt::securec::kInvalid;
  size_t n = strlen(src);
  if (used + n >= destMax) {
    dest[0] = '\0';
    return ascendopt::securec::kRange;
  }
  memcpy(dest + used, src, n + 1);
  return EOK;
}

// Returns the number of characters written, or -1 when they do not fit
// (the destination then holds an empty string).
inline int vsnprintf_s(char* dest, size_t destMax, size_t count, const char* format, va_list ap) {
  if (dest == nullptr || destMax == 0 || format == nullptr) return -1;
  size_t limit = count < destMax ? count + 1 : destMax;
  int n = vsnprintf(dest, limit, format, ap);
  if (n < 0 || (size_t)n >= limit) {
    if (count < destMax && n >= 0) return -1;  // truncated to count: CANN's -1
    dest[0] = '\0';
    return -1;
  }
  return n;
}

inline int snprintf_s(char* dest, size_t destMax, size_t count, const char* format, ...)
    __attribute__((format(printf, 4, 5)));
inline int snprintf_s(char* dest, size_t destMax, size_t count, const char* format, ...) {
  va_list ap;
  va_start(ap, format);
  int n = vsnprintf_s(dest, destMax, count, format, ap);
  va_end(ap);
  return n;
}

inline int sprintf_s(char* dest, size_t destMax, const char* format, ...) __attribute__((format(printf, 3, 4)));
inline int sprintf_s(char* dest, size_t destMax, const char* format, ...) {
  va_list ap;
  va_start(ap, format);
  int n = vsnprintf_s(dest, destMax, destMax > 0 ? destMax - 1 : 0, format, ap);
  va_end(ap);
  return n;
}

#endif
