// ascendopt AscendC emulation: the path some CANN kernels include the
// Matmul tiling structures by (lib/matrix/matmul/tiling.h): TCubeTiling and
// the kernel-side tiling types come with kernel_tiling/kernel_tiling.h.
#ifndef ASCENDOPT_LIB_MATRIX_MATMUL_TILING_H
#define ASCENDOPT_LIB_MATRIX_MATMUL_TILING_H
#include "../../../kernel_tiling/kernel_tiling.h"
#endif
