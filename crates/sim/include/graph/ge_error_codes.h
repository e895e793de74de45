// ascendopt host (op_host) emulation of CANN's graph/ge_error_codes.h.
#ifndef ASCENDOPT_GRAPH_GE_ERROR_CODES_H
#define ASCENDOPT_GRAPH_GE_ERROR_CODES_H

#include "../ascendopt/host/core.h"

#endif
