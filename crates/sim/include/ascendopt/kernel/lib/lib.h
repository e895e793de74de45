// ascendopt AscendC emulation: the high-level API library (guide 6.2.4),
// included by kernel_operator.h as CANN's is, and by the lib/...intf.h
// headers real kernels include by name.
#ifndef ASCENDOPT_KERNEL_LIB_LIB_H
#define ASCENDOPT_KERNEL_LIB_LIB_H

#include "common.h"
#include "math.h"
#include "power.h"
#include "reduce.h"
#include "cumsum.h"
#include "softmax.h"
#include "select.h"
#include "broadcast.h"
#include "arange.h"

#endif
