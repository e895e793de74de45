// ascendopt host (op_host) emulation of CANN's exe_graph/runtime/infer_datatype_context.h
// (the gert runtime types live together in ascendopt/host/context.h).
#ifndef ASCENDOPT_EXE_GRAPH_RUNTIME_INFER_DATATYPE_CONTEXT_H
#define ASCENDOPT_EXE_GRAPH_RUNTIME_INFER_DATATYPE_CONTEXT_H

#include "../../ascendopt/host/std_bundle.h"
#include "../../ascendopt/host/context.h"

#endif
