// ascendopt emulation of CANN's lib/matmul_intf.h: the high-level Matmul
// API for kernels (guide 6.2.4.2.1). The implementation and its rules:
// ascendopt/kernel/lib/matmul.h.
#ifndef ASCENDOPT_LIB_MATMUL_INTF_H
#define ASCENDOPT_LIB_MATMUL_INTF_H

#include "../kernel_operator.h"
#include "../ascendopt/kernel/lib/matmul.h"

// Kernels name these through namespace matmul (`using namespace matmul;`)
// or AscendC.
namespace AscendC {
using matmul::CubeFormat;
using matmul::GetBasicConfig;
using matmul::GetIBShareNormConfig;
using matmul::GetMatmulApiTiling;
using matmul::GetMDLConfig;
using matmul::GetMMConfig;
using matmul::GetNormalConfig;
using matmul::GetSpecialMDLConfig;
using matmul::Matmul;
using matmul::MatmulApiStaticTiling;
using matmul::MatmulConfig;
using matmul::MatmulConfigMode;
using matmul::MatmulShapeParams;
using matmul::MatmulType;
}  // namespace AscendC

#endif
