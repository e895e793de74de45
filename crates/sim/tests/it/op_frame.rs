//! op_frame/elemwise_frame.h, the element-wise kernel framework of early
//! CANN kernel libraries: a kernel written against it (ElemwiseOpBase's
//! queues and its temporary TBuf at LCM, ElemwiseFrame's stages, the user
//! tag carrying each piece's length through them) runs and is race-free.

use ascendopt_sim::launch::run_kernel;

use crate::kernel_lib::compile;
use crate::runtime_launch::{f32_tensor, f32s, job, tiling};

/// Doubles 200 floats in pieces of 64 (the last one 8), each piece's
/// length passed from stage to stage as the buffers' user tag.
const DOUBLER_KERNEL: &str = r#"
#include "kernel_operator.h"
#include "op_frame/elemwise_frame.h"

template <typename T>
class Doubler : public AscendC::ElemwiseOpBase {
 public:
  using DType = T;
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, int32_t total, int32_t piece) {
    total_ = total;
    piece_ = piece;
    ElemwiseOpBase::Init((total + piece - 1) / piece, piece * sizeof(T), piece * sizeof(T),
                         piece * sizeof(T));
    xg_.SetGlobalBuffer((__gm__ T*)x, total);
    yg_.SetGlobalBuffer((__gm__ T*)y, total);
  }
  __aicore__ inline void MyCopyIn(int32_t i, AscendC::LocalTensor<T>& in) {
    int32_t n = (i + 1) * piece_ > total_ ? total_ - i * piece_ : piece_;
    in.SetUserTag(n);
    AscendC::DataCopy(in, xg_[i * piece_], n);
  }
  __aicore__ inline void MyCompute(int32_t i, AscendC::LocalTensor<T>& in, AscendC::LocalTensor<T>& out) {
    out.SetUserTag(in.GetUserTag());
    AscendC::LocalTensor<T> twice = this->tbuf.template Get<T>();
    AscendC::Muls(twice, in, (T)2, in.GetUserTag());
    AscendC::Adds(out, twice, (T)0, in.GetUserTag());
  }
  __aicore__ inline void MyCopyOut(int32_t i, AscendC::LocalTensor<T>& out) {
    AscendC::DataCopy(yg_[i * piece_], out, out.GetUserTag());
  }

 private:
  int32_t total_ = 0;
  int32_t piece_ = 0;
  AscendC::GlobalTensor<T> xg_, yg_;
};

extern "C" __global__ __aicore__ void doubler(GM_ADDR x, GM_ADDR y, GM_ADDR ws, GM_ADDR tiling) {
  AscendC::ElemwiseFrame<Doubler<float>> op;
  op.Init(x, y, 200, 64);
  op.Process();
}
"#;

#[test]
fn an_elemwise_frame_kernel_runs_its_stages_over_every_piece() {
    let (_d, so) = compile(DOUBLER_KERNEL);
    let x: Vec<f32> = (0..200).map(|i| i as f32 - 50.0).collect();
    let out = run_kernel(
        &job(
            &so,
            "doubler",
            vec![f32_tensor(&x)],
            vec![f32_tensor(&[0.0; 200])],
        ),
        &tiling(1),
    )
    .unwrap();
    assert_eq!(
        f32s(&out.outputs[0]),
        x.iter().map(|v| v * 2.0).collect::<Vec<_>>()
    );
    let findings = ascendopt_sim::check::check(&out.trace);
    assert!(findings.is_empty(), "{findings:#?}");
}
