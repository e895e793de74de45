// ascendopt AscendC emulation, high-level API library: what every
// high-level API shares.
//
// On the chip the high-level APIs (guide 6.2.4) are sequences of basic
// vector instructions over temporary UB space; that is why they take a
// sharedTmpBuffer or, without one, use the UB that TPipe left free
// (PopStackBuffer; the guide has kernels "预留" that space). The emulation
// does the same: every API here is a sequence of the simulator's basic
// vector instructions (so the runtime checks each operand and the timing
// model charges each instruction), computing in float work arrays carved
// from the temporary space (ascendopt/lib/tmp_layout.h says how much, for
// the host-side GetXxxMaxMinTmpSize too). A temporary space smaller than
// one granule is an error, as on the device; a larger one lets the API
// process more elements per pass.
//
// The instructions are attributed to the API's call site in the kernel.
#ifndef ASCENDOPT_KERNEL_LIB_COMMON_H
#define ASCENDOPT_KERNEL_LIB_COMMON_H

#include <stdarg.h>
#include <stddef.h>

#include "../../lib/tmp_layout.h"
#include "../vec_arith.h"
#include "../vec_more.h"

// The empty trailing pack of an API's unlocated overload: taking the
// address of `Name<T, ...>` for the documented function type deduces it
// empty and picks that overload, while an ordinary call prefers the located
// one (a trailing parameter pack makes a template less specialised).
#define ASCENDOPT_LIB_UNLOCATED_PACK \
  class... ascendopt_unlocated_, typename ::std::enable_if<sizeof...(ascendopt_unlocated_) == 0, int>::type = 0

// Only vsnprintf of <stdio.h> (as misc.h): the header's printf would make a
// kernel's unqualified printf ambiguous with AscendC::printf.
extern "C" int vsnprintf(char* str, size_t size, const char* format, va_list ap) noexcept;

namespace ascendopt {
namespace lib {

using AscendC::LocalTensor;
using V = AscendC::LocalTensor<float>;
using Mask = AscendC::LocalTensor<uint8_t>;

// Stops the kernel with `fmt` (a fault of the API at `loc`).
inline void fail(const Loc& loc, const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  ASC_RT->trap(buf, loc.c());
}

template <class T>
constexpr bool is_float_type() {
  return std::is_same<T, float>::value || std::is_same<T, half>::value;
}

// A byte range of one on-chip memory.
struct Span {
  uint8_t mem;
  uint64_t begin;
  uint64_t end;
  const char* what;
};
template <class T>
inline Span span_of(const LocalTensor<T>& t, uint64_t elems, const char* what) {
  return Span{t.desc_.mem, t.desc_.addr, t.desc_.addr + elems * sizeof(T), what};
}
inline bool overlaps(const Span& a, const Span& b) {
  return a.mem == b.mem && a.begin < b.end && b.begin < a.end && a.begin < a.end && b.begin < b.end;
}

// The temporary space of one call: the kernel's sharedTmpBuffer, or (none
// given) the UB TPipe left free.
struct Tmp {
  AscLocal whole;
  bool framework;
  uint64_t bytes() const { return whole.elems; }
};

inline Tmp tmp_of(const LocalTensor<uint8_t>* shared, const Loc& loc) {
  if (shared != nullptr) return Tmp{shared->desc_, false};
  // PopStackBuffer<uint8_t, VECCALC>.
  return Tmp{ASC_RT->local_rest((uint32_t)AscendC::TPosition::VECCALC, ASC_DT_U8, loc.c()), true};
}

// The float work arrays and bit masks of one call, `chunk` elements each.
struct Work {
  uint64_t chunk = 0;
  V node[8];
  Mask mask[4];
};

// Carves `layout` for `count` elements of a type of `type_size` bytes out
// of `tmp`, checking that one granule fits and that the part used does not
// overlap any of `operands` (the guide forbids sharedTmpBuffer overlapping
// the source or destination).
inline Work carve(const char* api, const TmpLayout& layout, uint32_t type_size, const Tmp& tmp, uint64_t count,
                  const Span* operands, int n_operands, const Loc& loc) {
  Work w;
  if (layout.empty()) return w;
  const uint64_t chunk = chunk_for(layout, type_size, tmp.bytes(), count);
  if (chunk == 0) {
    if (tmp.framework) {
      fail(loc,
           "%s: no sharedTmpBuffer given and only %llu bytes of UB are left free after TPipe's buffers; "
           "it needs at least %u bytes of temporary space there (Get%sMaxMinTmpSize gives the range)",
           api, (unsigned long long)tmp.bytes(), min_tmp_bytes(layout, type_size), api);
    } else {
      fail(loc, "%s: sharedTmpBuffer holds %llu bytes, it needs at least %u (Get%sMaxMinTmpSize gives the range)",
           api, (unsigned long long)tmp.bytes(), min_tmp_bytes(layout, type_size), api);
    }
    return w;
  }
  if (tmp.whole.mem != ASC_MEM_UB) fail(loc, "%s: the temporary buffer is not in the unified buffer", api);
  if (tmp.whole.addr % kBlockBytes != 0) fail(loc, "%s: sharedTmpBuffer is not 32-byte aligned", api);
  const Span used{tmp.whole.mem, tmp.whole.addr, tmp.whole.addr + chunk_bytes(layout, chunk), "sharedTmpBuffer"};
  for (int i = 0; i < n_operands; ++i) {
    if (overlaps(used, operands[i]))
      fail(loc, "%s: the temporary buffer overlaps %s (the guide does not allow it)", api, operands[i].what);
  }
  w.chunk = chunk;
  uint32_t addr = tmp.whole.addr;
  for (uint32_t i = 0; i < layout.nodes && i < 8; ++i) {
    AscLocal d{ASC_MEM_UB, ASC_DT_F32, 0, addr, (uint32_t)chunk};
    w.node[i] = V::from_desc(d, AscendC::TPosition::VECCALC);
    addr += (uint32_t)(chunk * 4);
  }
  for (uint32_t i = 0; i < layout.masks && i < 4; ++i) {
    AscLocal d{ASC_MEM_UB, ASC_DT_U8, 0, addr, (uint32_t)mask_bytes(chunk)};
    w.mask[i] = Mask::from_desc(d, AscendC::TPosition::VECCALC);
    addr += (uint32_t)mask_bytes(chunk);
  }
  return w;
}

// The basic vector instructions the library is made of, all in the count
// form over `n` elements and attributed to the API's call site.
template <class F>
struct OpsT {
  using VT = LocalTensor<F>;
  int32_t n;
  Loc loc;
  // Compares needs a multiple of 256 bytes; the work arrays always have room.
  uint32_t n_cmp() const { return (uint32_t)round_up((uint64_t)n, 64); }

