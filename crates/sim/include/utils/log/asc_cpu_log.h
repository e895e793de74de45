// ascendopt host (op_host) emulation of utils/log/asc_cpu_log.h (guide
// 6.4.9.1): ASC_CPU_LOG_ERROR/INFO/WARNING/DEBUG (see ascendopt/host/log.h).
#ifndef ASCENDOPT_UTILS_LOG_ASC_CPU_LOG_H
#define ASCENDOPT_UTILS_LOG_ASC_CPU_LOG_H

#include "../../ascendopt/host/log.h"

#endif
