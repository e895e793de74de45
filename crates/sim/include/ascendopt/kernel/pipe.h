// ascendopt AscendC emulation: TPipe, TQue, TQueBind, TBuf.
// Buffer memory and queue state live in the Rust runtime (per block); these
// classes hold only a handle. Queue calls become flag instructions in the
// trace (EnQue/DeQue forward, FreeTensor/AllocTensor backward), as on the
// hardware (hardware-facts.md section A, "Queue calls = hardware events").
#ifndef ASCENDOPT_KERNEL_PIPE_H
#define ASCENDOPT_KERNEL_PIPE_H

#include "tensor.h"

namespace AscendC {

// A queue's compile-time configuration (guide 6.2.3.6.1, TQue / GetCurBufSize:
// the third template argument of TQue may point to one). The simulator
// allocates at InitBuffer whatever it says; the fields are kept as documented.
struct TQueConfig {
  bool nd2nz = false;
  bool nz2nd = false;
  bool scmBlockGroup = false;
  uint32_t bufferLen = 0;
  uint32_t bufferNumber = 0;
  uint32_t consumerSize = 0;
  TPosition consumer[8] = {};
  bool enableStaticEvtId = false;
  bool enableLoopQueue = false;
};

template <TPosition SRC, TPosition DST, int32_t DEPTH, auto MASK = 0>
class TQueBind {
 public:
  int32_t handle_ = -1;
  static constexpr uint32_t pos_code = (uint32_t)SRC | ((uint32_t)DST << 8);
  static constexpr uint32_t depth = (uint32_t)DEPTH;

  template <class T>
  LocalTensor<T> AllocTensor(ASC_LOC) {
    LocalTensor<T> t =
        LocalTensor<T>::from_desc(ASC_RT->que_alloc(handle_, ::ascendopt::dtype_of<T>(), loc_.c()), SRC);
    ++allocated_;
    return t;
  }
  // The tensor may be another queue's (runtime/queue.rs); its user tag
  // goes through the queue with it (tags_, in EnQue order).
  template <class T>
  bool EnQue(const LocalTensor<T>& t, ASC_LOC) {
    ASC_RT->que_enque(handle_, t.desc_, loc_.c());
    tags_[(tag_head_ + queued_) % kMaxDepth] = t.tag_;
    ++queued_;
    return true;
  }
  template <class T>
  LocalTensor<T> DeQue(ASC_LOC) {
    LocalTensor<T> t =
        LocalTensor<T>::from_desc(ASC_RT->que_deque(handle_, ::ascendopt::dtype_of<T>(), loc_.c()), DST);
    t.tag_ = pop_tag();
    return t;
  }
  // The guide's in-place form: the de-queued tensor through the argument.
  template <class T>
  void DeQue(LocalTensor<T>& t, ASC_LOC) {
    t = DeQue<T>(loc_);
  }
  // Real kernels also write `que.DeQue();` when they go on using the tensor
  // they en-queued (the hand-over is what they want): the same de-queue, the
  // tensor dropped.
  void DeQue(ASC_LOC) {
    ASC_RT->que_deque(handle_, ::ascendopt::dtype_of<uint8_t>(), loc_.c());
    pop_tag();
  }
  // The guide's in-place form of AllocTensor.
  template <class T>
  void AllocTensor(LocalTensor<T>& t, ASC_LOC) {
    t = AllocTensor<T>(loc_);
  }
  template <class T>
  void FreeTensor(LocalTensor<T>& t, ASC_LOC) {
    ASC_RT->que_free(handle_, t.desc_, loc_.c());
    if (allocated_ > 0) --allocated_;
  }
  void FreeAllEvent() {}
  // Queue state as the guide's TQueBind members report it: tensors en-queued
  // and not yet de-queued, and whether a buffer is free to allocate (the
  // runtime enforces the real limits; these count this object's calls).
  bool VacantInQue() { return queued_ < DEPTH; }
  bool HasTensorInQue() { return queued_ > 0; }
  int32_t GetTensorCountInQue() { return queued_; }
  bool HasIdleBuffer() { return num_ == 0 || allocated_ < num_; }

  int32_t queued_ = 0;
  int32_t allocated_ = 0;
  int32_t num_ = 0;
  // The runtime allows depths 1..=8.
  static constexpr int32_t kMaxDepth = 8;
  TTagType tags_[kMaxDepth] = {};
  int32_t tag_head_ = 0;

