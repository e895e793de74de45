// ascendopt host (op_host) emulation of CANN's
// tiling/platform/platform_ascendc.h (platform_ascendc::PlatformAscendC).
#ifndef ASCENDOPT_TILING_PLATFORM_PLATFORM_ASCENDC_H
#define ASCENDOPT_TILING_PLATFORM_PLATFORM_ASCENDC_H

#ifndef ASCENDOPT_KERNEL_SIDE
#include "../../ascendopt/host/std_bundle.h"
#endif
#include "../../ascendopt/host/platform.h"

#endif
