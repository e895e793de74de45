// ascendopt host (op_host) emulation of CANN's opdev/op_log.h: the OP_LOG* macros
// (see ascendopt/host/log.h).
#ifndef ASCENDOPT_OPDEV_OP_LOG_H
#define ASCENDOPT_OPDEV_OP_LOG_H

#include "../ascendopt/host/log.h"

#endif