 private:
  TTagType pop_tag() {
    if (queued_ <= 0) return 0;
    TTagType tag = tags_[tag_head_];
    tag_head_ = (tag_head_ + 1) % kMaxDepth;
    --queued_;
    return tag;
  }
};

template <TPosition POS, int32_t DEPTH = 1, auto MASK = 0>
class TQue : public TQueBind<POS, POS, DEPTH, MASK> {};

template <TPosition POS = TPosition::VECCALC>
class TBuf {
 public:
  int32_t handle_ = -1;
  template <class T>
  LocalTensor<T> Get(ASC_LOC) {
    return LocalTensor<T>::from_desc(ASC_RT->buf_get(handle_, ::ascendopt::dtype_of<T>(), 0, loc_.c()), POS);
  }
  template <class T>
  LocalTensor<T> Get(uint32_t len, ASC_LOC) {
    return LocalTensor<T>::from_desc(ASC_RT->buf_get(handle_, ::ascendopt::dtype_of<T>(), len, loc_.c()), POS);
  }
  // TBuf derives from TQueBind (guide 6.2.3.6.1.8), so real code also
  // takes its tensor with AllocTensor and hands it back with FreeTensor: a
  // TBuf has one buffer and no queue, so AllocTensor is the whole buffer
  // (as Get) and FreeTensor does nothing.
  template <class T>
  LocalTensor<T> AllocTensor(ASC_LOC) {
    return Get<T>(loc_);
  }
  template <class T>
  void FreeTensor(LocalTensor<T>&, ASC_LOC) {
    (void)loc_;
  }
  template <class T>
  LocalTensor<T> GetWithOffset(uint32_t size, uint32_t bufOffset, ASC_LOC) {
    LocalTensor<T> whole = Get<T>(0, loc_);
    LocalTensor<T> t = whole;
    t.desc_.addr = whole.desc_.addr + bufOffset;
    t.desc_.elems = size;
    return t;
  }
};

class TPipe;
namespace detail {
inline TPipe*& current_pipe() {
  static thread_local TPipe* p = nullptr;
  return p;
}
// A TPipe of this thread went out of scope: its buffers go back when the
// next TPipe is made. (Left over from an earlier kernel call on the thread,
// it gives back the nothing a new block holds.)
inline bool& pipe_ended() {
  static thread_local bool ended = false;
  return ended;
}
}  // namespace detail

class TPipe {
 public:
  // "InitBuffer申请的内存会在TPipe对象销毁时通过析构函数自动释放" (guide
  // 6.2.3.6.1, InitBuffer), and only one TPipe exists at a time (TPipe's
  // constructor): a kernel that makes a TPipe per stage or per loop
  // iteration starts each with the whole UB. The buffers are given back
  // when the next TPipe of the same kernel call is made, not in the
  // destructor, so that objects that outlive their TPipe in the same scope
  // (a Matmul object declared before it) can still finish with them. Not
  // outside a launch (block_num 0: a TPipe made when the library loads).
  TPipe() {
    detail::current_pipe() = this;
    if (detail::pipe_ended() && ::block_num != 0) {
      detail::pipe_ended() = false;
      ASC_RT->pipe_reset(::ascendopt::Loc().c());
    }
  }
  // The destructor only notes the end: it makes no runtime call and reads
  // nothing the runtime checks, as it may run while a fault unwinds the
  // kernel or in a destructor that cannot throw.
  ~TPipe() {
    if (detail::current_pipe() != this) return;
    detail::current_pipe() = nullptr;
    detail::pipe_ended() = true;
  }
  TPipe(const TPipe&) = delete;
  TPipe& operator=(const TPipe&) = delete;

  void Init() {}
  template <TPosition S, TPosition D, int32_t DEPTH, auto M>
  bool InitBuffer(TQueBind<S, D, DEPTH, M>& que, uint8_t num, uint32_t len, ASC_LOC) {
    que.handle_ = ASC_RT->que_create(TQueBind<S, D, DEPTH, M>::pos_code, (uint32_t)DEPTH, num, len, loc_.c());
    que.num_ = num;
    return que.handle_ >= 0;
  }
  template <TPosition P>
  bool InitBuffer(TBuf<P>& buf, uint32_t len, ASC_LOC) {
    buf.handle_ = ASC_RT->buf_create((uint32_t)P, len, loc_.c());
    return buf.handle_ >= 0;
  }
  // The queue form called with a TBuf (`InitBuffer(tbuf, 1, len)`, as
  // kernels written against CANN's generic InitBuffer do): a TBuf holds one
  // buffer, which then spans the `num` buffers of `len` bytes.
  template <TPosition P>
  bool InitBuffer(TBuf<P>& buf, uint8_t num, uint32_t len, ASC_LOC) {
    buf.handle_ = ASC_RT->buf_create((uint32_t)P, (uint32_t)num * len, loc_.c());
    return buf.handle_ >= 0;
  }
  template <HardEvent E>
  TEventID FetchEventID(ASC_LOC) {
    return (TEventID)ASC_RT->fetch_event_id((uint32_t)E, loc_.c());
  }
  TEventID FetchEventID(HardEvent e, ASC_LOC) { return (TEventID)ASC_RT->fetch_event_id((uint32_t)e, loc_.c()); }
  template <HardEvent E>
  TEventID AllocEventID(ASC_LOC) {
    return (TEventID)ASC_RT->fetch_event_id((uint32_t)E, loc_.c());
  }
  template <HardEvent E>
  void ReleaseEventID(TEventID id, ASC_LOC) {
    ASC_RT->release_event_id((uint32_t)E, id, loc_.c());
  }
  void Reset(ASC_LOC) { ASC_RT->pipe_reset(loc_.c()); }
  void Destroy(ASC_LOC) { ASC_RT->pipe_reset(loc_.c()); }
};

inline TPipe* GetTPipePtr() { return detail::current_pipe(); }

}  // namespace AscendC

#endif
