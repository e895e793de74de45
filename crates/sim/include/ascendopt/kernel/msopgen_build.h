// ascendopt AscendC emulation: what the msopgen build's per-variant kernel
// macros expand to. The build compiles a kernel once per dtype combination
// of the OpDef and defines, per parameter <ARG> (its name in upper case),
// DTYPE_<ARG> (the device type, e.g. half), ORIG_DTYPE_<ARG> (the OpDef's
// dtype without its namespace, e.g. DT_FLOAT16) and FORMAT_<ARG> (e.g.
// FORMAT_ND); guide 2.10.2.4 (Kernel侧算子实现). A kernel compares them with
// the unqualified names (`if (ORIG_DTYPE_Y == DT_FLOAT)`), so those names are
// declared here, for the kernel unit only (force-included before the tiling
// header; see crates/sim/src/build/variants.rs).
//
// The codes are GE's own, the same as ge::DataType / ge::Format of the host
// headers (ascendopt/host/core.h).
#ifndef ASCENDOPT_KERNEL_MSOPGEN_BUILD_H
#define ASCENDOPT_KERNEL_MSOPGEN_BUILD_H

enum AscendoptOrigDataType {
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
  DT_INT4 = 29
};

enum AscendoptOrigFormat {
  FORMAT_NCHW = 0,
  FORMAT_NHWC = 1,
  FORMAT_ND = 2,
  FORMAT_NC1HWC0 = 3,
  FORMAT_FRACTAL_Z = 4,
  FORMAT_HWCN = 16,
  FORMAT_NDHWC = 27,
  FORMAT_FRACTAL_NZ = 29,
  FORMAT_NCDHW = 30,
  FORMAT_DHWCN = 31,
  FORMAT_NDC1HWC0 = 32,
  FORMAT_CN = 34,
  FORMAT_NC = 35,
  FORMAT_NCL = 47
};

// What a host-side `<<<...>>>` launch in a kernel file becomes: the build
// replaces `kernel<<<blocks, l2ctrl, stream>>>` by this function object
// (crates/sim/src/build/launch.rs), which takes the launch's arguments and
// does nothing. Such launches sit in helpers that CANN's CPU-debug build
// leaves out and that nothing here calls.
namespace ascendopt {
struct IgnoredLaunch {
  template <class... Args>
  void operator()(Args&&...) const {}
};
constexpr IgnoredLaunch ignored_launch{};
}  // namespace ascendopt

// The AscendCL stream type and the wait such a helper does after its
// launch (`aclrtSynchronizeStream(stream)`), declared so the helper
// compiles; the simulator never calls the helper.
typedef void* aclrtStream;
inline int aclrtSynchronizeStream(aclrtStream) { return 0; }

#endif
