// ascendopt host (op_host) emulation of CANN's base/err_msg.h: reporting an
// error message with its error code. The simulator keeps it as the host's
// last error (ascendopt/host/log.h), which a failed tiling's message quotes.
#ifndef ASCENDOPT_BASE_ERR_MSG_H
#define ASCENDOPT_BASE_ERR_MSG_H

#include "../ascendopt/host/log.h"

#ifndef REPORT_INNER_ERR_MSG
#define REPORT_INNER_ERR_MSG(CODE, ...) \
  ::ascendopt::host::log_message(::ascendopt::host::kLogError, "", __VA_ARGS__)
#endif
#ifndef REPORT_INNER_ERROR
#define REPORT_INNER_ERROR(CODE, ...) \
  ::ascendopt::host::log_message(::ascendopt::host::kLogError, "", __VA_ARGS__)
#endif
#ifndef REPORT_CALL_ERROR
#define REPORT_CALL_ERROR(CODE, ...) \
  ::ascendopt::host::log_message(::ascendopt::host::kLogError, "", __VA_ARGS__)
#endif

#endif
