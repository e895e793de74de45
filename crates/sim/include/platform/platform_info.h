// ascendopt host (op_host) emulation of CANN's platform/platform_info.h:
// fe::PlatFormInfos, the platform a tiling function hands to
// platform_ascendc::PlatformAscendC.
#ifndef ASCENDOPT_PLATFORM_PLATFORM_INFO_H
#define ASCENDOPT_PLATFORM_PLATFORM_INFO_H

#include "../ascendopt/host/std_bundle.h"
#include "../ascendopt/host/platform.h"

#endif
