// ascendopt host (op_host) emulation of CANN's platform/platform_info.h:
// fe::PlatFormInfos, the platform a tiling function hands to
// platform_ascendc::PlatformAscendC.
#ifndef ASCENDOPT_PLATFORM_PLATFORM_INFO_H
#define ASCENDOPT_PLATFORM_PLATFORM_INFO_H

#include "../ascendopt/host/std_bundle.h"
#include "../ascendopt/host/platform.h"

#include <map>
#include <string>
#include <vector>

// CANN's platform/platform_info.h of the releases public operator projects
// were written against declares std's map, string and vector in the
// global namespace (`using` declarations beside fe::PlatformInfoManager;
// later releases dropped them), so host code that includes it may name
// them unqualified (`static const map<ge::DataType, int32_t> ...`). Only
// these three names, as that header brings them.
using std::map;
using std::string;
using std::vector;

#endif
