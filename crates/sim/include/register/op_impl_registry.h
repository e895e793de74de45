// ascendopt host (op_host) emulation of CANN's register/op_impl_registry.h:
// registration of an operator's tiling, tiling-parse (compile info) and
// shape-inference functions by op type (IMPL_OP_OPTILING, IMPL_OP, ...).
#ifndef ASCENDOPT_REGISTER_OP_IMPL_REGISTRY_H
#define ASCENDOPT_REGISTER_OP_IMPL_REGISTRY_H

#include "../ascendopt/host/std_bundle.h"
#include "../ascendopt/host/context.h"
#include "../ascendopt/host/impl_registry.h"
#include "../ascendopt/host/platform.h"
#include "../graph/types.h"

#endif
