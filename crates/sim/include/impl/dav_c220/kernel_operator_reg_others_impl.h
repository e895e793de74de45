// ascendopt emulation of CANN's impl/dav_c220/kernel_operator_reg_others_impl.h,
// an internal header of CANN's kernel library for the dav-c220 cores (the
// 910B's) that public operators include directly. Of it they use, in the
// public operators surveyed (cann-ops norm/, loss/ and pooling/ kernels),
// only what kernel_operator.h already declares: the mask and counter-mode
// settings (SetVectorMask, SetMaskCount, SetMaskNorm) and the sync and
// vector APIs, called after this include. Their dav-c220-only branches
// (`#if __CCE_AICORE__ == 220`) that drive raw device intrinsics (vector
// address registers, vtranspose, vor, reading the reduce-result register)
// are the parts the simulator does not emulate: such a call fails to
// compile and names the intrinsic.
#ifndef ASCENDOPT_IMPL_DAV_C220_KERNEL_OPERATOR_REG_OTHERS_IMPL_H
#define ASCENDOPT_IMPL_DAV_C220_KERNEL_OPERATOR_REG_OTHERS_IMPL_H

#include "../../kernel_operator.h"

#endif
