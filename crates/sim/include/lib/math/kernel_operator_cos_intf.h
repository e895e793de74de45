// ascendopt AscendC emulation: the path CANN kernels include for the
// high-level math API (lib/math/kernel_operator_cos_intf.h); the library
// itself comes with kernel_operator.h (ascendopt/kernel/lib/lib.h).
#ifndef ASCENDOPT_LIB_MATH_KERNEL_OPERATOR_COS_INTF_H
#define ASCENDOPT_LIB_MATH_KERNEL_OPERATOR_COS_INTF_H
#include "../../kernel_operator.h"
#endif
