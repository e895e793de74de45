//! Compare and select: Compare (tensor vs tensor), Compares (tensor vs
//! scalar) and Select (pick src0 or src1 by a bit mask).
//!
//! Semantics (guide 6.2.3.3.4.1 Compare, 6.2.3.3.4.3 Compares, 6.2.3.3.4.7
//! Select; hardware-facts.md section C):
//! - Compare/Compares write a bit mask: bit `e % 8` of byte `e / 8` of
//!   `dst` (uint8/int8) is the result of element `e` ("按照小端顺序排序",
//!   the first element is the least significant bit). Sources: half and
//!   float with every CMPMODE, int32 with EQ only (Atlas A2 lists).
//! - Count form: `count` contiguous elements; `count * sizeof(T)` must be a
//!   multiple of 256 bytes ("设置count时，需要保证count个元素所占空间256字节对齐").
//! - Mask forms: on Atlas A2 the mask is a reserved parameter with no
//!   effect ("保留参数，设置无效"), so every repeat compares all
//!   `256 / sizeof(T)` lanes; source block/repeat strides apply, and the
//!   result bits of repeat `r` follow those of repeat `r - 1` contiguously
//!   (the destination strides do not apply to a bit mask). A mask form
//!   issued in counter mode is not modelled and is rejected.
//! - Comparisons are IEEE: NaN compares false except NE, which is true;
//!   -0 equals +0.
//! - Select: dst = selMask bit ? src0 : src1 (mode 1: the scalar instead of
//!   src1). Mode 0 (VSEL_CMPMASK_SPR) uses the first `256 / sizeof(T)`
//!   bits of selMask for every repeat (bit = lane); modes 1 and 2 consume
//!   selMask continuously (bit = repeat * lanes + lane). In the mask forms
//!   the mask filters the result: inactive lanes keep their old dst value.
//!   dst/src half or float; selMask any unsigned type (read as bytes).
//! - All operands 32-byte aligned in UB.

use ascendopt_op::Dtype;

use crate::abi::{cmp, form, AscVecOp};
use crate::numeric::{self, float_value, int_value};
use crate::runtime::fault::Fault;
use crate::trace::VecOp;

use super::lanes::{
    check_local, check_range, plan, ub_region, Access, Operand, Spec, REPEAT_BYTES,
};
use super::{MaskState, VecEffect};

/// Executes Compare, Compares or Select.
pub fn execute(ub: &mut [u8], mask: &MaskState, op: &AscVecOp) -> Result<VecEffect, Fault> {
    match VecOp::from_code(op.op) {
        Some(VecOp::Compare) => compare(ub, mask, op, false),
        Some(VecOp::Compares) => compare(ub, mask, op, true),
        Some(VecOp::Select) => select(ub, mask, op),
        _ => Err(Fault::Unsupported {
            api: "vector",
            what: format!("op code {} in the compare/select family", op.op),
        }),
    }
}

/// Decodes a dtype code of the ABI.
pub(crate) fn dtype_of(api: &'static str, code: u8, what: &str) -> Result<Dtype, Fault> {
    Dtype::from_abi_code(code).ok_or_else(|| Fault::InvalidArg {
        api,
        what: format!("unknown {what} dtype code {code}"),
    })
}

/// The scalar operand's bits, checked against the dtype it must have.
pub(crate) fn scalar_bits(api: &'static str, op: &AscVecOp, expected: Dtype) -> Result<u64, Fault> {
    let got = dtype_of(api, op.scalar_dtype, "scalar")?;
    if got != expected {
        return Err(Fault::InvalidArg {
            api,
            what: format!("scalar is {got}, the operation needs {expected}"),
        });
    }
    let width = 8 * expected.size() as u32;
    Ok(if width >= 64 {
        op.scalar_bits
    } else {
        op.scalar_bits & ((1u64 << width) - 1)
    })
}

/// A comparison mode (`CMPMODE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Lt,
    Gt,
    Eq,
    Le,
    Ge,
    Ne,
}

impl Mode {
    fn from_code(api: &'static str, code: u8) -> Result<Mode, Fault> {
        Ok(match code {
            cmp::LT => Mode::Lt,
            cmp::GT => Mode::Gt,
            cmp::EQ => Mode::Eq,
            cmp::LE => Mode::Le,
            cmp::GE => Mode::Ge,
            cmp::NE => Mode::Ne,
            other => {
                return Err(Fault::InvalidArg {
                    api,
                    what: format!("unknown CMPMODE {other}"),
                })
            }
        })
    }

    /// IEEE comparison: every mode but NE is false when a NaN is involved.
    fn float(self, a: f64, b: f64) -> bool {
        match self {
            Mode::Lt => a < b,
            Mode::Gt => a > b,
            Mode::Eq => a == b,
            Mode::Le => a <= b,
            Mode::Ge => a >= b,
            Mode::Ne => a != b,
        }
    }

    fn int(self, a: i128, b: i128) -> bool {
        match self {
            Mode::Lt => a < b,
            Mode::Gt => a > b,
            Mode::Eq => a == b,
            Mode::Le => a <= b,
            Mode::Ge => a >= b,
            Mode::Ne => a != b,
        }
    }
}

