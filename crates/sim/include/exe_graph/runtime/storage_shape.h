// ascendopt host (op_host) emulation of CANN's exe_graph/runtime/storage_shape.h
// (the gert runtime types live together in ascendopt/host/context.h).
#ifndef ASCENDOPT_EXE_GRAPH_RUNTIME_STORAGE_SHAPE_H
#define ASCENDOPT_EXE_GRAPH_RUNTIME_STORAGE_SHAPE_H

#include "../../ascendopt/host/std_bundle.h"
#include "../../ascendopt/host/context.h"

#endif
