// ascendopt host (op_host) emulation: the host side's logs. CANN writes
// host logs to its log files (plog) by level; the simulator drops debug
// and info messages, writes warnings and errors to the worker's stderr,
// and keeps the last error, which a failed tiling's message then quotes
// (so "the tiling function returned 4294967295" comes with the reason the
// tiling logged).
//
// The macros are the ones op_host code uses (OP_LOGD ... from the opdev
// log header, ASC_CPU_LOG_* of guide 6.4.9.1); each is defined only when
// the user's code has not defined it already.
#ifndef ASCENDOPT_HOST_LOG_H
#define ASCENDOPT_HOST_LOG_H

#include <stdarg.h>

#include "std_bundle.h"

namespace ascendopt {
namespace host {
enum LogLevel { kLogDebug = 0, kLogInfo = 1, kLogWarn = 2, kLogError = 3 };

// Defined in runtime_src/host_entry.cpp.
void vlog(int level, const char* op, const char* fmt, va_list ap);
inline void log_message(int level, const char* op, const char* fmt, ...) __attribute__((format(printf, 3, 4)));
inline void log_message(int level, const char* op, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vlog(level, op, fmt, ap);
  va_end(ap);
}

// The operator a log call names: a name, or a context (its node name).
inline const char* log_op(const char* name) { return name != nullptr ? name : ""; }
inline const char* log_op(const std::string& name) { return name.c_str(); }
template <class Context>
inline auto log_op(const Context* context) -> decltype(context->GetNodeName()) {
  return context != nullptr ? context->GetNodeName() : "";
}
}  // namespace host
}  // namespace ascendopt

#define ASCENDOPT_HOST_LOG(LEVEL, OP, ...) \
  ::ascendopt::host::log_message((LEVEL), ::ascendopt::host::log_op(OP), __VA_ARGS__)

#ifndef OP_LOGD
#define OP_LOGD(OP, ...) ASCENDOPT_HOST_LOG(::ascendopt::host::kLogDebug, OP, __VA_ARGS__)
#endif
#ifndef OP_LOGI
#define OP_LOGI(OP, ...) ASCENDOPT_HOST_LOG(::ascendopt::host::kLogInfo, OP, __VA_ARGS__)
#endif
#ifndef OP_LOGW
#define OP_LOGW(OP, ...) ASCENDOPT_HOST_LOG(::ascendopt::host::kLogWarn, OP, __VA_ARGS__)
#endif
#ifndef OP_LOGE
#define OP_LOGE(OP, ...) ASCENDOPT_HOST_LOG(::ascendopt::host::kLogError, OP, __VA_ARGS__)
#endif
#ifndef OP_LOGE_WITHOUT_REPORT
#define OP_LOGE_WITHOUT_REPORT(OP, ...) ASCENDOPT_HOST_LOG(::ascendopt::host::kLogError, OP, __VA_ARGS__)
#endif
#ifndef OP_LOGE_IF
#define OP_LOGE_IF(COND, RET, OP, ...)                                \
  do {                                                                \
    if (COND) {                                                       \
      ASCENDOPT_HOST_LOG(::ascendopt::host::kLogError, OP, __VA_ARGS__); \
      return RET;                                                     \
    }                                                                 \
  } while (0)
#endif

#ifndef ASC_CPU_LOG_DEBUG
#define ASC_CPU_LOG_DEBUG(...) ::ascendopt::host::log_message(::ascendopt::host::kLogDebug, "", __VA_ARGS__)
#define ASC_CPU_LOG_INFO(...) ::ascendopt::host::log_message(::ascendopt::host::kLogInfo, "", __VA_ARGS__)
#define ASC_CPU_LOG_WARNING(...) ::ascendopt::host::log_message(::ascendopt::host::kLogWarn, "", __VA_ARGS__)
#define ASC_CPU_LOG_ERROR(...) ::ascendopt::host::log_message(::ascendopt::host::kLogError, "", __VA_ARGS__)
#endif

#endif
