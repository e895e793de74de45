// ascendopt host (op_host) emulation: the standard library that CANN's
// host headers bring into an op_host file. CANN's register and tiling
// headers are built on the C++ standard library (strings, vectors, maps,
// streams, printf), so host code written for CANN uses std::cout,
// std::printf, std::vector, memcpy, std::min ... without including them;
// every CANN-named host header of the simulator includes this one.
//
// The build precompiles this header once per compiler and flag set
// (crates/sim/src/build/pch.rs), so including it costs a host compile
// almost nothing.
#ifndef ASCENDOPT_HOST_STD_BUNDLE_H
#define ASCENDOPT_HOST_STD_BUNDLE_H

#include <cassert>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <algorithm>
#include <array>
#include <functional>
#include <initializer_list>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#endif
