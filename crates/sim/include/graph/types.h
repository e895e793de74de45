// ascendopt host (op_host) emulation of CANN's graph/types.h (ge::DataType,
// ge::Format, ge::graphStatus).
#ifndef ASCENDOPT_GRAPH_TYPES_H
#define ASCENDOPT_GRAPH_TYPES_H

#include "../ascendopt/host/core.h"

#endif
