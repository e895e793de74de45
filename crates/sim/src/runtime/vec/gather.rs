//! Fill and gather: Brcb (broadcast each source element to a 32-byte
//! block), Gather (collect elements by byte offsets) and CreateVecIndex
//! (an arithmetic index sequence).
//!
//! Semantics (guide 6.2.3.3.8.2 Brcb, 6.2.3.3.10.1 Gather, 6.2.3.3.8.3
//! CreateVecIndex):
//! - Brcb: repeat `r` reads the 8 source elements `8r .. 8r + 8`; element
//!   `8r + b` fills all of block `b` of repeat `r`, at
//!   `dst + (r * dstRepStride + b * dstBlkStride) * 32` (`p[0]` =
//!   dstBlkStride, 0 is taken as 1; `p[1]` = dstRepStride; 0..=255
//!   repeats). The vector mask plays no part. src and dst may not start at
//!   the same address. Types: int16, uint16, int32, uint32, half,
//!   bfloat16, float.
//! - Gather (count form): `dst[i]` = the element at byte
//!   `src + srcBaseAddr + srcOffset[i]` (`src1` holds the uint32 byte
//!   offsets, `p[0]` = srcBaseAddr). Every gathered address must be
//!   aligned to the element size and inside the UB. Same types as Brcb.
//!   The mask forms are not modelled.
//! - CreateVecIndex (count form): `dst[i] = firstValue + i`, the scalar in
//!   `scalar_bits`; float results are rounded once to nearest-even,
//!   integers wrap. Types: int16, half, int32, float. The mask forms are
//!   not modelled.
//! - dst, src and srcOffset are 32-byte aligned in UB.

use ascendopt_op::Dtype;

use crate::abi::{form, AscVecOp};
use crate::numeric::{self, float_value, int_value, wrap_int};
use crate::runtime::fault::Fault;
use crate::trace::{Mem, VecOp};

use super::compare::{dtype_of, scalar_bits};
use super::lanes::{
    check_local, check_range, plan, ub_region, Access, Operand, Spec, BLOCK_BYTES, MAX_REPEAT,
};
use super::{MaskState, VecEffect};

/// Element types of Brcb and Gather on Atlas A2.
const MOVE_TYPES: [Dtype; 7] = [
    Dtype::Int16,
    Dtype::Uint16,
    Dtype::Int32,
    Dtype::Uint32,
    Dtype::Float16,
    Dtype::Bfloat16,
    Dtype::Float32,
];

/// Element types of CreateVecIndex on Atlas A2.
const INDEX_TYPES: [Dtype; 4] = [Dtype::Int16, Dtype::Float16, Dtype::Int32, Dtype::Float32];

/// Executes Brcb, Gather or CreateVecIndex.
pub fn execute(ub: &mut [u8], mask: &MaskState, op: &AscVecOp) -> Result<VecEffect, Fault> {
    let kind = VecOp::from_code(op.op);
    let api = kind.map_or("vector", VecOp::name);
    let dtype = dtype_of(api, op.dtype, "destination")?;
    let types: &[Dtype] = if kind == Some(VecOp::CreateVecIndex) {
        &INDEX_TYPES
    } else {
        &MOVE_TYPES
    };
    if !types.contains(&dtype) {
        return Err(Fault::Unsupported {
            api,
            what: format!("{dtype} on Atlas A2"),
        });
    }
    match kind {
        Some(VecOp::Brcb) => brcb(ub, op, dtype),
        Some(VecOp::Gather) => gather(ub, mask, op, dtype),
        Some(VecOp::CreateVecIndex) => create_vec_index(ub, mask, op, dtype),
        _ => Err(Fault::Unsupported {
            api,
            what: format!("op code {} in the gather/fill family", op.op),
        }),
    }
}

