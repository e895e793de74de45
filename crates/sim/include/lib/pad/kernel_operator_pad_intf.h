// ascendopt AscendC emulation: the path CANN kernels include for Pad/UnPad
// (lib/pad/kernel_operator_pad_intf.h). Pad and UnPad themselves are not
// emulated: a call fails with "not supported by the ascendopt simulator".
#ifndef ASCENDOPT_LIB_PAD_KERNEL_OPERATOR_PAD_INTF_H
#define ASCENDOPT_LIB_PAD_KERNEL_OPERATOR_PAD_INTF_H
#include "../../kernel_operator.h"
#endif
