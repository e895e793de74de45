// ascendopt: AscendC kernel API for the CPU simulator (clean-room emulation).
// Kernels include this exactly as they do with CANN.
#ifndef ASCENDOPT_KERNEL_OPERATOR_H
#define ASCENDOPT_KERNEL_OPERATOR_H

#include "ascendopt/kernel/types.h"
#include "ascendopt/kernel/tensor.h"
#include "ascendopt/kernel/pipe.h"
#include "ascendopt/kernel/copy.h"
#include "ascendopt/kernel/cube.h"
#include "ascendopt/kernel/sync.h"
#include "ascendopt/kernel/vec_arith.h"
#include "ascendopt/kernel/vec_more.h"
#include "ascendopt/kernel/vec_move.h"
#include "ascendopt/kernel/sort.h"
#include "ascendopt/kernel/scalar.h"
#include "ascendopt/kernel/workspace.h"
#include "ascendopt/kernel/api_params.h"
#include "ascendopt/kernel/misc.h"
#include "ascendopt/kernel/lib/lib.h"
#include "ascendopt/kernel/std.h"
#include "ascendopt/kernel/unsupported.h"

#endif