fn brcb(ub: &mut [u8], op: &AscVecOp, dtype: Dtype) -> Result<VecEffect, Fault> {
    let api = "Brcb";
    check_local(api, "dst", &op.dst)?;
    check_local(api, "src", &op.src0)?;
    if op.repeat > MAX_REPEAT {
        return Err(Fault::InvalidArg {
            api,
            what: format!("repeatTime {} is above {MAX_REPEAT}", op.repeat),
        });
    }
    if op.dst.addr == op.src0.addr && op.repeat > 0 {
        return Err(Fault::InvalidArg {
            api,
            what: "src0 and dst are the same memory (not supported)".into(),
        });
    }
    let size = dtype.size() as u64;
    let per_block = BLOCK_BYTES / size;
    let blk_stride = u64::from(op.p[0].max(1));
    let rep_stride = u64::from(op.p[1]);
    let n_src = u64::from(op.repeat) * 8;
    let src_start = u64::from(op.src0.addr);
    let src_end = src_start + n_src * size;
    check_range("src", src_start, src_end, ub.len())?;
    let values: Vec<u64> = (0..n_src)
        .map(|i| numeric::load(ub, (src_start + i * size) as usize, dtype))
        .collect();
    let dst_base = u64::from(op.dst.addr);
    let block_addr =
        |i: u64| dst_base + ((i / 8) * rep_stride + (i % 8) * blk_stride) * BLOCK_BYTES;
    let (mut low, mut high) = (u64::MAX, 0u64);
    for i in 0..n_src {
        let start = block_addr(i);
        check_range("dst", start, start + BLOCK_BYTES, ub.len())?;
        low = low.min(start);
        high = high.max(start + BLOCK_BYTES);
    }
    for (i, bits) in values.iter().enumerate() {
        let start = block_addr(i as u64);
        for k in 0..per_block {
            numeric::store(ub, (start + k * size) as usize, dtype, *bits);
        }
    }
    let mut effect = VecEffect {
        repeats: op.repeat,
        elems: n_src * per_block,
        reads: Vec::new(),
        writes: Vec::new(),
        result: 0,
    };
    if n_src > 0 {
        effect.reads.push(ub_region(src_start, src_end));
        effect.writes.push(ub_region(low, high));
    }
    Ok(effect)
}

fn gather(
    ub: &mut [u8],
    mask: &MaskState,
    op: &AscVecOp,
    dtype: Dtype,
) -> Result<VecEffect, Fault> {
    let api = "Gather";
    if op.form != form::COUNT {
        return Err(Fault::Unsupported {
            api,
            what: "the mask (high-dimension) forms; use the count form".into(),
        });
    }
    check_local(api, "src", &op.src0)?;
    let size = dtype.size() as u32;
    let mut offsets = Operand::src1(op, 4);
    offsets.name = "srcOffset";
    let operands = [Operand::dst(op, size, Access::Write), offsets];
    let lane_plan = plan(&Spec::widest(api, &operands), op, mask, ub.len())?;
    let base = u64::from(op.src0.addr) + u64::from(op.p[0]);
    let (mut low, mut high) = (u64::MAX, 0u64);
    let mut values = Vec::with_capacity(lane_plan.len());
    for i in 0..lane_plan.len() {
        let offset = numeric::load(ub, lane_plan.addr(i, 1), Dtype::Uint32);
        let addr = base + offset;
        if !addr.is_multiple_of(u64::from(size)) {
            return Err(Fault::Unaligned {
                operand: "src",
                mem: Mem::Ub.name(),
                addr,
                align: u64::from(size),
            });
        }
        check_range("src", addr, addr + u64::from(size), ub.len())?;
        low = low.min(addr);
        high = high.max(addr + u64::from(size));
        values.push(numeric::load(ub, addr as usize, dtype));
    }
    for (i, bits) in values.into_iter().enumerate() {
        numeric::store(ub, lane_plan.addr(i, 0), dtype, bits);
    }
    let mut effect = lane_plan.effect();
    if !lane_plan.is_empty() {
        effect.reads.push(ub_region(low, high));
    }
    Ok(effect)
}

