// ascendopt emulation of CANN's kernel_operator_list_tensor_intf.h:
// ListTensorDesc and TensorDesc (guide 6.2.6.2, 6.2.6.3), how a kernel
// reads a tensor-list (dynamic) input. Clean-room.
//
// The list is a block of 64-bit words in GM:
//   word 0                 byte offset of the data-pointer table from the
//                          start (what public kernels read directly:
//                          `dataAddr + (*dataAddr >> 3)`)
//   then, per tensor       its shape record: one word with the dimension
//                          count d in its low 32 bits and the tensor's
//                          index in its high 32, then d extents
//   at the table           one data address per tensor
// so the record count before the table is the list's size. The
// simulator's launch writes tensor-list inputs in this layout. Reads go
// through the runtime (bounds-checked scalar GM reads).
#ifndef ASCENDOPT_KERNEL_OPERATOR_LIST_TENSOR_INTF_H
#define ASCENDOPT_KERNEL_OPERATOR_LIST_TENSOR_INTF_H

#include "kernel_operator.h"

namespace AscendC {

template <class T>
class TensorDesc {
 public:
  TensorDesc() {}
  ~TensorDesc() {}
  void SetShapeAddr(uint64_t* shapePtr) { shape_ = shapePtr; }
  uint64_t GetDim() { return dim_; }
  uint64_t GetIndex() { return index_; }
  uint64_t GetShape(uint32_t offset) { return (shape_ != nullptr && offset < dim_) ? shape_[offset] : 0; }
  T* GetDataPtr() { return data_; }
  GlobalTensor<T> GetDataObj() {
    GlobalTensor<T> t;
    t.SetGlobalBuffer((__gm__ T*)data_);
    return t;
  }

  // Filled by ListTensorDesc::GetDesc.
  uint64_t* shape_ = nullptr;
  uint64_t dim_ = 0;
  uint64_t index_ = 0;
  T* data_ = nullptr;
};

class ListTensorDesc {
 public:
  ListTensorDesc() {}
  ListTensorDesc(__gm__ void* data, uint32_t length = 0xffffffff, uint32_t shapeSize = 0xffffffff, ASC_LOC) {
    Init(data, length, shapeSize, loc_);
  }
  // length (bytes) and shapeSize (pointer count) are only checked when
  // given, as the guide says.
  void Init(__gm__ void* data, uint32_t length = 0xffffffff, uint32_t shapeSize = 0xffffffff, ASC_LOC) {
    base_ = (__gm__ uint64_t*)data;
    table_ = word(0, loc_) / 8;
    count_ = 0;
    for (uint64_t at = 1; at < table_; at += 1 + dims(at, loc_)) ++count_;
    if (length != 0xffffffff && (table_ + count_) * 8 > length)
      ASC_RT->trap("ListTensorDesc: the list is longer than `length`", loc_.c());
    if (shapeSize != 0xffffffff && shapeSize != count_)
      ASC_RT->trap("ListTensorDesc: the list's pointer count differs from `shapeSize`", loc_.c());
  }
  template <class T>
  void GetDesc(TensorDesc<T>& desc, uint32_t index, ASC_LOC) {
    uint64_t at = 1;
    for (uint32_t i = 0; i < index && at < table_; ++i) at += 1 + dims(at, loc_);
    check(index, loc_);
    desc.index_ = index;
    desc.dim_ = dims(at, loc_);
    for (uint64_t d = 0; d < desc.dim_ && desc.shape_ != nullptr; ++d) desc.shape_[d] = word(at + 1 + d, loc_);
    desc.data_ = GetDataPtr<T>(index, loc_);
  }
  template <class T>
  T* GetDataPtr(uint32_t index, ASC_LOC) {
    check(index, loc_);
    return (T*)(uintptr_t)word(table_ + index, loc_);
  }
  uint32_t GetSize() { return (uint32_t)count_; }

 private:
  // A description's first word: the dimension count in its low 32 bits,
  // the tensor's index in its high 32 (the guide's `uint32_t dim; uint32_t
  // index;`).
  uint64_t dims(uint64_t i, const ::ascendopt::Loc& loc) { return word(i, loc) & 0xffffffffull; }
  uint64_t word(uint64_t i, const ::ascendopt::Loc& loc) {
    return ASC_RT->gm_get((const void*)(base_ + i), ASC_DT_U64, loc.c());
  }
  void check(uint32_t index, const ::ascendopt::Loc& loc) {
    if (index >= count_) ASC_RT->trap("ListTensorDesc: index past the end of the list", loc.c());
  }
  __gm__ uint64_t* base_ = nullptr;
  uint64_t table_ = 0;
  uint64_t count_ = 0;
};

}  // namespace AscendC

#endif
