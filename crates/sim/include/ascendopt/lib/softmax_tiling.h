// ascendopt AscendC emulation: the SoftMax tiling struct (guide 6.2.4.3.1.9),
// one definition for both units.
//
// Host unit: optiling::SoftMaxTiling is a TilingData class (set_/get_
// accessors, SaveToBuffer, GetDataSize), so an op nests it with
// TILING_DATA_FIELD_DEF_STRUCT(SoftMaxTiling, field); AscendC::tiling::
// SoftMaxTiling is the plain struct of the standard-C++ tiling style.
// Kernel unit: one plain struct, AscendC::tiling::SoftMaxTiling, also named
// SoftMaxTiling at global scope (as CANN's kernel_tiling/kernel_tiling.h
// has it; an op's tiling header compiled into the kernel names it so).
// Both units lay out the same sixteen
// uint32 fields in the documented order, so the bytes the host writes are
// the struct the kernel reads.
#ifndef ASCENDOPT_LIB_SOFTMAX_TILING_H
#define ASCENDOPT_LIB_SOFTMAX_TILING_H

#include <stdint.h>

#define ASCENDOPT_SOFTMAX_TILING_FIELDS(F) \
  F(srcM) F(srcK) F(srcSize) F(outMaxM) F(outMaxK) F(outMaxSize) F(splitM) F(splitK) F(splitSize) F(reduceM) \
  F(reduceK) F(reduceSize) F(rangeM) F(tailM) F(tailSplitSize) F(tailReduceSize)

#define ASCENDOPT_SOFTMAX_PLAIN_FIELD(name) uint32_t name = 0;

// A kernel unit: compiled with ASCENDOPT_KERNEL_SIDE (the msopgen build) or
// including kernel_operator.h.
#if defined(ASCENDOPT_KERNEL_SIDE) || defined(ASCENDOPT_KERNEL_OPERATOR_H)
// Kernel side: the plain struct of kernel_tiling/kernel_tiling.h (which
// declares every high-level API's tiling struct), or the same struct here
// when that header is absent.
#if __has_include("../../kernel_tiling/kernel_tiling.h")
#include "../../kernel_tiling/kernel_tiling.h"
#else
namespace AscendC {
namespace tiling {
struct SoftMaxTiling {
  ASCENDOPT_SOFTMAX_TILING_FIELDS(ASCENDOPT_SOFTMAX_PLAIN_FIELD)
};
}  // namespace tiling
}  // namespace AscendC
using AscendC::tiling::SoftMaxTiling;
#endif
#else
// Host side: a TilingData class, and the plain struct of the C++ style.
#include "../../register/tilingdata_base.h"
#define ASCENDOPT_SOFTMAX_TILING_FIELD(name) TILING_DATA_FIELD_DEF(uint32_t, name)
namespace optiling {
BEGIN_TILING_DATA_DEF(SoftMaxTiling)
ASCENDOPT_SOFTMAX_TILING_FIELDS(ASCENDOPT_SOFTMAX_TILING_FIELD)
END_TILING_DATA_DEF;
}  // namespace optiling
namespace AscendC {
namespace tiling {
struct SoftMaxTiling {
  ASCENDOPT_SOFTMAX_TILING_FIELDS(ASCENDOPT_SOFTMAX_PLAIN_FIELD)
};
}  // namespace tiling
}  // namespace AscendC
#undef ASCENDOPT_SOFTMAX_TILING_FIELD
#endif

#undef ASCENDOPT_SOFTMAX_PLAIN_FIELD

#endif
