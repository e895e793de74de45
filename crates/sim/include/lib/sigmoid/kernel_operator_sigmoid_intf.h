// ascendopt AscendC emulation: the path CANN kernels include for Sigmoid
// (lib/sigmoid/kernel_operator_sigmoid_intf.h); the library itself comes
// with kernel_operator.h (ascendopt/kernel/lib/lib.h).
#ifndef ASCENDOPT_LIB_SIGMOID_KERNEL_OPERATOR_SIGMOID_INTF_H
#define ASCENDOPT_LIB_SIGMOID_KERNEL_OPERATOR_SIGMOID_INTF_H
#include "../../kernel_operator.h"
#endif