  void copy(const VT& d, const VT& s) const { AscendC::Muls(d, s, (F)1.0f, n, loc); }
  void dup(const VT& d, F v) const { AscendC::Duplicate(d, v, n, loc); }
  void adds(const VT& d, const VT& s, F k) const { AscendC::Adds(d, s, k, n, loc); }
  void muls(const VT& d, const VT& s, F k) const { AscendC::Muls(d, s, k, n, loc); }
  void mins(const VT& d, const VT& s, F k) const { AscendC::Mins(d, s, k, n, loc); }
  void maxs(const VT& d, const VT& s, F k) const { AscendC::Maxs(d, s, k, n, loc); }
  void add(const VT& d, const VT& a, const VT& b) const { AscendC::Add(d, a, b, n, loc); }
  void sub(const VT& d, const VT& a, const VT& b) const { AscendC::Sub(d, a, b, n, loc); }
  void mul(const VT& d, const VT& a, const VT& b) const { AscendC::Mul(d, a, b, n, loc); }
  void div(const VT& d, const VT& a, const VT& b) const { AscendC::Div(d, a, b, n, loc); }
  void exp(const VT& d, const VT& s) const { AscendC::Exp(d, s, n, loc); }
  void ln(const VT& d, const VT& s) const { AscendC::Ln(d, s, n, loc); }
  void abs(const VT& d, const VT& s) const { AscendC::Abs(d, s, n, loc); }
  void sqrt(const VT& d, const VT& s) const { AscendC::Sqrt(d, s, n, loc); }
  void recip(const VT& d, const VT& s) const { AscendC::Reciprocal(d, s, n, loc); }
  // float -> float rounding to an integral value.
  void round(const VT& d, const VT& s, AscendC::RoundMode m) const { AscendC::Cast(d, s, m, (uint32_t)n, loc); }
  void cmps(const Mask& m, const VT& s, F k, AscendC::CMPMODE mode) const {
    AscendC::Compares(m, s, k, mode, n_cmp(), loc);
  }
  // d = m ? a : b
  void sel(const VT& d, const Mask& m, const VT& a, const VT& b) const {
    AscendC::Select(d, m, a, b, AscendC::SELMODE::VSEL_TENSOR_TENSOR_MODE, (uint32_t)n, loc);
  }
  // d = m ? a : k
  void sels(const VT& d, const Mask& m, const VT& a, F k) const {
    AscendC::Select(d, m, a, k, AscendC::SELMODE::VSEL_TENSOR_SCALAR_MODE, (uint32_t)n, loc);
  }
  // d = c[0] z^(k-1) + ... + c[k-1] by Horner's rule (k >= 2); d != z.
  void horner(const VT& d, const VT& z, const F* c, int k) const {
    muls(d, z, c[0]);
    adds(d, d, c[1]);
    for (int i = 2; i < k; ++i) {
      mul(d, d, z);
      adds(d, d, c[i]);
    }
  }
  // d = sign(s) in {-1, 0, 1} (NaN stays NaN): s * 2^150 saturated to
  // [-1, 1]; every nonzero float, subnormals included, reaches +-1.
  void sign(const VT& d, const VT& s) const {
    muls(d, s, (F)1.2676506002282294e30f);  // 2^100
    muls(d, d, (F)1125899906842624.0f);     // 2^50
    mins(d, d, (F)1.0f);
    maxs(d, d, (F)-1.0f);
  }
};

// The float instruction set of the library (a class template, so that
// nothing is instantiated in a kernel that uses no high-level API).
using Ops = OpsT<float>;

// Runs `body(offset, n)` over `count` elements in chunks of `chunk`.
template <class F>
inline void for_chunks(uint64_t count, uint64_t chunk, F body) {
  if (chunk == 0) return;
  for (uint64_t off = 0; off < count; off += chunk) {
    const uint64_t n = count - off < chunk ? count - off : chunk;
    body((uint32_t)off, (int32_t)n);
  }
}

// A float view of elements [off, off+n) of a float tensor.
inline V at(const V& t, uint32_t off, int32_t n) {
  V v = t[off];
  v.desc_.elems = (uint32_t)n;
  return v;
}

// ---- element-wise driver ---------------------------------------------------------
// An element-wise API over `count` elements of T (half or float):
// `body(ops, out, x, work)` reads the source chunk x (float) and writes the
// result chunk out (float) with its last instructions only, after its last
// read of x, so that out may be x (dst may be src). For a float T, x and out
// are the tensors themselves; for half, both are node 0: the source cast to
// float, and the result cast back with rounding to nearest even (beyond
// 65504 it saturates, as Cast does: "溢出默认按照饱和处理"). The body's
// own arrays are work.node[0..] (after node 0 for half).
template <class T, class Body>
inline void unary(const char* api, const TmpLayout& layout, const LocalTensor<T>& dst, const LocalTensor<T>& src,
                  const LocalTensor<uint8_t>* shared, uint32_t count, const Loc& loc, Body body) {
  static_assert(is_float_type<T>(), "this high-level API takes half or float tensors (guide 6.2.4)");
  if (count == 0) return;
  const Span operands[2] = {span_of(src, count, "srcTensor"), span_of(dst, count, "dstTensor")};
  const Tmp tmp = tmp_of(shared, loc);
  Work w = carve(api, layout, sizeof(T), tmp, count, operands, 2, loc);
  if (w.chunk == 0) return;
  constexpr bool kHalf = sizeof(T) == 2;
  for_chunks(count, w.chunk, [&](uint32_t off, int32_t n) {
    Ops ops{n, loc};
    if constexpr (kHalf) {
      const V x = at(w.node[0], 0, n);
      AscendC::Cast(x, src[off], AscendC::RoundMode::CAST_NONE, (uint32_t)n, loc);
      Work rest = w;
      for (int i = 0; i < 7; ++i) rest.node[i] = w.node[i + 1];
      body(ops, x, x, rest);
      AscendC::Cast(dst[off], x, AscendC::RoundMode::CAST_RINT, (uint32_t)n, loc);
    } else {
      body(ops, at(dst, off, n), at(src, off, n), w);
    }
  });
}

}  // namespace lib
}  // namespace ascendopt

#endif