/// Compare (`scalar == false`) or Compares (`scalar == true`).
fn compare(
    ub: &mut [u8],
    mask: &MaskState,
    op: &AscVecOp,
    scalar: bool,
) -> Result<VecEffect, Fault> {
    let api = if scalar { "Compares" } else { "Compare" };
    let dst_dtype = dtype_of(api, op.dtype, "destination")?;
    if !matches!(dst_dtype, Dtype::Uint8 | Dtype::Int8) {
        return Err(Fault::Unsupported {
            api,
            what: format!("a {dst_dtype} destination (the result bit mask is uint8_t or int8_t)"),
        });
    }
    let src_code = if op.src_dtype != 0 {
        op.src_dtype
    } else {
        op.src0.dtype
    };
    let src = dtype_of(api, src_code, "source")?;
    let mode = Mode::from_code(api, op.round)?;
    match src {
        Dtype::Float16 | Dtype::Float32 => {}
        Dtype::Int32 if mode == Mode::Eq => {}
        Dtype::Int32 => {
            return Err(Fault::Unsupported {
                api,
                what: format!(
                    "int32 sources with CMPMODE::{} on Atlas A2 (int32 supports EQ only)",
                    format!("{mode:?}").to_uppercase()
                ),
            })
        }
        other => {
            return Err(Fault::Unsupported {
                api,
                what: format!("{other} sources on Atlas A2 (half, float, int32 with EQ)"),
            })
        }
    }
    let size = src.size() as u64;
    let lanes = REPEAT_BYTES / size;
    check_local(api, "dst", &op.dst)?;
    // The lane plan of the sources: count form as given; mask forms with
    // every lane active (the A2 mask has no effect on Compare).
    let mut lane_op = *op;
    if op.form == form::COUNT {
        let whole_repeats = op
            .count
            .checked_mul(size)
            .is_some_and(|bytes| bytes.is_multiple_of(REPEAT_BYTES));
        if !whole_repeats {
            return Err(Fault::InvalidArg {
                api,
                what: format!(
                    "count {} x {size} B is not a multiple of 256 B (required by the count form)",
                    op.count as i64
                ),
            });
        }
    } else {
        if mask.counter {
            return Err(Fault::Unsupported {
                api,
                what: "the mask (high-dimension) form in counter mode; use the count form".into(),
            });
        }
        lane_op.form = form::MASK_CONT;
        lane_op.mask = [lanes, 0];
    }
    let scalar_value = if scalar {
        Some(scalar_bits(api, op, src)?)
    } else {
        None
    };
    let mut operands = vec![Operand::src0(&lane_op, size as u32)];
    if !scalar {
        operands.push(Operand::src1(&lane_op, size as u32));
    }
    let lane_plan = plan(
        &Spec::widest(api, &operands),
        &lane_op,
        &MaskState::reset(),
        ub.len(),
    )?;
    let n_bits = lane_plan.len() as u64;
    let dst_start = u64::from(op.dst.addr);
    let dst_end = dst_start + n_bits / 8;
    check_range("dst", dst_start, dst_end, ub.len())?;
    // Read every source element before writing any result byte.
    let mut bytes = vec![0u8; (n_bits / 8) as usize];
    if let Some(bases) = lane_plan.contiguous_bases() {
        // Contiguous sources: typed loops, the same results.
        let n = lane_plan.len();
        let other = |e: usize, width: usize| match scalar_value {
            Some(bits) => bits,
            None => numeric::load_bits(ub, bases[1] + e * width, width),
        };
        match src {
            Dtype::Float32 => pack_bits(&mut bytes, n, |e| {
                let a = numeric::load_bits(ub, bases[0] + e * 4, 4) as u32;
                let b = other(e, 4) as u32;
                mode.float(f64::from(f32::from_bits(a)), f64::from(f32::from_bits(b)))
            }),
            Dtype::Float16 => pack_bits(&mut bytes, n, |e| {
                let a = numeric::load_bits(ub, bases[0] + e * 2, 2) as u16;
                let b = other(e, 2) as u16;
                mode.float(
                    f64::from(numeric::half_to_f32(a)),
                    f64::from(numeric::half_to_f32(b)),
                )
            }),
            _ => pack_bits(&mut bytes, n, |e| {
                let a = numeric::load(ub, bases[0] + e * size as usize, src);
                let b = other(e, size as usize);
                mode.int(
                    int_value(src, a).unwrap_or(0),
                    int_value(src, b).unwrap_or(0),
                )
            }),
        }
    } else {
        for e in 0..lane_plan.len() {
            let a = numeric::load(ub, lane_plan.addr(e, 0), src);
            let b = match scalar_value {
                Some(bits) => bits,
                None => numeric::load(ub, lane_plan.addr(e, 1), src),
            };
            let result = match (float_value(src, a), float_value(src, b)) {
                (Some(x), Some(y)) => mode.float(x, y),
                _ => mode.int(
                    int_value(src, a).unwrap_or(0),
                    int_value(src, b).unwrap_or(0),
                ),
            };
            if result {
                bytes[e / 8] |= 1 << (e % 8);
            }
        }
    }
    ub[dst_start as usize..dst_end as usize].copy_from_slice(&bytes);
    let mut effect = lane_plan.effect();
    if n_bits > 0 {
        effect.writes.push(ub_region(dst_start, dst_end));
    }
    Ok(effect)
}

/// Sets bit `e % 8` of `bytes[e / 8]` for every `e < n` where `f(e)`.
#[inline(always)]
fn pack_bits(bytes: &mut [u8], n: usize, f: impl Fn(usize) -> bool) {
    for (k, byte) in bytes.iter_mut().enumerate().take(n.div_ceil(8)) {
        let mut b = 0u8;
        for j in 0..8.min(n - 8 * k) {
            b |= u8::from(f(8 * k + j)) << j;
        }
        *byte = b;
    }
}

/// `SELMODE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SelMode {
    /// 0: two tensors, the same `lanes` mask bits for every repeat.
    CmpMaskSpr,
    /// 1: tensor and scalar, mask bits consumed continuously.
    TensorScalar,
    /// 2: two tensors, mask bits consumed continuously.
    TensorTensor,
}

impl SelMode {
    fn name(self) -> &'static str {
        match self {
            SelMode::CmpMaskSpr => "VSEL_CMPMASK_SPR",
            SelMode::TensorScalar => "VSEL_TENSOR_SCALAR_MODE",
            SelMode::TensorTensor => "VSEL_TENSOR_TENSOR_MODE",
        }
    }
}

