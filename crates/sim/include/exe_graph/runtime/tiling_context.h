// ascendopt host (op_host) emulation of CANN's exe_graph/runtime/tiling_context.h.
#ifndef ASCENDOPT_EXE_GRAPH_RUNTIME_TILING_CONTEXT_H
#define ASCENDOPT_EXE_GRAPH_RUNTIME_TILING_CONTEXT_H

#include "../../ascendopt/host/std_bundle.h"
#include "../../ascendopt/host/context.h"

#endif
