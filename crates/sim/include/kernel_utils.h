// ascendopt emulation of CANN's kernel_utils.h, an internal header of the
// kernel library (utilities its own implementation shares) that public
// operators include through their op_kernel/platform.h adaptor. The public
// operators surveyed (cann-ops math/diag_v2, conversion/diag_flat,
// conversion/reverse_sequence, norm/add_layer_norm_grad, objdetect/roi_align_rotated)
// use only what kernel_operator.h declares after including it, so the
// header brings exactly that.
#ifndef ASCENDOPT_KERNEL_UTILS_H
#define ASCENDOPT_KERNEL_UTILS_H

#include "kernel_operator.h"

#endif