fn create_vec_index(
    ub: &mut [u8],
    mask: &MaskState,
    op: &AscVecOp,
    dtype: Dtype,
) -> Result<VecEffect, Fault> {
    let api = "CreateVecIndex";
    if op.form != form::COUNT {
        return Err(Fault::Unsupported {
            api,
            what: "the mask (high-dimension) forms; use the count form".into(),
        });
    }
    let first = scalar_bits(api, op, dtype)?;
    let operands = [Operand::dst(op, dtype.size() as u32, Access::Write)];
    let lane_plan = plan(&Spec::widest(api, &operands), op, mask, ub.len())?;
    for i in 0..lane_plan.len() {
        let bits = match float_value(dtype, first) {
            Some(x) => numeric::to_bits_rne(x + i as f64, dtype),
            None => wrap_int(int_value(dtype, first).unwrap_or(0) + i as i128, dtype),
        };
        numeric::store(ub, lane_plan.addr(i, 0), dtype, bits);
    }
    Ok(lane_plan.effect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::vec::lanes::tests::{blank_op, ub as view};
    use crate::trace::Region;

    const POISON: u8 = 0xa5;
    const H: Dtype = Dtype::Float16;
    const F: Dtype = Dtype::Float32;

    fn new_ub() -> Vec<u8> {
        vec![POISON; 8192]
    }

    fn h(x: f64) -> u64 {
        u64::from(half::f16::from_f64(x).to_bits())
    }

    fn f(x: f32) -> u64 {
        u64::from(x.to_bits())
    }

    fn poison(dtype: Dtype) -> u64 {
        numeric::load(&[POISON; 8], 0, dtype)
    }

    fn put(ub: &mut [u8], addr: usize, dtype: Dtype, bits: &[u64]) {
        for (i, b) in bits.iter().enumerate() {
            numeric::store(ub, addr + i * dtype.size(), dtype, *b);
        }
    }

    fn get(ub: &[u8], addr: usize, dtype: Dtype, n: usize) -> Vec<u64> {
        (0..n)
            .map(|i| numeric::load(ub, addr + i * dtype.size(), dtype))
            .collect()
    }

    fn run(ub: &mut [u8], op: &AscVecOp) -> Result<VecEffect, Fault> {
        execute(ub, &MaskState::reset(), op)
    }

    fn region(start: u64, end: u64) -> Region {
        ub_region(start, end)
    }

    fn brcb_op(dtype: Dtype, repeat: u32, blk: u32, rep: u32) -> AscVecOp {
        let mut op = blank_op();
        op.op = 62;
        op.dtype = dtype.abi_code();
        op.src_dtype = op.dtype;
        op.form = form::MASK_CONT;
        op.mask = [128, 0];
        op.repeat = repeat;
        op.dst = view(0, op.dtype);
        op.src0 = view(4096, op.dtype);
        op.p = [blk, rep, 0, 0, 0, 0, 0, 0];
        op
    }

    #[test]
    fn brcb_broadcasts_each_element_to_a_block() {
        // The guide's example: half [1..16], 2 repeats, {1, 8}: 16 blocks
        // of 16 copies each.
        let mut ub = new_ub();
        put(
            &mut ub,
            4096,
            H,
            &(1..=16).map(|i| h(f64::from(i))).collect::<Vec<_>>(),
        );
        let effect = run(&mut ub, &brcb_op(H, 2, 1, 8)).unwrap();
        let out = get(&ub, 0, H, 256);
        for (k, bits) in out.iter().enumerate() {
            assert_eq!(*bits, h((k / 16 + 1) as f64), "element {k}");
        }
        assert_eq!(ub[512], POISON);
        assert_eq!(effect.reads, vec![region(4096, 4128)]);
        assert_eq!(effect.writes, vec![region(0, 512)]);
        assert_eq!((effect.repeats, effect.elems), (2, 256));
    }

    #[test]
    fn brcb_block_and_repeat_strides() {
        // float, 2 repeats, dstBlkStride 2, dstRepStride 16: block (r, b) at
        // (16 r + 2 b) * 32; the odd blocks between stay untouched.
        let mut ub = new_ub();
        put(
            &mut ub,
            4096,
            F,
            &(0..16).map(|i| f(i as f32 * 0.5)).collect::<Vec<_>>(),
        );
        let effect = run(&mut ub, &brcb_op(F, 2, 2, 16)).unwrap();
        for r in 0..2 {
            for b in 0..8 {
                let at = (16 * r + 2 * b) * 32;
                assert_eq!(
                    get(&ub, at, F, 8),
                    vec![f((8 * r + b) as f32 * 0.5); 8],
                    "block ({r}, {b})"
                );
                assert_eq!(get(&ub, at + 32, F, 8), vec![poison(F); 8]);
            }
        }
        assert_eq!(effect.writes, vec![region(0, (16 + 14) * 32 + 32)]);
        // dstBlkStride 0 is taken as 1.
        let mut ub = new_ub();
        put(
            &mut ub,
            4096,
            F,
            &(0..8).map(|i| f(i as f32)).collect::<Vec<_>>(),
        );
        run(&mut ub, &brcb_op(F, 1, 0, 8)).unwrap();
        assert_eq!(get(&ub, 7 * 32, F, 8), vec![f(7.0); 8]);
        assert_eq!(get(&ub, 32, F, 1), vec![f(1.0)]);
    }

    #[test]
    fn brcb_rejects_bad_operands() {
        let mut ub = new_ub();
        let mut same = brcb_op(H, 1, 1, 8);
        same.src0 = same.dst;
        assert!(matches!(
            run(&mut ub, &same),
            Err(Fault::InvalidArg { api: "Brcb", .. })
        ));
        let mut unaligned = brcb_op(H, 1, 1, 8);
        unaligned.dst = view(8, unaligned.dtype);
        assert!(matches!(
            run(&mut ub, &unaligned),
            Err(Fault::Unaligned { operand: "dst", .. })
        ));
        let out = run(&mut ub, &brcb_op(H, 2, 1, 255));
        assert!(
            matches!(out, Err(Fault::LocalOutOfRange { operand: "dst", .. })),
            "{out:?}"
        );
        assert!(matches!(
            run(&mut ub, &brcb_op(H, 256, 1, 8)),
            Err(Fault::InvalidArg { .. })
        ));
        assert!(matches!(
            run(&mut ub, &brcb_op(Dtype::Int8, 1, 1, 8)),
            Err(Fault::Unsupported { .. })
        ));
        assert_eq!(ub, new_ub());
    }

    fn gather_op(dtype: Dtype, base: u32, count: u64) -> AscVecOp {
        let mut op = blank_op();
        op.op = 63;
        op.dtype = dtype.abi_code();
        op.src_dtype = op.dtype;
        op.dst = view(0, op.dtype);
        op.src0 = view(4096, op.dtype);
        op.src1 = view(2048, Dtype::Uint32.abi_code());
        op.p[0] = base;
        op.count = count;
        op
    }

    #[test]
    fn gather_by_byte_offsets() {
        let mut ub = new_ub();
        put(
            &mut ub,
            4096,
            F,
            &(0..64).map(|i| f(i as f32 + 0.25)).collect::<Vec<_>>(),
        );
        put(&mut ub, 2048, Dtype::Uint32, &[28, 0, 4, 4, 12, 8, 24, 16]);
        let effect = run(&mut ub, &gather_op(F, 0, 8)).unwrap();
        let want: Vec<u64> = [7, 0, 1, 1, 3, 2, 6, 4]
            .iter()
            .map(|&i| f(i as f32 + 0.25))
            .collect();
        assert_eq!(get(&ub, 0, F, 9), [want.clone(), vec![poison(F)]].concat());
        assert_eq!(effect.reads, vec![region(2048, 2080), region(4096, 4128)]);
        assert_eq!(effect.writes, vec![region(0, 32)]);
        // srcBaseAddr 32 shifts by 8 floats.
        run(&mut ub, &gather_op(F, 32, 8)).unwrap();
        let want: Vec<u64> = [15, 8, 9, 9, 11, 10, 14, 12]
            .iter()
            .map(|&i| f(i as f32 + 0.25))
            .collect();
        assert_eq!(get(&ub, 0, F, 8), want);
        // half: offsets in bytes, 2-byte aligned.
        let mut ub = new_ub();
        put(
            &mut ub,
            4096,
            H,
            &(0..16).map(|i| h(f64::from(i))).collect::<Vec<_>>(),
        );
        put(&mut ub, 2048, Dtype::Uint32, &[30, 2, 16]);
        run(&mut ub, &gather_op(H, 0, 3)).unwrap();
        assert_eq!(get(&ub, 0, H, 4), vec![h(15.0), h(1.0), h(8.0), poison(H)]);
    }

    #[test]
    fn gather_rejects_misaligned_and_out_of_range_offsets() {
        let mut ub = new_ub();
        put(&mut ub, 2048, Dtype::Uint32, &[0, 2]);
        let out = run(&mut ub, &gather_op(F, 0, 2));
        assert_eq!(
            out,
            Err(Fault::Unaligned {
                operand: "src",
                mem: "UB",
                addr: 4098,
                align: 4
            })
        );
        put(&mut ub, 2048, Dtype::Uint32, &[4096 - 4, 4096]);
        let out = run(&mut ub, &gather_op(F, 0, 2));
        assert!(
            matches!(
                out,
                Err(Fault::LocalOutOfRange {
                    operand: "src",
                    start: 8192,
                    ..
                })
            ),
            "{out:?}"
        );
        assert_eq!(ub[0], POISON, "nothing written on a fault");
        let mut mask_form = gather_op(F, 0, 0);
        mask_form.form = form::MASK_CONT;
        mask_form.mask = [64, 0];
        mask_form.repeat = 1;
        assert!(matches!(
            run(&mut ub, &mask_form),
            Err(Fault::Unsupported { .. })
        ));
        let mut unaligned = gather_op(F, 0, 2);
        unaligned.src1 = view(2052, Dtype::Uint32.abi_code());
        assert!(matches!(
            run(&mut ub, &unaligned),
            Err(Fault::Unaligned {
                operand: "srcOffset",
                ..
            })
        ));
    }

    fn index_op(dtype: Dtype, first: u64, count: u64) -> AscVecOp {
        let mut op = blank_op();
        op.op = 61;
        op.dtype = dtype.abi_code();
        op.src_dtype = op.dtype;
        op.dst = view(0, op.dtype);
        op.scalar_dtype = op.dtype;
        op.scalar_bits = first;
        op.count = count;
        op
    }

    #[test]
    fn create_vec_index_counts_from_first_value() {
        let mut ub = new_ub();
        let effect = run(
            &mut ub,
            &index_op(Dtype::Int32, numeric::wrap_int(-5, Dtype::Int32), 70),
        )
        .unwrap();
        let want: Vec<u64> = (-5..65)
            .map(|v| numeric::wrap_int(v, Dtype::Int32))
            .collect();
        assert_eq!(get(&ub, 0, Dtype::Int32, 70), want);
        assert_eq!(ub[280], POISON);
        assert_eq!((effect.repeats, effect.elems), (2, 70));
        // half: 2040 + i rounds to nearest-even above 2048 (spacing 2).
        run(&mut ub, &index_op(H, h(2040.0), 14)).unwrap();
        let want: Vec<u64> = [
            2040.0, 2041.0, 2042.0, 2043.0, 2044.0, 2045.0, 2046.0, 2047.0, 2048.0, 2048.0, 2050.0,
            2052.0, 2052.0, 2052.0,
        ]
        .iter()
        .map(|&x| h(x))
        .collect();
        assert_eq!(get(&ub, 0, H, 14), want);
        // int16 wraps.
        run(
            &mut ub,
            &index_op(Dtype::Int16, numeric::wrap_int(32766, Dtype::Int16), 3),
        )
        .unwrap();
        assert_eq!(get(&ub, 0, Dtype::Int16, 3), vec![0x7ffe, 0x7fff, 0x8000]);
        // float.
        run(&mut ub, &index_op(F, f(-1.5), 3)).unwrap();
        assert_eq!(get(&ub, 0, F, 3), vec![f(-1.5), f(-0.5), f(0.5)]);
    }

    #[test]
    fn create_vec_index_rejects_bad_arguments() {
        let mut ub = new_ub();
        let mut wrong_scalar = index_op(F, f(0.0), 8);
        wrong_scalar.scalar_dtype = H.abi_code();
        assert!(matches!(
            run(&mut ub, &wrong_scalar),
            Err(Fault::InvalidArg { .. })
        ));
        assert!(matches!(
            run(&mut ub, &index_op(Dtype::Uint32, 0, 8)),
            Err(Fault::Unsupported { .. })
        ));
        let mut mask_form = index_op(F, f(0.0), 0);
        mask_form.form = form::MASK_CONT;
        mask_form.mask = [64, 0];
        mask_form.repeat = 1;
        assert!(matches!(
            run(&mut ub, &mask_form),
            Err(Fault::Unsupported { .. })
        ));
        let mut unaligned = index_op(F, f(0.0), 8);
        unaligned.dst = view(4, unaligned.dtype);
        assert!(matches!(
            run(&mut ub, &unaligned),
            Err(Fault::Unaligned { .. })
        ));
        assert!(matches!(
            run(&mut ub, &index_op(F, f(0.0), 2049)),
            Err(Fault::LocalOutOfRange { operand: "dst", .. })
        ));
    }
}
