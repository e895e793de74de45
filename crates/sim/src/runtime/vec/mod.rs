//! Vector instructions (PIPE_V): functional semantics of every vector API on
//! a core's unified buffer.
//!
//! Entry point: [`execute`]. It decodes an [`AscVecOp`], checks alignment and
//! bounds of every operand, computes the result into `ub`, and returns what
//! the hardware did ([`VecEffect`]) for the trace.

use crate::abi::AscVecOp;
use crate::runtime::fault::Fault;
use crate::trace::{Region, VecOp};

/// The vector mask registers of a core.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MaskState {
    /// true after SetMaskCount (counter mode), false in normal mode.
    pub counter: bool,
    /// Low 64 lanes (normal mode) or the element count (counter mode).
    pub lo: u64,
    /// High 64 lanes (normal mode, 16-bit types).
    pub hi: u64,
}

impl MaskState {
    /// The state after reset: normal mode, all lanes on.
    pub fn reset() -> MaskState {
        MaskState {
            counter: false,
            lo: u64::MAX,
            hi: u64::MAX,
        }
    }
}

/// What one vector instruction did, for the trace.
#[derive(Debug, Clone, PartialEq)]
pub struct VecEffect {
    /// Hardware repeats issued.
    pub repeats: u32,
    /// Active elements processed.
    pub elems: u64,
    /// UB regions read (bounding ranges).
    pub reads: Vec<Region>,
    /// UB regions written (bounding ranges).
    pub writes: Vec<Region>,
    /// The instruction's scalar result (GatherMask: elements kept;
    /// MrgSort: structures taken from each list, 16 bits each, list 1
    /// lowest); 0 for the others.
    pub result: u64,
}

/// Executes one vector instruction on `ub`: dispatches by op code to the
/// family that implements it (arithmetic, Cast, compare/select,
/// reductions, gather/fill). Every family checks its operands (in UB,
/// 32-byte aligned, in bounds) through [`lanes::plan`] before it writes.
pub fn execute(ub: &mut [u8], mask: &MaskState, op: &AscVecOp) -> Result<VecEffect, Fault> {
    use VecOp::*;
    let kind = VecOp::from_code(op.op).ok_or_else(|| Fault::InvalidArg {
        api: "vector",
        what: format!("unknown vector op code {}", op.op),
    })?;
    match kind {
        Compare | Compares | Select => compare::execute(ub, mask, op),
        ReduceSum | ReduceMax | ReduceMin | WholeReduceSum | WholeReduceMax | WholeReduceMin
        | BlockReduceSum | BlockReduceMax | BlockReduceMin | PairReduceSum => {
            reduce::execute(ub, mask, op)
        }
        Brcb | Gather | CreateVecIndex => gather::execute(ub, mask, op),
        Copy => gather_mask::copy(ub, mask, op),
        GatherMask => gather_mask::gather_mask(ub, op),
        Sort32 => sort::sort32(ub, op),
        MrgSort => sort::mrg_sort(ub, op),
        // Its block table lives in the kernel's memory: the caller reads it
        // (`transpose::trans_data_to_5hd`).
        TransDataTo5HD => Err(Fault::InvalidArg {
            api: "TransDataTo5HD",
            what: "executed without its block address table".into(),
        }),
        Cast => cast::execute(ub, mask, op),
        Add | Sub | Mul | Div | Max | Min | And | Or | AddRelu | FusedMulAdd | MulAddDst
        | SubRelu | Exp | Ln | Abs | Reciprocal | Sqrt | Rsqrt | Relu | Not | Neg | Adds | Muls
        | Maxs | Mins | Subs | Divs | LeakyRelu | Axpy | ShiftLeft | ShiftRight | Duplicate => {
            arith::execute(ub, mask, op)
        }
    }
}

pub mod arith;
pub mod cast;
pub mod compare;
pub mod gather;
pub mod gather_mask;
pub mod lanes;
pub mod reduce;
pub mod sort;
pub mod transpose;

#[cfg(test)]
mod tests {
    //! The header side: `vec_arith.h` compiles, and the ops its wrappers
    //! build execute as the kernel meant.

    use super::*;
    use crate::abi::sync_kind;
    use crate::numeric;
    use ascendopt_op::Dtype;
    use std::path::{Path, PathBuf};
    use std::process::Command;

    fn include_dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("include")
    }

    /// A kernel using every wrapper family of vec_arith.h.
    const KERNEL: &str = r#"
