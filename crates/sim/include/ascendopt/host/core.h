// ascendopt host (op_host) emulation: the base every host header shares.
// ge::graphStatus, ge::DataType, ge::Format, and the error hook that turns a
// misuse found inside an API call into a failed tiling with a clear message.
//
// Clean-room, written from the AscendC guide chapter 6.4 (Utils API) and
// ref/hardware-facts.md section E. Kept lean on purpose: no <string>,
// <vector>, <map>, <functional> or <iostream>, so that a typical op_host
// file compiles in a fraction of a second.
#ifndef ASCENDOPT_HOST_CORE_H
#define ASCENDOPT_HOST_CORE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <initializer_list>

namespace ascendopt {
namespace host {
template <class... T>
constexpr bool always_false = false;

// Throws the simulator's host error; ascendopt_host_tiling catches it and
// reports the message as the failed tiling's reason. Defined in
// runtime_src/host_entry.cpp.
[[noreturn]] void fail(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
}  // namespace host
}  // namespace ascendopt

// A member that exists in CANN but not in the simulator: calling it is a
// compile error naming the API (an `auto` return makes g++ instantiate the
// body, and so report the assertion, right at the call).
// A leading defaulted parameter lets calls like `GetData<int64_t>()` reach the
// assertion too.
#define ASCENDOPT_HOST_UNSUPPORTED(Name, Label)                                      \
  template <class T0 = void, class... As>                                          \
  auto Name(As&&...) const {                                                       \
    static_assert(::ascendopt::host::always_false<T0, As...>,                      \
                  "not supported by the ascendopt simulator: " Label);             \
  }

namespace ge {
using graphStatus = uint32_t;
constexpr graphStatus GRAPH_SUCCESS = 0;
constexpr graphStatus GRAPH_FAILED = 0xFFFFFFFFu;
constexpr graphStatus GRAPH_PARAM_INVALID = 50331649u;
// GE's "nothing to change" status, which some tiling helpers return; as a
// tiling function's result it is not GRAPH_SUCCESS, so the tiling fails.
constexpr graphStatus GRAPH_NOT_CHANGED = 1343242304u;

// GE's general status, which host code returns and compares unqualified
// after `using namespace ge` (the guide's adapter examples, 2.10.4.4 and
// 2.10.5, return SUCCESS / FAILED from a `Status` function). SUCCESS is 0
// like GRAPH_SUCCESS; the guide gives no value for FAILED, so it is the
// same non-zero code as GRAPH_FAILED (an assumption: only "not SUCCESS"
// matters to the simulator). A project macro of the same name (some
// samples `#define SUCCESS 0`) is set aside here and restored after.
#pragma push_macro("SUCCESS")
#pragma push_macro("FAILED")
#undef SUCCESS
#undef FAILED
using Status = uint32_t;
constexpr Status SUCCESS = 0;
constexpr Status FAILED = 0xFFFFFFFFu;
#pragma pop_macro("FAILED")
#pragma pop_macro("SUCCESS")

// GE's element type codes. The values are GE's own (operators pass them as
// attributes, e.g. Cast's dst_type).
enum DataType {
  DT_FLOAT = 0,
  DT_FLOAT16 = 1,
  DT_INT8 = 2,
  DT_INT32 = 3,
  DT_UINT8 = 4,
  DT_INT16 = 6,
  DT_UINT16 = 7,
  DT_UINT32 = 8,
  DT_INT64 = 9,
  DT_UINT64 = 10,
  DT_DOUBLE = 11,
  DT_BOOL = 12,
  DT_STRING = 13,
  DT_COMPLEX64 = 16,
  DT_COMPLEX128 = 17,
  DT_BF16 = 27,
  DT_UNDEFINED = 28,
  DT_INT4 = 29,
  DT_MAX = 40
};

// Tensor formats. The simulator passes every tensor as FORMAT_ND; the
// numeric values are never interpreted.
enum Format {
  FORMAT_NCHW = 0,
  FORMAT_NHWC = 1,
  FORMAT_ND = 2,
  FORMAT_NC1HWC0 = 3,
  FORMAT_FRACTAL_Z = 4,
  FORMAT_NC1HWC0_C04 = 12,
  FORMAT_FRACTAL_Z_C04 = 13,
  FORMAT_CHWN = 14,
  FORMAT_HWCN = 16,
  FORMAT_C1HWNCoC0 = 25,
  FORMAT_MD = 26,
  FORMAT_NDHWC = 27,
  FORMAT_FRACTAL_ZZ = 28,
  FORMAT_FRACTAL_NZ = 29,
  FORMAT_NCDHW = 30,
  FORMAT_DHWCN = 31,
  FORMAT_NDC1HWC0 = 32,
  FORMAT_FRACTAL_Z_3D = 33,
  FORMAT_CN = 34,
  FORMAT_NC = 35,
  FORMAT_DHWNC = 36,
  FORMAT_FRACTAL_Z_3D_TRANSPOSE = 37,
  FORMAT_FRACTAL_ZN_LSTM = 38,
  FORMAT_FRACTAL_Z_G = 39,
  FORMAT_ND_RNN_BIAS = 43,
  FORMAT_FRACTAL_ZN_RNN = 44,
  FORMAT_NCL = 47,
  FORMAT_RESERVED = 53,
  FORMAT_ALL = 54,
  FORMAT_NULL = 55,
  FORMAT_MAX = 0xff
};

// A format value as GE stores it on a tensor packs more than the layout:
// the low 8 bits are the primary format (the enum above), bits 8..23 a
// sub-format (e.g. the group count of FRACTAL_Z_G), bits 24..27 the C0 size
// code. The simulator's tensors are plain FORMAT_ND, so these only unpack
// what the operator's own code packed.
inline int32_t GetPrimaryFormat(int32_t format) { return format & 0xff; }
inline int32_t GetSubFormat(int32_t format) { return (format >> 8) & 0xffff; }
inline int32_t GetC0Format(int32_t format) { return (format >> 24) & 0xf; }
inline bool HasSubFormat(int32_t format) { return GetSubFormat(format) > 0; }
inline bool HasC0Format(int32_t format) { return GetC0Format(format) > 0; }
inline int32_t GetFormatFromSub(int32_t primary_format, int32_t sub_format) {
  return (primary_format & 0xff) | ((sub_format & 0xffff) << 8);
}

// GE's plain character type (node names, messages).
using char_t = char;
}  // namespace ge

#endif