fn select(ub: &mut [u8], mask: &MaskState, op: &AscVecOp) -> Result<VecEffect, Fault> {
    let api = "Select";
    let dtype = dtype_of(api, op.dtype, "destination")?;
    if !matches!(dtype, Dtype::Float16 | Dtype::Float32) {
        return Err(Fault::Unsupported {
            api,
            what: format!("{dtype} on Atlas A2 (half, float)"),
        });
    }
    let sel_mode = match op.p[0] {
        0 => SelMode::CmpMaskSpr,
        1 => SelMode::TensorScalar,
        2 => SelMode::TensorTensor,
        other => {
            return Err(Fault::InvalidArg {
                api,
                what: format!("unknown SELMODE {other}"),
            })
        }
    };
    let size = dtype.size() as u32;
    check_local(api, "selMask", &op.src2)?;
    let scalar = match sel_mode {
        SelMode::TensorScalar if op.scalar_dtype == 0 => {
            return Err(Fault::InvalidArg {
                api,
                what: "VSEL_TENSOR_SCALAR_MODE needs the scalar src1 overload".into(),
            })
        }
        SelMode::TensorScalar => Some(scalar_bits(api, op, dtype)?),
        _ if op.scalar_dtype != 0 => {
            return Err(Fault::InvalidArg {
                api,
                what: format!(
                    "{} selects between two tensors; a scalar src1 needs VSEL_TENSOR_SCALAR_MODE",
                    sel_mode.name()
                ),
            })
        }
        _ => None,
    };
    let mut operands = vec![
        Operand::dst(op, size, Access::Write),
        Operand::src0(op, size),
    ];
    if scalar.is_none() {
        operands.push(Operand::src1(op, size));
    }
    let lane_plan = plan(&Spec::widest(api, &operands), op, mask, ub.len())?;
    let lanes = u64::from(lane_plan.lanes_per_repeat);
    let bit_of = |e: usize| -> u64 {
        let (r, l) = lane_plan.position(e);
        match sel_mode {
            SelMode::CmpMaskSpr => u64::from(l),
            SelMode::TensorScalar | SelMode::TensorTensor => u64::from(r) * lanes + u64::from(l),
        }
    };
    let mut effect = lane_plan.effect();
    if lane_plan.is_empty() {
        return Ok(effect);
    }
    let sel_start = u64::from(op.src2.addr);
    let n = lane_plan.len();
    let d = size as usize;
    if let (Some(bases), SelMode::TensorScalar | SelMode::TensorTensor) =
        (lane_plan.independent_bases(), sel_mode)
    {
        // Contiguous and independent: element e uses mask bit e; one pass
        // in order gives the repeat-by-repeat results unless the mask
        // bytes share bytes with the destination.
        let sel_end = sel_start + (n as u64 - 1) / 8 + 1;
        let (d0, d1) = (bases[0] as u64, (bases[0] + n * d) as u64);
        if sel_end <= d0 || sel_start >= d1 {
            check_range("selMask", sel_start, sel_end, ub.len())?;
            effect.reads.push(ub_region(sel_start, sel_end));
            let sel = sel_start as usize;
            for e in 0..n {
                let bits = if (ub[sel + e / 8] >> (e % 8)) & 1 == 1 {
                    numeric::load_bits(ub, bases[1] + e * d, d)
                } else {
                    match scalar {
                        Some(bits) => bits,
                        None => numeric::load_bits(ub, bases[2] + e * d, d),
                    }
                };
                numeric::store_bits(ub, bases[0] + e * d, d, bits);
            }
            return Ok(effect);
        }
    }
    let max_bit = (0..lane_plan.len()).map(bit_of).max().unwrap_or(0);
    let sel_end = sel_start + max_bit / 8 + 1;
    check_range("selMask", sel_start, sel_end, ub.len())?;
    effect.reads.push(ub_region(sel_start, sel_end));
    let sel_base = sel_start as usize;
    for chunk in lane_plan.repeat_chunks() {
        let results: Vec<u64> = chunk
            .clone()
            .map(|e| {
                let bit = bit_of(e);
                let byte = ub[sel_base + (bit / 8) as usize];
                if (byte >> (bit % 8)) & 1 == 1 {
                    numeric::load(ub, lane_plan.addr(e, 1), dtype)
                } else {
                    match scalar {
                        Some(bits) => bits,
                        None => numeric::load(ub, lane_plan.addr(e, 2), dtype),
                    }
                }
            })
            .collect();
        for (e, bits) in chunk.zip(results) {
            numeric::store(ub, lane_plan.addr(e, 0), dtype, bits);
        }
    }
    Ok(effect)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::form;
    use crate::runtime::vec::lanes::tests::{blank_op, ub as view};
    use crate::trace::{Mem, Region};

    const POISON: u8 = 0xa5;

    fn new_ub() -> Vec<u8> {
        vec![POISON; 8192]
    }

    fn h(x: f64) -> u64 {
        u64::from(half::f16::from_f64(x).to_bits())
    }

    fn f(x: f32) -> u64 {
        u64::from(x.to_bits())
    }

    fn put(ub: &mut [u8], addr: usize, dtype: Dtype, bits: &[u64]) {
        for (i, b) in bits.iter().enumerate() {
            numeric::store(ub, addr + i * dtype.size(), dtype, *b);
        }
    }

    /// Puts `bits` in 32-byte blocks two blocks apart from `addr` (a block
    /// stride of 2).
    fn put_two_apart(ub: &mut [u8], addr: usize, dtype: Dtype, bits: &[u64]) {
        for (k, chunk) in bits.chunks(32 / dtype.size()).enumerate() {
            put(ub, addr + 64 * k, dtype, chunk);
        }
    }

    fn get(ub: &[u8], addr: usize, dtype: Dtype, n: usize) -> Vec<u64> {
        (0..n)
            .map(|i| numeric::load(ub, addr + i * dtype.size(), dtype))
            .collect()
    }

    /// Compare(dst u8 @0, src0 @1024, src1 @2048, mode, count).
    fn cmp_op(code: u32, src: Dtype, mode: u8, count: u64) -> AscVecOp {
        let mut op = blank_op();
        op.op = code;
        op.dtype = Dtype::Uint8.abi_code();
        op.src_dtype = src.abi_code();
        op.round = mode;
        op.dst = view(0, op.dtype);
        op.src0 = view(1024, op.src_dtype);
        op.src1 = view(2048, op.src_dtype);
        op.count = count;
        op
    }

    fn run(ub: &mut [u8], op: &AscVecOp) -> Result<VecEffect, Fault> {
        execute(ub, &MaskState::reset(), op)
    }

    fn region(start: u64, len: u64) -> Region {
        Region {
            mem: Mem::Ub,
            space: 0,
            start,
            len,
        }
    }

    #[test]
    fn compare_count_form_half_every_mode() {
        // The guide's Compare example: src0 = [2 3 5 7 11 13 17 19],
        // src1 = [2 4 6 8 10 12 14 16], repeated to 128 halves (256 B).
        // Element 0 is the least significant bit of byte 0.
        let a: Vec<u64> = [2.0, 3.0, 5.0, 7.0, 11.0, 13.0, 17.0, 19.0]
            .iter()
            .map(|&x| h(x))
            .collect();
        let b: Vec<u64> = [2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0, 16.0]
            .iter()
            .map(|&x| h(x))
            .collect();
        let expected = [
            (cmp::LT, 0b0000_1110u8),
            (cmp::GT, 0b1111_0000), // 240 in the guide
            (cmp::EQ, 0b0000_0001), // 1
            (cmp::LE, 0b0000_1111), // 15
            (cmp::GE, 0b1111_0001), // 241
            (cmp::NE, 0b1111_1110), // 126 + 128
        ];
        for (mode, byte) in expected {
            let mut ub = new_ub();
            for k in 0..16 {
                put(&mut ub, 1024 + 16 * k, Dtype::Float16, &a);
                put(&mut ub, 2048 + 16 * k, Dtype::Float16, &b);
            }
            let effect = run(&mut ub, &cmp_op(80, Dtype::Float16, mode, 128)).unwrap();
            assert_eq!(&ub[0..16], &[byte; 16], "mode {mode}");
            assert_eq!(ub[16], POISON, "only count / 8 bytes are written");
            assert_eq!(effect.repeats, 1);
            assert_eq!(effect.elems, 128);
            assert_eq!(effect.reads, vec![region(1024, 256), region(2048, 256)]);
            assert_eq!(effect.writes, vec![region(0, 16)]);
        }
    }

    /// The contiguous fast path (count form) and the lane-by-lane path (a
    /// mask form whose source blocks are two apart) give the same bits on
    /// the same lane values, specials included.
    #[test]
    fn contiguous_and_strided_sources_compare_alike() {
        let mut rng = crate::test_rng::SplitMix64::new(11);
        for (src, lanes) in [(Dtype::Float16, 128usize), (Dtype::Float32, 64)] {
            let specials: Vec<u64> = match src {
                Dtype::Float16 => vec![0x7C00, 0xFC00, 0x7E00, 0x0000, 0x8000, 0x0001, 0x7BFF],
                _ => vec![
                    0x7F80_0000,
                    0xFF80_0000,
                    0x7FC0_0000,
                    0,
                    0x8000_0000,
                    1,
                    0x7F7F_FFFF,
                ],
            };
            for scalar in [false, true] {
                for mode in [cmp::LT, cmp::GT, cmp::EQ, cmp::LE, cmp::GE, cmp::NE] {
                    // Few distinct values so that ties happen.
                    let mut value = || {
                        let r = rng.next_u64();
                        if r.is_multiple_of(5) {
                            specials[(r >> 8) as usize % specials.len()]
                        } else {
                            numeric::to_bits_rne(((r >> 16) % 7) as f64 - 3.0, src)
                        }
                    };
                    let a: Vec<u64> = (0..lanes).map(|_| value()).collect();
                    let b: Vec<u64> = (0..lanes).map(|_| value()).collect();
                    let code = if scalar { 81 } else { 80 };
                    let mut fast = cmp_op(code, src, mode, lanes as u64);
                    let mut slow = cmp_op(code, src, mode, 0);
                    slow.form = form::MASK_BITS;
                    slow.mask = [u64::MAX, u64::MAX];
                    slow.repeat = 1;
                    slow.src0_blk = 2;
                    slow.src1_blk = 2;
                    for op in [&mut fast, &mut slow] {
                        op.scalar_dtype = src.abi_code();
                        op.scalar_bits = numeric::to_bits_rne(0.0, src);
                    }
                    let mut ub_fast = new_ub();
                    put(&mut ub_fast, 1024, src, &a);
                    put(&mut ub_fast, 2048, src, &b);
                    let mut ub_slow = new_ub();
                    put_two_apart(&mut ub_slow, 1024, src, &a);
                    put_two_apart(&mut ub_slow, 2048, src, &b);
                    run(&mut ub_fast, &fast).unwrap();
                    run(&mut ub_slow, &slow).unwrap();
                    assert_eq!(
                        &ub_fast[..lanes / 8],
                        &ub_slow[..lanes / 8],
                        "{src} mode {mode} scalar {scalar}"
                    );
                    assert!(ub_fast[..lanes / 8].iter().any(|&x| x != 0));
                }
            }
        }
    }

    #[test]
    fn compare_count_form_needs_256_byte_multiples_and_aligned_operands() {
        let mut ub = new_ub();
        // 100 halves = 200 B.
        let out = run(&mut ub, &cmp_op(80, Dtype::Float16, cmp::LT, 100));
        assert!(
            matches!(out, Err(Fault::InvalidArg { api: "Compare", .. })),
            "{out:?}"
        );
        // 64 floats = 256 B is fine; a dst at 16 is not 32 B aligned.
        let mut op = cmp_op(80, Dtype::Float32, cmp::LT, 64);
        op.dst = view(16, op.dtype);
        let out = run(&mut ub, &op);
        assert_eq!(
            out,
            Err(Fault::Unaligned {
                operand: "dst",
                mem: "UB",
                addr: 16,
                align: 32
            })
        );
        let mut op = cmp_op(80, Dtype::Float32, cmp::LT, 64);
        op.src1 = view(2056, op.src_dtype);
        assert!(matches!(
            run(&mut ub, &op),
            Err(Fault::Unaligned {
                operand: "src1",
                ..
            })
        ));
        // The source range must fit in the UB.
        let mut op = cmp_op(80, Dtype::Float32, cmp::LT, 64);
        op.src0 = view(8192 - 128, op.src_dtype);
        assert!(matches!(
            run(&mut ub, &op),
            Err(Fault::LocalOutOfRange {
                operand: "src0",
                end: 8320,
                cap: 8192,
                ..
            })
        ));
        assert_eq!(ub, new_ub(), "a rejected instruction writes nothing");
    }

    #[test]
    fn compare_mask_form_ignores_the_mask_on_a2_and_packs_bits() {
        // float, 2 repeats, continuous mask 28 (no effect on A2). src0 has a
        // repeat stride of 16 blocks, src1 a block stride of 2 and a repeat
        // stride of 16; the dst strides do not apply to the bit mask.
        let mut op = cmp_op(80, Dtype::Float32, cmp::LT, 0);
        op.form = form::MASK_CONT;
        op.mask = [28, 0];
        op.repeat = 2;
        op.src0_rep = 16;
        op.src1_blk = 2;
        op.src1_rep = 16;
        op.dst_blk = 3;
        op.dst_rep = 1;
        op.src0 = view(1024, op.src_dtype);
        op.src1 = view(4096, op.src_dtype);
        let mut ub = new_ub();
        for r in 0..2u64 {
            for l in 0..64u64 {
                let a = 1024 + r * 512 + l * 4;
                let b = 4096 + r * 512 + (l / 8) * 64 + (l % 8) * 4;
                // element e = 64 r + l compares e < 40.
                numeric::store(&mut ub, a as usize, Dtype::Float32, f((r * 64 + l) as f32));
                numeric::store(&mut ub, b as usize, Dtype::Float32, f(40.0));
            }
        }
        let effect = run(&mut ub, &op).unwrap();
        let mut expected = [0u8; 16];
        expected[..5].fill(0xff); // elements 0..40
        assert_eq!(&ub[0..16], &expected);
        assert_eq!(ub[16], POISON);
        assert_eq!((effect.repeats, effect.elems), (2, 128));
        assert_eq!(effect.writes, vec![region(0, 16)]);
        assert_eq!(effect.reads[1], region(4096, 512 + 7 * 64 + 32));
        // A mask form issued in counter mode is not modelled.
        let counter = MaskState {
            counter: true,
            lo: 64,
            hi: 0,
        };
        assert!(matches!(
            execute(&mut ub, &counter, &op),
            Err(Fault::Unsupported { .. })
        ));
    }

    #[test]
    fn compares_is_ieee_nan_false_except_ne() {
        let vals = [
            f32::NAN,
            0.5,
            1.0,
            2.0,
            f32::NEG_INFINITY,
            f32::INFINITY,
            -0.0,
            0.0,
        ];
        let src: Vec<u64> = vals.iter().map(|&x| f(x)).collect();
        let check = |scalar: f32, mode: u8, byte: u8| {
            let mut ub = new_ub();
            for k in 0..8 {
                put(&mut ub, 1024 + 32 * k, Dtype::Float32, &src);
            }
            let mut op = cmp_op(81, Dtype::Float32, mode, 64);
            op.scalar_dtype = Dtype::Float32.abi_code();
            op.scalar_bits = f(scalar);
            let effect = run(&mut ub, &op).unwrap();
            assert_eq!(&ub[0..8], &[byte; 8], "scalar {scalar} mode {mode}");
            assert_eq!(effect.reads, vec![region(1024, 256)]);
        };
        // Against 1.0: [NaN, 0.5, 1, 2, -inf, inf, -0, 0].
        check(1.0, cmp::LT, 0b1101_0010);
        check(1.0, cmp::GT, 0b0010_1000);
        check(1.0, cmp::EQ, 0b0000_0100);
        check(1.0, cmp::LE, 0b1101_0110);
        check(1.0, cmp::GE, 0b0010_1100);
        check(1.0, cmp::NE, 0b1111_1011);
        // -0 == +0.
        check(0.0, cmp::EQ, 0b1100_0000);
        // A NaN scalar: all false, NE all true.
        for mode in [cmp::LT, cmp::GT, cmp::EQ, cmp::LE, cmp::GE] {
            check(f32::NAN, mode, 0);
        }
        check(f32::NAN, cmp::NE, 0xff);
    }

    #[test]
    fn compares_mask_form_uses_source_strides() {
        // half, 1 repeat, UnaryRepeatParams {dstBlk 1, srcBlk 2, dstRep 8, srcRep 8}.
        let mut op = cmp_op(81, Dtype::Float16, cmp::GE, 0);
        op.form = form::MASK_BITS;
        op.mask = [1, 0];
        op.repeat = 1;
        op.src0_blk = 2;
        op.scalar_dtype = Dtype::Float16.abi_code();
        op.scalar_bits = h(3.0);
        let mut ub = new_ub();
        // Lane l of block k sits at 1024 + 64 k + 2 (l % 16); value = k.
        for k in 0..8 {
            put(&mut ub, 1024 + 64 * k, Dtype::Float16, &[h(k as f64); 16]);
        }
        run(&mut ub, &op).unwrap();
        // Blocks 3..8 are >= 3: bits 48..128.
        assert_eq!(
            &ub[0..16],
            &[0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]
        );
    }

    #[test]
    fn compare_int32_supports_eq_only_and_dtypes_are_checked() {
        let mut ub = new_ub();
        let a: Vec<u64> = (0..64)
            .map(|i| numeric::wrap_int(i - 3, Dtype::Int32))
            .collect();
        let b: Vec<u64> = (0..64)
            .map(|i| numeric::wrap_int(if i % 2 == 0 { i - 3 } else { 0 }, Dtype::Int32))
            .collect();
        put(&mut ub, 1024, Dtype::Int32, &a);
        put(&mut ub, 2048, Dtype::Int32, &b);
        run(&mut ub, &cmp_op(80, Dtype::Int32, cmp::EQ, 64)).unwrap();
        // Even elements equal; odd element 3 (value 0) equals 0 too.
        assert_eq!(
            &ub[0..8],
            &[0b0101_1101, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55]
        );
        let lt = run(&mut ub, &cmp_op(80, Dtype::Int32, cmp::LT, 64));
        assert!(
            matches!(lt, Err(Fault::Unsupported { api: "Compare", .. })),
            "{lt:?}"
        );
        let i16_src = run(&mut ub, &cmp_op(80, Dtype::Int16, cmp::EQ, 128));
        assert!(matches!(i16_src, Err(Fault::Unsupported { .. })));
        let mut half_dst = cmp_op(80, Dtype::Float16, cmp::EQ, 128);
        half_dst.dtype = Dtype::Float16.abi_code();
        assert!(matches!(
            run(&mut ub, &half_dst),
            Err(Fault::Unsupported { .. })
        ));
        let bad_mode = run(&mut ub, &cmp_op(80, Dtype::Float16, 6, 128));
        assert!(matches!(bad_mode, Err(Fault::InvalidArg { .. })));
        let mut no_scalar = cmp_op(81, Dtype::Float16, cmp::EQ, 128);
        no_scalar.scalar_dtype = Dtype::Float32.abi_code();
        assert!(matches!(
            run(&mut ub, &no_scalar),
            Err(Fault::InvalidArg { .. })
        ));
    }

    /// Select(dst @0, selMask @3072, src0 @1024, src1 @2048, mode, count).
    fn sel_op(dtype: Dtype, mode: u32, count: u64) -> AscVecOp {
        let mut op = blank_op();
        op.op = 82;
        op.dtype = dtype.abi_code();
        op.src_dtype = op.dtype;
        op.dst = view(0, op.dtype);
        op.src0 = view(1024, op.dtype);
        op.src1 = view(2048, op.dtype);
        op.src2 = view(3072, Dtype::Uint8.abi_code());
        op.p[0] = mode;
        op.count = count;
        op
    }

    /// Select's contiguous fast path (count form) and its lane-by-lane path
    /// (mask form, every operand's blocks two apart) pick the same elements
    /// in both bit-consuming modes, over two repeats.
    #[test]
    fn contiguous_and_strided_selects_pick_alike() {
        let mut rng = crate::test_rng::SplitMix64::new(3);
        for dtype in [Dtype::Float16, Dtype::Float32] {
            let lanes = 256 / dtype.size();
            let per_block = 32 / dtype.size();
            let n = 2 * lanes;
            let a: Vec<u64> = (0..n).map(|_| rng.next_u64() & 0x7fff).collect();
            let b: Vec<u64> = (0..n).map(|_| 0x8000 | (rng.next_u64() & 0x7fff)).collect();
            let sel: Vec<u8> = (0..n / 8).map(|_| rng.next_u64() as u8).collect();
            for mode in [1u32, 2] {
                let mut fast = sel_op(dtype, mode, n as u64);
                let mut slow = sel_op(dtype, mode, 0);
                slow.form = form::MASK_BITS;
                slow.mask = [u64::MAX, u64::MAX];
                slow.repeat = 2;
                slow.dst_blk = 2;
                slow.src0_blk = 2;
                slow.src1_blk = 2;
                slow.dst_rep = 16;
                slow.src0_rep = 16;
                slow.src1_rep = 16;
                if mode == 1 {
                    for op in [&mut fast, &mut slow] {
                        op.scalar_dtype = dtype.abi_code();
                        op.scalar_bits = 0x9234;
                    }
                }
                let mut ub_fast = new_ub();
                put(&mut ub_fast, 1024, dtype, &a);
                put(&mut ub_fast, 2048, dtype, &b);
                ub_fast[3072..3072 + n / 8].copy_from_slice(&sel);
                let mut ub_slow = new_ub();
                put_two_apart(&mut ub_slow, 1024, dtype, &a);
                put_two_apart(&mut ub_slow, 2048, dtype, &b);
                ub_slow[3072..3072 + n / 8].copy_from_slice(&sel);
                run(&mut ub_fast, &fast).unwrap();
                run(&mut ub_slow, &slow).unwrap();
                let got_fast = get(&ub_fast, 0, dtype, n);
                let got_slow: Vec<u64> = (0..n)
                    .map(|e| {
                        let at = 64 * (e / per_block) + dtype.size() * (e % per_block);
                        numeric::load(&ub_slow, at, dtype)
                    })
                    .collect();
                assert_eq!(got_fast, got_slow, "{dtype} mode {mode}");
                assert!(
                    got_fast.iter().any(|&x| x < 0x8000) && got_fast.iter().any(|&x| x >= 0x8000)
                );
            }
        }
    }

    #[test]
    fn select_tensor_tensor_modes_in_count_form() {
        // The guide's mode-2 example for the first 8 floats (selMask byte 60
        // = 0b0011_1100 picks src0 for elements 2..6), then src0[i] = i and
        // src1[i] = -i for i in 8..80.
        let a8 = [
            -80.4933f32,
            52.2499,
            -50.6124,
            -72.3737,
            -33.7107,
            -83.4001,
            34.3954,
            61.3188,
        ];
        let b8 = [
            35.8789f32, 44.0334, 54.9997, 44.8567, -30.8579, -53.714, -59.8013, 71.1663,
        ];
        let setup = || {
            let mut ub = new_ub();
            let a: Vec<u64> = (0..80)
                .map(|i| f(if i < 8 { a8[i] } else { i as f32 }))
                .collect();
            let b: Vec<u64> = (0..80)
                .map(|i| f(if i < 8 { b8[i] } else { -(i as f32) }))
                .collect();
            put(&mut ub, 1024, Dtype::Float32, &a);
            put(&mut ub, 2048, Dtype::Float32, &b);
            let mut sel = [0u8; 16];
            sel[0] = 60;
            sel[1] = 0xff;
            sel[8] = 0x0f;
            sel[9] = 0xf0;
            ub[3072..3088].copy_from_slice(&sel);
            ub
        };
        let first8 = [
            35.8789f32, 44.0334, -50.6124, -72.3737, -33.7107, -83.4001, -59.8013, 71.1663,
        ];
        // Mode 2: bits are consumed continuously.
        let mut ub = setup();
        let effect = run(&mut ub, &sel_op(Dtype::Float32, 2, 80)).unwrap();
        let out = get(&ub, 0, Dtype::Float32, 80);
        let want8: Vec<u64> = first8.iter().map(|&x| f(x)).collect();
        assert_eq!(&out[..8], &want8[..]);
        assert_eq!(
            &out[8..16],
            &(8..16).map(|i| f(i as f32)).collect::<Vec<_>>()[..]
        );
        assert_eq!(out[16], f(-16.0));
        let want_tail: Vec<u64> = (64..80)
            .map(|i| {
                let from_src0 = (64..68).contains(&i) || (76..80).contains(&i);
                f(if from_src0 { i as f32 } else { -(i as f32) })
            })
            .collect();
        assert_eq!(&out[64..80], &want_tail[..]);
        assert_eq!(effect.repeats, 2);
        assert!(
            effect.reads.contains(&region(3072, 10)),
            "{:?}",
            effect.reads
        );
        // Mode 0: every repeat uses bits 0..64 again.
        let mut ub = setup();
        let effect = run(&mut ub, &sel_op(Dtype::Float32, 0, 80)).unwrap();
        let out = get(&ub, 0, Dtype::Float32, 80);
        assert_eq!(&out[..8], &want8[..]);
        let want_tail: Vec<u64> = (64..80)
            .map(|i| {
                let j = i - 64;
                let from_src0 = (2..6).contains(&j) || (8..16).contains(&j);
                f(if from_src0 { i as f32 } else { -(i as f32) })
            })
            .collect();
        assert_eq!(&out[64..80], &want_tail[..]);
        assert!(
            effect.reads.contains(&region(3072, 8)),
            "{:?}",
            effect.reads
        );
    }

    #[test]
    fn select_tensor_scalar_mode_in_count_form() {
        // The guide's mode-1 example: scalar 0, selMask byte 60.
        let a8 = [
            -80.4933f32,
            52.2499,
            -50.6124,
            -72.3737,
            -33.7107,
            -83.4001,
            34.3954,
            61.3188,
        ];
        let mut ub = new_ub();
        put(
            &mut ub,
            1024,
            Dtype::Float32,
            &a8.iter().map(|&x| f(x)).collect::<Vec<_>>(),
        );
        ub[3072] = 60;
        let mut op = sel_op(Dtype::Float32, 1, 8);
        op.scalar_dtype = Dtype::Float32.abi_code();
        op.scalar_bits = f(0.0);
        run(&mut ub, &op).unwrap();
        let want = [
            0.0f32, 0.0, -50.6124, -72.3737, -33.7107, -83.4001, 0.0, 0.0,
        ];
        assert_eq!(
            get(&ub, 0, Dtype::Float32, 8),
            want.iter().map(|&x| f(x)).collect::<Vec<_>>()
        );
        assert_eq!(ub[32], POISON);
        // Mode 1 needs the scalar; modes 0/2 reject one.
        op.scalar_dtype = 0;
        assert!(matches!(run(&mut ub, &op), Err(Fault::InvalidArg { .. })));
        let mut op2 = sel_op(Dtype::Float32, 2, 8);
        op2.scalar_dtype = Dtype::Float32.abi_code();
        assert!(matches!(run(&mut ub, &op2), Err(Fault::InvalidArg { .. })));
        let mut half_scalar = sel_op(Dtype::Float32, 1, 8);
        half_scalar.scalar_dtype = Dtype::Float16.abi_code();
        assert!(matches!(
            run(&mut ub, &half_scalar),
            Err(Fault::InvalidArg { .. })
        ));
    }

    #[test]
    fn select_mask_form_keeps_inactive_lanes_and_uses_strides() {
        // float mode 2, continuous mask 4, 2 repeats; dst repeat stride 16
        // blocks, src1 repeat stride 0 (re-read).
        let mut op = sel_op(Dtype::Float32, 2, 0);
        op.form = form::MASK_CONT;
        op.mask = [4, 0];
        op.repeat = 2;
        op.dst_rep = 16;
        op.src1_rep = 0;
        let mut ub = new_ub();
        put(
            &mut ub,
            1024,
            Dtype::Float32,
            &(0..128).map(|i| f(i as f32)).collect::<Vec<_>>(),
        );
        put(
            &mut ub,
            2048,
            Dtype::Float32,
            &(0..64).map(|i| f(-(i as f32) - 0.5)).collect::<Vec<_>>(),
        );
        ub[3072..3088].fill(0);
        ub[3072] = 0b0101; // repeat 0: lanes 0, 2 from src0
        ub[3080] = 0b1010; // repeat 1 (bits 64..): lanes 1, 3 from src0
        let effect = run(&mut ub, &op).unwrap();
        let r0 = get(&ub, 0, Dtype::Float32, 5);
        assert_eq!(&r0[..4], &[f(0.0), f(-1.5), f(2.0), f(-3.5)]);
        assert_eq!(r0[4], numeric::load(&[POISON; 4], 0, Dtype::Float32));
        let r1 = get(&ub, 512, Dtype::Float32, 5);
        assert_eq!(&r1[..4], &[f(-0.5), f(65.0), f(-2.5), f(67.0)]);
        assert_eq!(r1[4], numeric::load(&[POISON; 4], 0, Dtype::Float32));
        assert_eq!(ub[16..512], vec![POISON; 496][..]);
        assert_eq!(effect.elems, 8);
        assert!(effect.writes.contains(&region(0, 512 + 16)));
        assert!(effect.reads.contains(&region(3072, 9)));
    }

    #[test]
    fn select_half_mode0_bit_mask_uses_the_high_word() {
        let mut op = sel_op(Dtype::Float16, 0, 0);
        op.form = form::MASK_BITS;
        op.mask = [0, 1 << 63]; // lane 127 only
        op.repeat = 2;
        let mut ub = new_ub();
        put(
            &mut ub,
            1024,
            Dtype::Float16,
            &(0..256).map(|i| h(f64::from(i))).collect::<Vec<_>>(),
        );
        put(
            &mut ub,
            2048,
            Dtype::Float16,
            &(0..256).map(|i| h(-f64::from(i))).collect::<Vec<_>>(),
        );
        ub[3072..3088].fill(0);
        ub[3087] = 0x80; // bit 127
        run(&mut ub, &op).unwrap();
        assert_eq!(get(&ub, 254, Dtype::Float16, 1), vec![h(127.0)]);
        assert_eq!(get(&ub, 510, Dtype::Float16, 1), vec![h(255.0)]);
        assert_eq!(&ub[0..254], &vec![POISON; 254][..]);
    }

    #[test]
    fn select_rejects_bad_arguments() {
        let mut ub = new_ub();
        let bad_mode = run(&mut ub, &sel_op(Dtype::Float32, 3, 64));
        assert!(matches!(
            bad_mode,
            Err(Fault::InvalidArg { api: "Select", .. })
        ));
        let int = run(&mut ub, &sel_op(Dtype::Int16, 2, 128));
        assert!(matches!(int, Err(Fault::Unsupported { .. })));
        let mut unaligned = sel_op(Dtype::Float32, 2, 64);
        unaligned.src2 = view(3080, Dtype::Uint8.abi_code());
        assert!(matches!(
            run(&mut ub, &unaligned),
            Err(Fault::Unaligned {
                operand: "selMask",
                ..
            })
        ));
        let mut past_end = sel_op(Dtype::Float32, 2, 64);
        past_end.src2 = view(8192 - 4, Dtype::Uint8.abi_code());
        let out = run(&mut ub, &past_end);
        assert!(matches!(
            out,
            Err(Fault::Unaligned { .. }) | Err(Fault::LocalOutOfRange { .. })
        ));
        past_end.src2 = view(8192 - 32, Dtype::Uint8.abi_code());
        past_end.count = 512; // 64 bytes of mask bits
        past_end.src0 = view(0, past_end.dtype);
        past_end.src1 = view(2048, past_end.dtype);
        past_end.dst = view(4096, past_end.dtype);
        assert!(matches!(
            run(&mut ub, &past_end),
            Err(Fault::LocalOutOfRange {
                operand: "selMask",
                ..
            })
        ));
    }

    // ---- vec_more.h: the C++ wrappers -------------------------------------

    fn include_dir() -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("include")
    }

    /// A kernel calling every wrapper of vec_more.h in every form.
    const KERNEL: &str = r#"
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void every_wrapper(GM_ADDR) {
  LocalTensor<half> a, b;
  LocalTensor<float> x, y;
  LocalTensor<uint8_t> m;
  LocalTensor<int8_t> m8;
  LocalTensor<int32_t> n;
  LocalTensor<uint32_t> off;
  uint64_t mask2[2] = {~0ull, ~0ull};
  uint64_t mask1[1] = {0xffull};
  Compare(m, a, b, CMPMODE::LT, 128);
  Compare(m8, x, y, CMPMODE::EQ, mask1, 2, {1, 1, 1, 8, 8, 8});
  Compare(m, a, b, CMPMODE::GE, 128, 1, {1, 2, 1, 8, 8, 8});
  Compare<float, uint8_t, false>(m, x, y, CMPMODE::NE, MASK_PLACEHOLDER, 1, {1, 1, 1, 8, 8, 8});
  Compare(m, n, n, CMPMODE::EQ, 64);
  Compares(m, a, (half)2.0f, CMPMODE::NE, 128);
  Compares(m, x, 1.5f, CMPMODE::GT, 64, 1, {1, 1, 8, 8});
  Compares(m, x, 1.5f, CMPMODE::LE, mask1, 1, {1, 2, 8, 8});
  Compares<float, uint8_t, false>(m, x, 1.5f, CMPMODE::GT, MASK_PLACEHOLDER, 1, {1, 1, 8, 8});
  Select(a, m, a, b, SELMODE::VSEL_TENSOR_TENSOR_MODE, 128);
  Select(a, m, a, b, SELMODE::VSEL_CMPMASK_SPR, 128);
  Select(a, m, a, (half)0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, 128);
  Select(x, m, x, y, SELMODE::VSEL_CMPMASK_SPR, 64, 2, {1, 1, 1, 8, 8, 8});
  Select(x, m, x, y, SELMODE::VSEL_TENSOR_TENSOR_MODE, mask1, 2, {1, 1, 1, 8, 8, 8});
  Select(x, m, x, 1.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, mask1, 2, {1, 1, 1, 8, 8, 8});
  Select(a, m, a, (half)1.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, 128, 1, {1, 1, 1, 8, 8, 8});
  Select<float, uint8_t, false>(x, m, x, y, SELMODE::VSEL_TENSOR_TENSOR_MODE, MASK_PLACEHOLDER, 1,
                                {1, 1, 1, 8, 8, 8});
  ReduceSum(a, b, a, 256);
  ReduceSum<half>(a, b, a, 128, 2, 8);
  ReduceSum<float>(x, y, x, mask1, 300, 0);
  ReduceMax(a, b, a, 256, true);
  ReduceMax(a, b, a, 256);
  ReduceMin<float>(x, y, x, 64, 2, 8, true);
  ReduceMin<half>(a, b, a, mask2, 2, 8, false);
  WholeReduceSum<half>(a, b, 128, 4, 1, 1, 8);
  WholeReduceSum<float>(x, y, mask1, 4, 1, 2, 16);
  WholeReduceMax<half>(a, b, 128, 4, 1, 1, 8, ReduceOrder::ORDER_INDEX_VALUE);
  WholeReduceMax<half, false>(a, b, MASK_PLACEHOLDER, 1, 1, 1, 8);
  WholeReduceMin<float>(x, y, mask1, 4, 1, 1, 8, ReduceOrder::ORDER_ONLY_INDEX);
  BlockReduceSum<half>(a, b, 1, 128, 1, 1, 8);
  BlockReduceMax<float>(x, y, 1, mask1, 1, 1, 8);
  BlockReduceMin<half, false>(a, b, 1, MASK_PLACEHOLDER, 1, 1, 8);
  PairReduceSum<half>(a, b, 1, 128, 1, 1, 8);
  PairReduceSum<float>(x, y, 2, mask1, 1, 1, 8);
  Brcb(a, b, 4, {1, 8});
  Brcb(x, y, 1, BrcbRepeatParams(2, 16));
  Gather(x, y, off, (uint32_t)0, 64);
  Gather(a, b, off, 32u, 16);
  CreateVecIndex(x, 0.0f, 64);
  CreateVecIndex(n, (int32_t)5, 64);
  CreateVecIndex(a, (half)1.0f, 128);
}
"#;

    fn gxx(args: &[&str], src: &std::path::Path) -> std::process::Output {
        std::process::Command::new("g++")
            .args(args)
            .arg("-I")
            .arg(include_dir())
            .arg(src)
            .output()
            .expect("g++ runs (the simulator needs it)")
    }

    #[test]
    fn vec_more_header_compiles_with_gxx() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("kernel.cpp");
        std::fs::write(&src, KERNEL).unwrap();
        let out = gxx(
            &["-std=c++17", "-fsyntax-only", "-Wall", "-Wextra", "-Werror"],
            &src,
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        // The forms that need the cmpMask register fail with a clear message.
        let bad = KERNEL.replace("CreateVecIndex(x, 0.0f, 64);", "GetCmpMask(x);");
        std::fs::write(&src, bad).unwrap();
        let out = gxx(&["-std=c++17", "-fsyntax-only"], &src);
        assert!(!out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("not supported by the ascendopt simulator: GetCmpMask"),
            "{stderr}"
        );
    }

    /// A program that records the AscVecOps the wrappers build (tag 'V' +
    /// the raw struct on stdout) through a mock runtime table.
    const MOCK: &str = r#"
