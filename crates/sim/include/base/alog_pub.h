// ascendopt host (op_host) emulation of CANN's base/alog_pub.h, the log
// interface under CANN's logging macros: levels, the level check and the
// record call. Records go to the simulator's host log
// (ascendopt/host/log.h): warnings and errors are kept, the rest dropped.
#ifndef ASCENDOPT_BASE_ALOG_PUB_H
#define ASCENDOPT_BASE_ALOG_PUB_H

#include "../ascendopt/host/log.h"

#define DLOG_DEBUG 0
#define DLOG_INFO 1
#define DLOG_WARN 2
#define DLOG_ERROR 3
#define DLOG_EVENT 0x10
#define DLOG_TYPE_DEBUG 0
#define DLOG_TYPE_RUN 1

// The module id operators log under.
enum AscendoptLogModule { OP = 23 };

// 1 when a record of `level` would be written.
inline int AlogCheckDebugLevel(int /*module*/, int level) {
  return level == DLOG_WARN || level == DLOG_ERROR ? 1 : 0;
}

inline void AlogRecord(int /*module*/, int /*type*/, int level, const char* fmt, ...)
    __attribute__((format(printf, 4, 5)));
inline void AlogRecord(int /*module*/, int /*type*/, int level, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  ::ascendopt::host::vlog(level == DLOG_ERROR  ? ::ascendopt::host::kLogError
                          : level == DLOG_WARN ? ::ascendopt::host::kLogWarn
                                               : ::ascendopt::host::kLogDebug,
                          "", fmt, ap);
  va_end(ap);
}

// The project's CMake names the logging sub-module of its host targets;
// these are the values for a tiling library.
#ifndef OPS_UTILS_LOG_SUB_MOD_NAME
#define OPS_UTILS_LOG_SUB_MOD_NAME "OP_TILING"
#endif
#ifndef OPS_UTILS_LOG_PACKAGE_TYPE
#define OPS_UTILS_LOG_PACKAGE_TYPE ""
#endif

#endif
