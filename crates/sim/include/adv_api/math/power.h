// ascendopt AscendC emulation: the newer CANN path of the Power high-level
// API (adv_api/math/power.h); the library comes with kernel_operator.h.
#ifndef ASCENDOPT_ADV_API_MATH_POWER_H
#define ASCENDOPT_ADV_API_MATH_POWER_H
#include "../../kernel_operator.h"
#endif
