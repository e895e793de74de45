// ascendopt host (op_host) emulation of CANN's register/op_def_registry.h:
// the operator prototype builder (OpDef, OP_ADD) and, as with CANN, the
// tiling context and platform types a tiling function needs, the graph
// types and the standard library CANN's register headers bring with them.
#ifndef ASCENDOPT_REGISTER_OP_DEF_REGISTRY_H
#define ASCENDOPT_REGISTER_OP_DEF_REGISTRY_H

#include "../ascendopt/host/std_bundle.h"
#include "../ascendopt/host/core.h"
#include "../ascendopt/host/context.h"
#include "../ascendopt/host/platform.h"
#include "../ascendopt/host/opdef.h"
#include "../graph/types.h"
#include "op_impl_registry.h"

#endif
