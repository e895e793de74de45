// ascendopt emulation of CANN's tiling/tiling_api.h, the header op_host
// code includes for the tiling side of the high-level APIs: the
// tiling-data macros, the platform, the op registration, the C++ standard
// library, and the host helpers of the high-level APIs (their temporary
// buffer sizes, GetXxxMaxMinTmpSize, and tiling functions such as
// SoftMaxTilingFunc with their tiling structs).
//
// An op's tiling header often includes this header, and the tiling header
// is force-included into the kernel unit too (crates/sim/src/build): there
// it gives only the tiling-data macros and the kernel-side tiling structs.
#ifndef ASCENDOPT_TILING_TILING_API_H
#define ASCENDOPT_TILING_TILING_API_H

#ifdef ASCENDOPT_KERNEL_SIDE
#include "../register/tilingdata_base.h"
#if __has_include("../kernel_tiling/kernel_tiling.h")
#include "../kernel_tiling/kernel_tiling.h"
#endif
// SoftMaxTiling, the one struct both units share (from kernel_tiling.h when
// that header is there).
#include "../ascendopt/lib/softmax_tiling.h"
#else
#include "../ascendopt/host/std_bundle.h"
#include "../register/tilingdata_base.h"
#include "../register/op_def_registry.h"
#include "../graph/types.h"
#include "../tiling/platform/platform_ascendc.h"
// The high-level APIs' host helpers live with the high-level APIs.
#if __has_include("../ascendopt/lib/host_tiling.h")
#include "../ascendopt/lib/host_tiling.h"
#endif
// The Matmul API's tiling (MultiCoreMatmulTiling, TCubeTiling).
#include "../ascendopt/lib/matmul_tiling.h"
#endif

#endif