#include "ascendopt/kernel/vec_arith.h"
using namespace AscendC;
extern "C" void kernel_body() {
  LocalTensor<half> a, b, c;
  LocalTensor<float> x, y, z;
  LocalTensor<int16_t> i16;
  LocalTensor<int32_t> i32;
  LocalTensor<uint16_t> u16;
  LocalTensor<int8_t> i8;
  LocalTensor<bfloat16_t> bf;
  uint64_t mask2[2] = {~0ull, ~0ull};
  uint64_t mask1[1] = {0xffull};
  Add(c, a, b, 128);
  Add(c, a, b, 64, 2, {1, 1, 1, 8, 8, 8});
  Add(c, a, b, mask2, 2, {2, 1, 1, 16, 8, 8});
  Add<half, false>(c, a, b, MASK_PLACEHOLDER, 1, {1, 1, 1, 8, 8, 8});
  Sub(z, x, y, 64); Mul(i32, i32, i32, 8); Div(z, x, y, 64); Max(i16, i16, i16, 16); Min(c, a, b, 16);
  And(u16, u16, u16, 16); Or(i16, i16, i16, mask2, 1, BinaryRepeatParams());
  AddRelu(c, a, b, 16); SubRelu(z, x, y, mask1, 1, {1, 1, 1, 8, 8, 8});
  FusedMulAdd(c, a, b, 16); MulAddDst(z, a, b, 64); MulAddDst(z, a, b, 64, 4, {1, 1, 1, 8, 4, 4});
  MulAddDst(z, a, b, mask1, 4, {1, 1, 1, 8, 4, 4});
  Exp(z, x, 64); Ln(c, a, 16); Abs(z, x, 64, 1, {1, 1, 8, 8}); Reciprocal(c, a, mask2, 1, {1, 1, 8, 8});
  Sqrt<half, false>(c, a, MASK_PLACEHOLDER, 1, {1, 1, 8, 8}); Rsqrt(z, x, 64); Relu(i32, i32, 8);
  Not(u16, u16, 16); Neg(z, x, 64u);
  Adds(c, a, (half)1.0f, 16); Muls(z, x, 2.0f, 64, 1, {1, 1, 8, 8});
  Maxs(i16, i16, (int16_t)3, mask2, 1, {1, 1, 8, 8}); Mins<float, false>(z, x, 0.0f, 1);
  Subs(z, x, 1.0f, 64); Divs(c, a, (half)2.0f, 16); LeakyRelu(z, x, 0.01f, 64);
  ShiftLeft(u16, u16, (uint16_t)2, 16); ShiftRight(i32, i32, 3, 64, 1, {1, 1, 8, 8}, true);
  ShiftRight(i16, i16, (int16_t)1, 16);
  Axpy(z, a, (half)0.5f, 64); Axpy(z, a, (half)0.5f, 64, 2, {1, 1, 8, 4});
  Axpy(c, a, (half)0.5f, mask2, 1, {1, 1, 8, 8});
  Duplicate(c, (half)0.0f, 128); Duplicate(z, 1.0f, 64, 1, 1, 8); Duplicate(bf, (bfloat16_t)1.0f, 16);
  Duplicate<float, false>(z, 1.0f, MASK_PLACEHOLDER, 1, 1, 8); Duplicate(c, (half)1.0f, mask2, 1, 1, 8);
  Cast(x, a, RoundMode::CAST_NONE, 128); Cast(i32, a, RoundMode::CAST_CEIL, 64, 8, {1, 1, 8, 4});
  Cast(i32, a, RoundMode::CAST_CEIL, mask1, 8, {1, 1, 8, 4}); Cast(i8, a, RoundMode::CAST_RINT, 32);
  Cast<half, float, false>(c, x, RoundMode::CAST_ODD, MASK_PLACEHOLDER, 1, {1, 1, 4, 8});
  SetDeqScale((half)0.5f); Cast(c, i32, RoundMode::CAST_NONE, 64);
  SetMaskCount(); SetVectorMask<half, MaskMode::COUNTER>(300); SetVectorMask<float>(0, 0xff);
  SetVectorMask<half>(100); SetMaskNorm(); ResetMask();
}
"#;

    /// g++ -fsyntax-only (warnings as errors) of `text` as file `name`
    /// against the emulation headers.
    fn syntax_check(name: &str, text: &str) -> std::process::Output {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join(name);
        std::fs::write(&src, text).unwrap();
        Command::new("g++")
            .args([
                "-std=c++17",
                "-fsyntax-only",
                "-Wall",
                "-Wextra",
                "-Werror",
                "-I",
            ])
            .arg(include_dir())
            .arg(&src)
            .output()
            .unwrap()
    }

    #[test]
    fn header_compiles_with_gxx() {
        let out = syntax_check("kernel.cpp", KERNEL);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Every API family taken as the guide documents its type: as a
    /// function-pointer variable, as a non-type template argument and as
    /// the argument of a helper's function-pointer parameter (the
    /// unlocated overloads of ASC_UNLOCATED_OVERLOAD); ordinary calls of
    /// the same APIs still compile.
    const POINTERS: &str = r#"
#include "kernel_operator.h"
using namespace AscendC;
template <typename T, void (*F)(const LocalTensor<T>&, const LocalTensor<T>&, const LocalTensor<T>&, const int32_t&)>
void as_template_argument(const LocalTensor<T>& a) { F(a, a, a, 64); }
template <typename T>
void as_helper_argument(const LocalTensor<T>& a,
                        void (*f)(const LocalTensor<T>&, const LocalTensor<T>&, const LocalTensor<T>&, uint64_t,
                                  uint8_t, const BinaryRepeatParams&)) {
  f(a, a, a, 64, 1, BinaryRepeatParams());
}
extern "C" void kernel_body() {
  LocalTensor<float> a;
  LocalTensor<half> h;
  LocalTensor<uint8_t> m;
  LocalTensor<uint32_t> u;
  GlobalTensor<float> g;
  as_template_argument<float, Add>(a);
  as_template_argument<float, Max<float>>(a);
  as_helper_argument(a, Sub);
  as_helper_argument<float>(a, Mul<float>);
  void (*unary)(const LocalTensor<float>&, const LocalTensor<float>&, const int32_t&) = Exp;
  void (*scalar)(const LocalTensor<float>&, const LocalTensor<float>&, const float&, const int32_t&) = &Muls<float>;
  void (*shift)(const LocalTensor<int32_t>&, const LocalTensor<int32_t>&, const int32_t&, uint64_t, const uint8_t,
                const UnaryRepeatParams&, bool) = &ShiftRight<int32_t>;
  void (*dup)(const LocalTensor<float>&, const float&, const int32_t&) = Duplicate;
  void (*cast)(const LocalTensor<float>&, const LocalTensor<half>&, const RoundMode&, const uint32_t) = Cast;
  void (*axpy)(const LocalTensor<float>&, const LocalTensor<half>&, const half&, const int32_t&) = Axpy;
  void (*cmp)(const LocalTensor<uint8_t>&, const LocalTensor<float>&, const LocalTensor<float>&, CMPMODE, uint32_t) =
      Compare;
  void (*sel)(const LocalTensor<float>&, const LocalTensor<uint8_t>&, const LocalTensor<float>&,
              const LocalTensor<float>&, SELMODE, uint32_t) = Select;
  void (*whole)(const LocalTensor<float>&, const LocalTensor<float>&, const int32_t, const int32_t, const int32_t,
                const int32_t, const int32_t) = WholeReduceSum<float>;
  void (*in)(const LocalTensor<float>&, const GlobalTensor<float>&, uint32_t) = DataCopy;
  void (*out)(const GlobalTensor<float>&, const LocalTensor<float>&, const DataCopyExtParams&) = DataCopyPad;
  void (*flag)(int32_t) = SetFlag<HardEvent::V_MTE3>;
  void (*barrier)() = PipeBarrier<PIPE_V>;
  void (*gm)(const LocalTensor<float>&, const LocalTensor<float>&, const uint8_t, const bool, const uint32_t,
             const GatherMaskParams&, uint64_t&) = GatherMask<float>;
  void (*sort)(const LocalTensor<float>&, const LocalTensor<float>&, const LocalTensor<uint32_t>&, const int32_t) =
      Sort32<float>;
  (void)unary; (void)scalar; (void)shift; (void)dup; (void)cast; (void)axpy; (void)cmp; (void)sel; (void)whole;
  (void)in; (void)out; (void)flag; (void)barrier; (void)gm; (void)sort;
  Add(a, a, a, 64);
  Exp(a, a, 64, 1, {1, 1, 8, 8});
  ShiftRight(u, u, 1u, 64, 1, {1, 1, 8, 8}, true);
  DataCopy(a, g, 64);
  SetFlag<HardEvent::V_MTE3>(0);
  PipeBarrier<PIPE_V>();
  Compare(m, a, a, CMPMODE::LT, 64);
  (void)h;
}
"#;

    #[test]
    fn every_api_family_is_usable_as_a_function_pointer_and_template_argument() {
        let out = syntax_check("pointers.cpp", POINTERS);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        // One argument too many matches neither overload.
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("extra.cpp");
        std::fs::write(
            &src,
            "#include \"kernel_operator.h\"\nusing namespace AscendC;\n\
             void f(LocalTensor<float> a) { Add(a, a, a, 64, 7.5); }\n",
        )
        .unwrap();
        let out = Command::new("g++")
            .args(["-std=c++17", "-fsyntax-only", "-I"])
            .arg(include_dir())
            .arg(&src)
            .output()
            .unwrap();
        assert!(!out.status.success());
    }

    /// A mock runtime table that streams what the wrappers hand over:
    /// 'V' + the raw AscVecOp, 'S' + sync kind, 'M' + dtype, hi, lo.
    const MOCK: &str = r#"
#include <stdio.h>
#include "ascendopt/kernel/vec_arith.h"
static void put(const void* p, size_t n) { fwrite(p, 1, n, stdout); }
static void mock_vec(const AscVecOp* op) { put("V", 1); put(op, sizeof(*op)); }
static uint64_t mock_vec_result(const AscVecOp* op) { mock_vec(op); return 0; }
static void mock_sync(uint32_t kind, uint32_t, uint32_t, AscLoc) { put("S", 1); put(&kind, 4); }
static void mock_mask(uint8_t dtype, uint64_t hi, uint64_t lo, AscLoc) {
  put("M", 1); put(&dtype, 1); put(&hi, 8); put(&lo, 8);
}
static AscRuntime make_table() {
  AscRuntime t;
  memset(&t, 0, sizeof(t));
  t.vec = mock_vec;
  t.vec_result = mock_vec_result;
  t.sync = mock_sync;
  t.set_vector_mask = mock_mask;
  return t;
}
static AscRuntime g_table = make_table();
namespace ascendopt { const AscRuntime* g_rt = &g_table; }
using namespace AscendC;
template <class T> LocalTensor<T> at(uint32_t addr) {
  LocalTensor<T> t;
  t.desc_.addr = addr;
  t.desc_.elems = 1024;
  return t;
}
int main() {
  LocalTensor<half> a = at<half>(0), b = at<half>(256), c = at<half>(512);
  LocalTensor<float> x = at<float>(1024), w = at<float>(2048);
  LocalTensor<int32_t> n = at<int32_t>(3072);
  Duplicate(a, (half)1.5f, 128);                       // a = 1.5
  Duplicate(b, (half)0.25f, 64, 2, 1, 4);              // b[0..64] = 0.25, b[64..] untouched? no: rep 4 blocks
  Add(c, a, b, 128);                                   // c = a + b
  Cast(x, c, RoundMode::CAST_NONE, 128);               // x = float(c)
  Muls(x, x, 2.0f, 64, 2, {1, 1, 8, 8});               // x *= 2
  Axpy(w, c, (half)0.5f, 32);                          // w += 0.5 * c
  uint64_t bits[1] = {0x5ull};
  Cast(n, c, RoundMode::CAST_CEIL, bits, 1, {1, 1, 8, 4});  // n[0], n[2] = ceil(c)
  SetMaskCount();
  SetVectorMask<half, MaskMode::COUNTER>(3);
  Adds<half, false>(a, a, (half)1.0f, 1);              // a[0..3] += 1
  SetMaskNorm();
  SetVectorMask<half>(2);
  Muls<half, false>(b, b, (half)4.0f, MASK_PLACEHOLDER, 1, {1, 1, 8, 8});  // b[0..2] *= 4
  ResetMask();
  return 0;
}
"#;

    /// One recorded call of the mock.
    enum Call {
        Vec(Box<AscVecOp>),
        Sync(u32),
        Mask { hi: u64, lo: u64 },
    }

    fn parse(mut bytes: &[u8]) -> Vec<Call> {
        let mut calls = Vec::new();
        let op_size = std::mem::size_of::<AscVecOp>();
        while let Some((&tag, rest)) = bytes.split_first() {
            match tag {
                b'V' => {
                    // SAFETY: the mock wrote a whole AscVecOp, whose layout
                    // abi.rs mirrors; the file pointer is cleared before use.
                    let mut op: AscVecOp =
                        unsafe { std::ptr::read_unaligned(rest.as_ptr().cast()) };
                    op.loc.file = std::ptr::null();
                    calls.push(Call::Vec(Box::new(op)));
                    bytes = &rest[op_size..];
                }
                b'S' => {
                    calls.push(Call::Sync(u32::from_le_bytes(
                        rest[..4].try_into().unwrap(),
                    )));
                    bytes = &rest[4..];
                }
                b'M' => {
                    let hi = u64::from_le_bytes(rest[1..9].try_into().unwrap());
                    let lo = u64::from_le_bytes(rest[9..17].try_into().unwrap());
                    calls.push(Call::Mask { hi, lo });
                    bytes = &rest[17..];
                }
                other => panic!("unexpected tag {other}"),
            }
        }
        calls
    }

    #[test]
    fn wrapper_ops_execute_as_the_kernel_means() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("mock.cpp");
        let exe = dir.path().join("mock");
        std::fs::write(&src, MOCK).unwrap();
        let out = Command::new("g++")
            .args(["-std=c++17", "-O0", "-I"])
            .arg(include_dir())
            .arg(&src)
            .arg("-o")
            .arg(&exe)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let run = Command::new(&exe).output().unwrap();
        assert!(run.status.success());
        let calls = parse(&run.stdout);

        let mut ub = vec![0u8; 8192];
        let mut mask = MaskState::reset();
        let mut ops = Vec::new();
        for call in &calls {
            match call {
                Call::Vec(op) => {
                    execute(&mut ub, &mask, op).unwrap();
                    ops.push(**op);
                }
                Call::Sync(sync_kind::MASK_COUNT) => mask.counter = true,
                Call::Sync(sync_kind::MASK_NORM) => mask.counter = false,
                Call::Sync(sync_kind::RESET_MASK) => {
                    mask = MaskState {
                        counter: mask.counter,
                        ..MaskState::reset()
                    }
                }
                Call::Sync(other) => panic!("unexpected sync {other}"),
                Call::Mask { hi, lo } => (mask.hi, mask.lo) = (*hi, *lo),
            }
        }
        assert_eq!(ops.len(), 9);
        // The wrappers' op fields.
        assert_eq!(
            (ops[1].form, ops[1].repeat, ops[1].dst_rep, ops[1].mask[0]),
            (1, 2, 4, 64)
        );
        assert_eq!(
            (ops[3].op, ops[3].dtype, ops[3].src_dtype, ops[3].round),
            (70, 3, 1, 0)
        );
        assert_eq!((ops[6].form, ops[6].mask, ops[6].src0_rep), (2, [5, 0], 4));
        assert_eq!((ops[7].form, ops[7].scalar_dtype), (3, 1));

        let hv = |addr: usize| {
            numeric::float_value(Dtype::Float16, numeric::load(&ub, addr, Dtype::Float16)).unwrap()
        };
        let fv = |addr: usize| {
            numeric::float_value(Dtype::Float32, numeric::load(&ub, addr, Dtype::Float32)).unwrap()
        };
        let iv = |addr: usize| {
            numeric::int_value(Dtype::Int32, numeric::load(&ub, addr, Dtype::Int32)).unwrap()
        };
        // b: repeat 0 -> halves 0..64 (bytes 0..128), repeat 1 at 4 blocks = byte 128 -> halves 64..128.
        assert!((0..128).all(|i| hv(256 + 2 * i) == if i < 2 { 1.0 } else { 0.25 }));
        // c = 1.5 + 0.25; a[0..3] += 1 afterwards.
        assert!((0..128).all(|i| hv(512 + 2 * i) == 1.75));
        assert!((0..128).all(|i| hv(2 * i) == if i < 3 { 2.5 } else { 1.5 }));
        // x = 2 * 1.75 for all 128 floats.
        assert!((0..128).all(|i| fv(1024 + 4 * i) == 3.5));
        // w = 0 + 0.5 * 1.75 for 32 floats, untouched after.
        assert!((0..34).all(|i| fv(2048 + 4 * i) == if i < 32 { 0.875 } else { 0.0 }));
        // n: bits 0 and 2 -> ceil(1.75) = 2.
        assert_eq!((iv(3072), iv(3076), iv(3080)), (2, 0, 2));
    }
}
