// ascendopt emulation of op_frame/elemwise_frame.h, the element-wise kernel
// framework of early CANN kernel libraries (not in the guide; later
// libraries mark it deprecated). Written here from how kernels use it
// (Ascend's tf_LeakyRelu sample, op_kernel/kernel_leaky_relu.h and
// leaky_relu.cpp), not from the library's source:
//
//   class K : public AscendC::ElemwiseOpBase {
//     using DType = T;                         // element type of the buffers
//     void Init(...) { ElemwiseOpBase::Init(pieces, inBytes, tmpBytes, outBytes); ... }
//     void MyCopyIn(int32_t piece, LocalTensor<T>& in);
//     void MyCompute(int32_t piece, LocalTensor<T>& in, LocalTensor<T>& out);
//     void MyCopyOut(int32_t piece, LocalTensor<T>& out);
//   };
//   AscendC::ElemwiseFrame<K> op; op.Init(...); op.Process();
//
// ElemwiseOpBase::Init gives the kernel a VECIN and a VECOUT queue of two
// buffers each (inBytes and outBytes long) and a temporary TBuf of tmpBytes
// (none when 0); Process runs the three stages for every piece in order
// through the queues: the in-buffer is allocated, filled by MyCopyIn and
// en-queued; de-queued with a fresh out-buffer for MyCompute, which is
// en-queued while the in-buffer is freed; de-queued for MyCopyOut and
// freed. With two buffers per queue the copy-in of the next piece overlaps
// the compute and copy-out of the last one, as the queues' flags allow.
// The kernel reaches the queues, the pipe and the temporary buffer by the
// names `inQueue`, `outQueue`, `pipe` and `tbuf`.
#ifndef ASCENDOPT_OP_FRAME_ELEMWISE_FRAME_H
#define ASCENDOPT_OP_FRAME_ELEMWISE_FRAME_H

#include "kernel_operator.h"

namespace AscendC {

class ElemwiseOpBase {
 public:
  ElemwiseOpBase() {}

  void Init(int32_t pieces, int32_t inBytes, int32_t tmpBytes, int32_t outBytes) {
    framePieces_ = pieces;
    pipe.InitBuffer(inQueue, 2, inBytes);
    pipe.InitBuffer(outQueue, 2, outBytes);
    if (tmpBytes > 0) {
      pipe.InitBuffer(tbuf, tmpBytes);
    }
  }

 protected:
  int32_t framePieces_ = 0;
  TPipe pipe;
  TBuf<TPosition::LCM> tbuf;
  TQue<TPosition::VECIN, 2> inQueue;
  TQue<TPosition::VECOUT, 2> outQueue;
};

template <class Op>
class ElemwiseFrame : public Op {
 public:
  ElemwiseFrame() {}

  void Process() {
    using T = typename Op::DType;
    for (int32_t piece = 0; piece < this->framePieces_; ++piece) {
      LocalTensor<T> in = this->inQueue.template AllocTensor<T>();
      Op::MyCopyIn(piece, in);
      this->inQueue.EnQue(in);

      LocalTensor<T> x = this->inQueue.template DeQue<T>();
      LocalTensor<T> y = this->outQueue.template AllocTensor<T>();
      Op::MyCompute(piece, x, y);
      this->outQueue.EnQue(y);
      this->inQueue.FreeTensor(x);

      LocalTensor<T> out = this->outQueue.template DeQue<T>();
      Op::MyCopyOut(piece, out);
      this->outQueue.FreeTensor(out);
    }
  }
};

}  // namespace AscendC

#endif
