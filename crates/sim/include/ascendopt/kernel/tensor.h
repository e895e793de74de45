// ascendopt AscendC emulation: LocalTensor and GlobalTensor.
// A LocalTensor is a view (memory kind, byte address, element count) of a
// core's on-chip memory owned by the Rust runtime; element access goes
// through the runtime (PIPE_S). A GlobalTensor is a real pointer into GM
// buffers allocated by the runtime, which bounds-checks every access.
#ifndef ASCENDOPT_KERNEL_TENSOR_H
#define ASCENDOPT_KERNEL_TENSOR_H

#include "types.h"

namespace AscendC {

template <class T>
class LocalTensor {
 public:
  using PrimType = T;
  AscLocal desc_{};
  TPosition pos_ = TPosition::VECCALC;
  // The user's tag (guide 6.2.2.1.9 SetUserTag / 6.2.2.1.10 GetUserTag: set
  // on a tensor, read back on the tensor a later DeQue hands out; the
  // queues carry it, pipe.h). 0 until set.
  int32_t tag_ = 0;

  LocalTensor() {
    desc_.mem = ASC_MEM_UB;
    desc_.dtype = ::ascendopt::dtype_of<T>();
  }
  static LocalTensor from_desc(AscLocal d, TPosition pos) {
    LocalTensor t;
    t.desc_ = d;
    t.desc_.dtype = ::ascendopt::dtype_of<T>();
    t.pos_ = pos;
    return t;
  }

  // Sub-view starting `offset` elements in.
  LocalTensor operator[](uint32_t offset) const {
    LocalTensor t = *this;
    t.desc_.addr = desc_.addr + offset * (uint32_t)sizeof(T);
    t.desc_.elems = offset <= desc_.elems ? desc_.elems - offset : 0;
    return t;
  }

  T GetValue(uint32_t index, ASC_LOC) const {
    return ::ascendopt::from_bits<T>(ASC_RT->local_get(desc_, index, loc_.c()));
  }
  void SetValue(uint32_t index, T value, ASC_LOC) const {
    ASC_RT->local_set(desc_, index, ::ascendopt::to_bits<T>(value), loc_.c());
  }
  // The element itself, as an lvalue (guide 6.2.2.1.6 operator(): a write
  // through it is a SetValue, a read a GetValue). The runtime checks the
  // index and records one scalar access that both reads and writes the
  // element, since which one the kernel does is not known here.
  T& operator()(uint32_t index, ASC_LOC) const {
    return *static_cast<T*>(ASC_RT->local_ref(desc_, index, loc_.c()));
  }

  // `dst = src0 + src1` and the other whole-tensor operators (guide
  // 6.2.3.3.1 Add/Sub/Mul/Div, 6.2.3.3.2 And/Or: "运算量为目的LocalTensor的长度",
  // the count is dst's size; 6.2.3.3.4.1 Compare: dst is the bit mask, the
  // count src0's size). Defined in vec_arith.h / vec_more.h.
  template <class Expr, class = typename Expr::ascendopt_tensor_expr>
  LocalTensor& operator=(const Expr& e);
  LocalTensor(const LocalTensor&) = default;
  LocalTensor& operator=(const LocalTensor&) = default;

  template <class U>
  LocalTensor<U> ReinterpretCast() const {
    LocalTensor<U> t;
    t.desc_ = desc_;
    t.desc_.dtype = ::ascendopt::dtype_of<U>();
    t.desc_.elems = (uint32_t)((uint64_t)desc_.elems * sizeof(T) / sizeof(U));
    t.pos_ = pos_;
    t.tag_ = tag_;
    return t;
  }

  uint32_t GetSize() const { return desc_.elems; }
  uint32_t GetLength() const { return desc_.elems * (uint32_t)sizeof(T); }
  void SetSize(uint32_t size) { desc_.elems = size; }
  uint64_t GetPhyAddr() const { return desc_.addr; }
  uint64_t GetPhyAddr(uint32_t offset) const { return desc_.addr + offset * sizeof(T); }
  TPosition GetPosition() const { return pos_; }
  TTagType GetUserTag() const { return tag_; }
  void SetUserTag(const TTagType tag) { tag_ = tag; }
  uint8_t mem() const { return desc_.mem; }
  uint32_t addr() const { return desc_.addr; }
};

template <class T>
class GlobalTensor {
 public:
  using PrimType = T;
  // The data pointer, a public member named as CANN's GlobalTensor names it:
  // real kernels read `gm.address_` directly (not in the guide; the device
  // compiler accepts it).
  __gm__ T* address_ = nullptr;
  uint64_t size_ = 0;

  void SetGlobalBuffer(__gm__ T* buffer, uint64_t bufferSize) {
    address_ = buffer;
    size_ = bufferSize;
  }
  void SetGlobalBuffer(__gm__ T* buffer) {
    address_ = buffer;
    size_ = 0;
  }
  GlobalTensor operator[](uint64_t offset) const {
    GlobalTensor t;
    t.address_ = address_ + offset;
    t.size_ = offset <= size_ ? size_ - offset : 0;
    return t;
  }
  T GetValue(uint64_t index, ASC_LOC) const {
    return ::ascendopt::from_bits<T>(
        ASC_RT->gm_get((const void*)(address_ + index), ::ascendopt::dtype_of<T>(), loc_.c()));
  }
  void SetValue(uint64_t index, T value, ASC_LOC) const {
    ASC_RT->gm_set((void*)(address_ + index), ::ascendopt::dtype_of<T>(), ::ascendopt::to_bits<T>(value),
                   loc_.c());
  }
  // The element itself (guide 6.2.2.2.6 operator(), like LocalTensor's): a
  // read or write through it is the kernel's own scalar GM access, counted
  // where it happens, as a dereference of GetPhyAddr() is; like that
  // dereference it is not bounds-checked (docs/threat-model.md, "What is
  // not defended"), unlike GetValue/SetValue.
  __gm__ T& operator()(uint64_t index) const { return address_[index]; }
  uint64_t GetSize() const { return size_; }
  __gm__ T* GetPhyAddr() const { return address_; }
  __gm__ T* GetPhyAddr(uint64_t offset) const { return address_ + offset; }
  template <class Mode>
  void SetL2CacheHint(Mode) {}
};

enum class CacheMode : uint8_t { CACHE_MODE_NORMAL = 0, CACHE_MODE_DISABLE = 1, CACHE_MODE_LAST = 2 };

}  // namespace AscendC

#endif
