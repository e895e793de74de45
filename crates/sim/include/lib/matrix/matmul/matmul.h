// ascendopt AscendC emulation: the path some CANN kernels include the
// Matmul API by (lib/matrix/matmul/matmul.h); the API itself is
// lib/matmul_intf.h (guide 6.2.4.2.1).
#ifndef ASCENDOPT_LIB_MATRIX_MATMUL_MATMUL_H
#define ASCENDOPT_LIB_MATRIX_MATMUL_MATMUL_H
#include "../../matmul_intf.h"
#endif