#include <stdio.h>
#include "ascendopt/kernel/vec_more.h"
static void mock_vec(const AscVecOp* op) { fwrite("V", 1, 1, stdout); fwrite(op, sizeof(*op), 1, stdout); }
static uint64_t mock_vec_result(const AscVecOp* op) { mock_vec(op); return 0; }
static AscRuntime make_table() {
  AscRuntime t;
  memset(&t, 0, sizeof(t));
  t.vec = mock_vec;
  t.vec_result = mock_vec_result;
  return t;
}
static AscRuntime g_table = make_table();
namespace ascendopt { const AscRuntime* g_rt = &g_table; }
using namespace AscendC;
template <class T> LocalTensor<T> at(uint32_t addr) {
  LocalTensor<T> t;
  t.desc_.addr = addr;
  t.desc_.elems = 256;
  return t;
}
int main() {
  LocalTensor<float> x = at<float>(1024), y = at<float>(1280), z = at<float>(1536), w = at<float>(2048);
  LocalTensor<float> d = at<float>(0);
  LocalTensor<uint8_t> m = at<uint8_t>(512);
  LocalTensor<half> hx = at<half>(3072), hd = at<half>(64);
  LocalTensor<uint32_t> off = at<uint32_t>(4096);
  LocalTensor<int32_t> iv = at<int32_t>(4608);
  Compare(m, x, y, CMPMODE::LT, 64);                                // m = x < y
  Select(z, m, x, y, SELMODE::VSEL_TENSOR_TENSOR_MODE, 64);        // z = min(x, y)
  ReduceMax(d, z, w, 64, true);                                     // d[0..2] = max, index
  Compares(m, x, 32.0f, CMPMODE::GE, 64);                           // m = x >= 32
  Select(z, m, x, -1.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, 64);    // z = x >= 32 ? x : -1
  WholeReduceSum<half>(hd, hx, 128, 2, 1, 1, 8);                    // hd[r] = sum of repeat r
  WholeReduceMax<float>(d[4], z, 64, 1, 1, 1, 8, ReduceOrder::ORDER_INDEX_VALUE);
  uint64_t bits[1] = {~0ull};
  BlockReduceMin<float>(at<float>(2560), x, 1, bits, 1, 1, 8);      // min of each 8
  PairReduceSum<float>(at<float>(2816), x, 1, 64, 1, 1, 8);         // x[2k] + x[2k + 1]
  Brcb(at<float>(5120), x, 1, {1, 8});                              // block b = x[b]
  Gather(at<float>(5632), x, off, (uint32_t)0, 8);
  CreateVecIndex(iv, (int32_t)100, 16);
  ReduceSum<float>(at<float>(32), x, w, 64, 1, 8);                  // sum of x
  return 0;
}
"#;

    fn recorded_ops(bytes: &[u8]) -> Vec<AscVecOp> {
        let size = std::mem::size_of::<AscVecOp>();
        assert_eq!(bytes.len() % (size + 1), 0);
        bytes
            .chunks(size + 1)
            .map(|rec| {
                assert_eq!(rec[0], b'V');
                // SAFETY: the mock wrote a whole AscVecOp, whose layout
                // abi.rs mirrors; the file pointer is cleared before use.
                let mut op: AscVecOp =
                    unsafe { std::ptr::read_unaligned(rec[1..].as_ptr().cast()) };
                op.loc.file = std::ptr::null();
                op
            })
            .collect()
    }

    #[test]
    fn vec_more_wrappers_compute_through_the_runtime() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("mock.cpp");
        let exe = dir.path().join("mock");
        std::fs::write(&src, MOCK).unwrap();
        let out = std::process::Command::new("g++")
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
        let run_out = std::process::Command::new(&exe).output().unwrap();
        assert!(run_out.status.success());
        let ops = recorded_ops(&run_out.stdout);
        assert_eq!(ops.len(), 13);

        // The fields the runtime reads.
        let (cmp_op, sel, rmax) = (&ops[0], &ops[1], &ops[2]);
        assert_eq!(
            (cmp_op.op, cmp_op.dtype, cmp_op.src_dtype, cmp_op.round),
            (80, 5, 3, cmp::LT)
        );
        assert_eq!(
            (cmp_op.form, cmp_op.count, cmp_op.dst.addr, cmp_op.src1.addr),
            (form::COUNT, 64, 512, 1280)
        );
        assert_eq!(
            (sel.op, sel.p[0], sel.scalar_dtype, sel.src2.addr),
            (82, 2, 0, 512)
        );
        assert_eq!(
            (rmax.op, rmax.p[0], rmax.src1.addr, rmax.src1.elems),
            (91, 1, 2048, 256)
        );
        assert_eq!(
            (ops[3].op, ops[3].round, ops[3].scalar_dtype),
            (81, cmp::GE, 3)
        );
        assert_eq!(ops[3].scalar_bits, u64::from(32.0f32.to_bits()));
        assert_eq!(
            (ops[4].p[0], ops[4].scalar_bits),
            (1, u64::from((-1.0f32).to_bits()))
        );
        assert_eq!(
            (
                ops[5].form,
                ops[5].mask[0],
                ops[5].repeat,
                ops[5].p[..3].to_vec()
            ),
            (form::MASK_CONT, 128, 2, vec![1, 1, 8])
        );
        assert_eq!((ops[6].dst.addr, ops[6].p[3]), (16, 1));
        assert_eq!(
            (ops[7].form, ops[7].mask[0], ops[7].mask[1]),
            (form::MASK_BITS, u64::MAX, 0)
        );
        assert_eq!(
            (ops[9].op, ops[9].p[0], ops[9].p[1], ops[9].repeat),
            (62, 1, 8, 1)
        );
        assert_eq!(
            (ops[10].op, ops[10].p[0], ops[10].src1.addr, ops[10].count),
            (63, 0, 4096, 8)
        );
        assert_eq!(
            (ops[11].op, ops[11].scalar_dtype, ops[11].scalar_bits),
            (61, 8, 100)
        );
        assert_eq!(
            (ops[12].op, ops[12].form, ops[12].repeat, ops[12].src0_rep),
            (90, form::MASK_CONT, 1, 8)
        );

        // Run them on a UB: x[i] = i, y[i] = 63 - i, hx = 1.0, offsets.
        let mut ub = new_ub();
        put(
            &mut ub,
            1024,
            Dtype::Float32,
            &(0..64).map(|i| f(i as f32)).collect::<Vec<_>>(),
        );
        put(
            &mut ub,
            1280,
            Dtype::Float32,
            &(0..64).map(|i| f((63 - i) as f32)).collect::<Vec<_>>(),
        );
        put(&mut ub, 3072, Dtype::Float16, &[h(1.0); 256]);
        put(&mut ub, 4096, Dtype::Uint32, &[28, 0, 4, 4, 12, 8, 24, 16]);
        let mut state = MaskState::reset();
        for (i, op) in ops.iter().enumerate() {
            if let Err(fault) = super::super::execute(&mut ub, &state, op) {
                panic!("op {i} ({}): {fault}", op.op);
            }
            state = MaskState::reset();
        }
        // Compares overwrote the Compare mask: x >= 32.
        assert_eq!(&ub[512..520], &[0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff]);
        // ReduceMax of min(x, y): 31 first at 31.
        assert_eq!(get(&ub, 0, Dtype::Float32, 2), vec![f(31.0), 31]);
        // z = x >= 32 ? x : -1.
        let z = get(&ub, 1536, Dtype::Float32, 64);
        assert_eq!((z[31], z[32], z[63]), (f(-1.0), f(32.0), f(63.0)));
        // WholeReduceSum: 128 ones per repeat.
        assert_eq!(get(&ub, 64, Dtype::Float16, 2), vec![h(128.0), h(128.0)]);
        // WholeReduceMax of z, [index, value] at d[4].
        assert_eq!(get(&ub, 16, Dtype::Float32, 2), vec![63, f(63.0)]);
        // BlockReduceMin, PairReduceSum, Brcb, Gather, CreateVecIndex.
        let want: Vec<u64> = (0..8).map(|b| f((8 * b) as f32)).collect();
        assert_eq!(get(&ub, 2560, Dtype::Float32, 8), want);
        let want: Vec<u64> = (0..32).map(|k| f((4 * k + 1) as f32)).collect();
        assert_eq!(get(&ub, 2816, Dtype::Float32, 32), want);
        for b in 0..8 {
            assert_eq!(
                get(&ub, 5120 + 32 * b, Dtype::Float32, 8),
                vec![f(b as f32); 8]
            );
        }
        let want: Vec<u64> = [7, 0, 1, 1, 3, 2, 6, 4]
            .iter()
            .map(|&i| f(i as f32))
            .collect();
        assert_eq!(get(&ub, 5632, Dtype::Float32, 8), want);
        assert_eq!(
            get(&ub, 4608, Dtype::Int32, 16),
            (100..116).collect::<Vec<u64>>()
        );
        // ReduceSum of 0..64.
        assert_eq!(get(&ub, 32, Dtype::Float32, 1), vec![f(2016.0)]);
    }
}
