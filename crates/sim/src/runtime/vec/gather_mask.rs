//! Selective moves inside the UB: GatherMask (keep the elements a bit
//! pattern selects, packed) and Copy (a masked, strided element copy).
//!
//! Semantics (guide 6.2.3.3.4.9 GatherMask, 6.2.3.1.3 Copy; the Atlas A2
//! rows of their tables):
//! - GatherMask: element `j` of repeat `r` lies at
//!   `src0 + r * src0RepeatStride * 32 + (j / e) * src0BlockStride * 32 +
//!   (j % e) * size` (`e` = elements per 32-byte block). A repeat has
//!   `256 / size` elements in normal mode (reduceMode false, `mask`
//!   ignored) and `mask` elements in counter mode (reduceMode true, the
//!   A2's "配置方式一"; `repeatTimes` repeats either way). Element `j` is
//!   kept when bit `j` (least significant first) of the repeat's pattern
//!   is 1: a built-in pattern (1: even elements, 2: odd, 3..6: the first
//!   to fourth of every four, 7: all) or the bits of the pattern tensor,
//!   consumed continuously inside a repeat, the next repeat's starting
//!   `src1RepeatStride` blocks further (0: the same bits again). The kept
//!   elements are written one after the other from dst; the count is the
//!   instruction's result (rsvdCnt). The pattern element is as wide as T
//!   (uint16 for 16-bit types, uint32 for 32-bit ones). Types: half,
//!   bfloat16, int16, uint16, float, int32, uint32. Afterwards the mask
//!   mode is normal (the runtime resets it; guide: "接口内部执行结束后会设置为
//!   Normal模式").
//! - Copy: `dst = src` on the lanes of a mask form, with block strides
//!   (dstStride, srcStride) and repeat strides (dstRepeatSize,
//!   srcRepeatSize) as any vector instruction. In counter mode the mask is
//!   the element count of *each* repeat and `repeatTime` still counts
//!   (guide: "Counter模式配合Copy高维切分计算API ... Mask代表每次Repeat中处理的元素个数，
//!   迭代次数生效"). The count form (A2 has none) is accepted for the
//!   library's own use (the high-level Concat). Types: any 2- or 4-byte
//!   type. All sources are read before anything is written.

use ascendopt_op::Dtype;

use crate::abi::{form, AscVecOp};
use crate::numeric;
use crate::runtime::fault::Fault;

use super::compare::dtype_of;
use super::lanes::{
    check_local, check_range, plan, ub_region, Access, Operand, Spec, BLOCK_BYTES, REPEAT_BYTES,
};
use super::{MaskState, VecEffect};

/// Element types of GatherMask and Copy on Atlas A2.
const TYPES: [Dtype; 7] = [
    Dtype::Float16,
    Dtype::Bfloat16,
    Dtype::Int16,
    Dtype::Uint16,
    Dtype::Float32,
    Dtype::Int32,
    Dtype::Uint32,
];

/// Largest repeat count of GatherMaskParams.repeatTimes (a uint16).
const MAX_GATHER_MASK_REPEAT: u32 = u16::MAX as u32;

fn check_type(api: &'static str, dtype: Dtype) -> Result<(), Fault> {
    if TYPES.contains(&dtype) {
        Ok(())
    } else {
        Err(Fault::Unsupported {
            api,
            what: format!("{dtype} on Atlas A2"),
        })
    }
}

/// Whether built-in pattern `mode` (1..=7) keeps element `j` of a repeat.
fn builtin_keeps(mode: u32, j: u64) -> bool {
    match mode {
        1 => j.is_multiple_of(2),
        2 => j % 2 == 1,
        3..=6 => j % 4 == u64::from(mode - 3),
        _ => true,
    }
}

/// Executes GatherMask.
pub fn gather_mask(ub: &mut [u8], op: &AscVecOp) -> Result<VecEffect, Fault> {
    let api = "GatherMask";
    let dtype = dtype_of(api, op.dtype, "destination")?;
    check_type(api, dtype)?;
    check_local(api, "dst", &op.dst)?;
    check_local(api, "src0", &op.src0)?;
    let size = dtype.size() as u64;
    let per_block = BLOCK_BYTES / size;
    // p[2] = 1: the pattern is the tensor src1; else built-in pattern p[0].
    let builtin = op.p[2] == 0;
    if builtin && !(1..=7).contains(&op.p[0]) {
        return Err(Fault::InvalidArg {
            api,
            what: format!("built-in src1Pattern {} is outside 1..=7", op.p[0]),
        });
    }
    let pattern_type = if builtin {
        None
    } else {
        check_local(api, "src1Pattern", &op.src1)?;
        let t = dtype_of(api, op.src_dtype, "pattern")?;
        if t.size() != dtype.size() || !matches!(t, Dtype::Uint16 | Dtype::Uint32) {
            return Err(Fault::InvalidArg {
                api,
                what: format!(
                    "a {t} pattern with {dtype} elements (the pattern is uint16_t for 16-bit \
                     types and uint32_t for 32-bit types)"
                ),
            });
        }
        Some(t)
    };
    let counter = op.p[1] != 0;
    let per_repeat = if counter {
        if op.mask[0] == 0 || op.mask[0] > u64::from(u32::MAX) {
            return Err(Fault::InvalidArg {
                api,
                what: format!(
                    "mask {} is outside [1, 2^32 - 1] in counter mode (reduceMode true)",
                    op.mask[0]
                ),
            });
        }
        op.mask[0]
    } else {
        REPEAT_BYTES / size
    };
    if op.repeat > MAX_GATHER_MASK_REPEAT {
        return Err(Fault::InvalidArg {
            api,
            what: format!(
                "repeatTimes {} is above {MAX_GATHER_MASK_REPEAT}",
                op.repeat
            ),
        });
    }
    let repeats = u64::from(op.repeat);
    // No instruction moves more elements than the UB holds bytes.
    if repeats * per_repeat > ub.len() as u64 {
        return Err(Fault::InvalidArg {
            api,
            what: format!(
                "{repeats} repeats of {per_repeat} elements are more than a {}-byte UB holds",
                ub.len()
            ),
        });
    }
    let src_base = u64::from(op.src0.addr);
    let blk = u64::from(op.src0_blk) * BLOCK_BYTES;
    let rep = u64::from(op.src0_rep) * BLOCK_BYTES;
    let pattern_base = u64::from(op.src1.addr);
    let pattern_rep = u64::from(op.src1_rep) * BLOCK_BYTES;
    let (mut src_low, mut src_high) = (u64::MAX, 0u64);
    let (mut pat_low, mut pat_high) = (u64::MAX, 0u64);
    let mut kept = Vec::new();
    for r in 0..repeats {
        for j in 0..per_repeat {
            let keep = match pattern_type {
                None => builtin_keeps(op.p[0], j),
                Some(t) => {
                    let bits = t.size() as u64 * 8;
                    let at = pattern_base + r * pattern_rep + (j / bits) * t.size() as u64;
                    check_range("src1Pattern", at, at + t.size() as u64, ub.len())?;
                    pat_low = pat_low.min(at);
                    pat_high = pat_high.max(at + t.size() as u64);
                    (numeric::load(ub, at as usize, t) >> (j % bits)) & 1 == 1
                }
            };
            if !keep {
                continue;
            }
            let at = src_base + r * rep + (j / per_block) * blk + (j % per_block) * size;
            check_range("src0", at, at + size, ub.len())?;
            src_low = src_low.min(at);
            src_high = src_high.max(at + size);
            kept.push(numeric::load(ub, at as usize, dtype));
        }
    }
    let dst_base = u64::from(op.dst.addr);
    let dst_end = dst_base + kept.len() as u64 * size;
    check_range("dst", dst_base, dst_end, ub.len())?;
    for (i, bits) in kept.iter().enumerate() {
        numeric::store(ub, (dst_base + i as u64 * size) as usize, dtype, *bits);
    }
    let mut effect = VecEffect {
        repeats: op.repeat,
        elems: repeats * per_repeat,
        reads: Vec::new(),
        writes: Vec::new(),
        result: kept.len() as u64,
    };
    if src_low < src_high {
        effect.reads.push(ub_region(src_low, src_high));
    }
    if pat_low < pat_high {
        effect.reads.push(ub_region(pat_low, pat_high));
    }
    if !kept.is_empty() {
        effect.writes.push(ub_region(dst_base, dst_end));
    }
    Ok(effect)
}

/// Executes Copy.
pub fn copy(ub: &mut [u8], mask: &MaskState, op: &AscVecOp) -> Result<VecEffect, Fault> {
    let api = "Copy";
    let dtype = dtype_of(api, op.dtype, "destination")?;
    check_type(api, dtype)?;
    let size = dtype.size() as u32;
    let mut op = *op;
    let mut mask = *mask;
    if mask.counter && op.form != form::COUNT {
        // Counter mode: the mask is each repeat's element count.
        let n = if op.form == form::MASK_CUR {
            mask.lo
        } else {
            op.mask[0]
        };
        op.form = form::MASK_CONT;
        op.mask = [n, 0];
        mask.counter = false;
    }
    let operands = [
        Operand::dst(&op, size, Access::Write),
        Operand::src0(&op, size),
    ];
    let lane_plan = plan(&Spec::widest(api, &operands), &op, &mask, ub.len())?;
    let values: Vec<u64> = (0..lane_plan.len())
        .map(|i| numeric::load(ub, lane_plan.addr(i, 1), dtype))
        .collect();
    for (i, bits) in values.into_iter().enumerate() {
        numeric::store(ub, lane_plan.addr(i, 0), dtype, bits);
    }
    Ok(lane_plan.effect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::vec::lanes::tests::{blank_op, ub as view};

    const POISON: u8 = 0x5a;
    const F: Dtype = Dtype::Float32;
    const H: Dtype = Dtype::Float16;
    const U32: Dtype = Dtype::Uint32;
    const U16: Dtype = Dtype::Uint16;

    fn new_ub() -> Vec<u8> {
        vec![POISON; 8192]
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

    fn f(x: f32) -> u64 {
        u64::from(x.to_bits())
    }

    fn gm_op(dtype: Dtype, builtin: u32, counter: bool, mask: u64, params: [u32; 4]) -> AscVecOp {
        let [blk, repeat, rep, pat_rep] = params;
        let mut op = blank_op();
        op.op = 65;
        op.dtype = dtype.abi_code();
        op.src_dtype = op.dtype;
        op.dst = view(0, op.dtype);
        op.src0 = view(2048, op.dtype);
        op.p[0] = builtin;
        op.p[1] = u32::from(counter);
        op.mask = [mask, 0];
        op.repeat = repeat;
        op.src0_blk = blk;
        op.src0_rep = rep;
        op.src1_rep = pat_rep;
        op
    }

    #[test]
    fn builtin_patterns_pack_the_kept_elements() {
        // float x[i] = i, 2 repeats of 64 in normal mode, pattern 1 (even):
        // 0, 2, ..., 126 packed from dst, 64 kept.
        let mut ub = new_ub();
        put(
            &mut ub,
            2048,
            F,
            &(0..128).map(|i| f(i as f32)).collect::<Vec<_>>(),
        );
        let effect = gather_mask(&mut ub, &gm_op(F, 1, false, 0, [1, 2, 8, 8])).unwrap();
        assert_eq!(effect.result, 64);
        assert_eq!(
            get(&ub, 0, F, 64),
            (0..64).map(|i| f((2 * i) as f32)).collect::<Vec<_>>()
        );
        assert_eq!(get(&ub, 256, F, 1), vec![numeric::load(&[POISON; 4], 0, F)]);
        assert_eq!(effect.reads, vec![ub_region(2048, 2048 + 126 * 4 + 4)]);
        assert_eq!(effect.writes, vec![ub_region(0, 256)]);
        // Pattern 2 (odd), 4 (the second of every four), 7 (all).
        for (mode, expect) in [
            (2u32, (0..64).map(|i| 2 * i + 1).collect::<Vec<u64>>()),
            (4, (0..32).map(|i| 4 * i + 1).collect()),
            (7, (0..128).collect()),
        ] {
            let mut ub = new_ub();
            put(
                &mut ub,
                2048,
                F,
                &(0..128).map(|i| f(i as f32)).collect::<Vec<_>>(),
            );
            let effect = gather_mask(&mut ub, &gm_op(F, mode, false, 0, [1, 2, 8, 8])).unwrap();
            assert_eq!(effect.result, expect.len() as u64, "mode {mode}");
            assert_eq!(
                get(&ub, 0, F, expect.len()),
                expect.iter().map(|&i| f(i as f32)).collect::<Vec<_>>(),
                "mode {mode}"
            );
        }
    }

    #[test]
    fn counter_mode_takes_mask_elements_per_repeat_with_strides() {
        // The guide's picture: uint32, mask 70 per repeat, 2 repeats,
        // src0RepeatStride 4 blocks (the second repeat starts at element
        // 32), a user pattern whose bits are all 1 and src1RepeatStride 0:
        // elements 0..70 then 32..102.
        let mut ub = new_ub();
        put(&mut ub, 2048, U32, &(0..160).collect::<Vec<_>>());
        put(&mut ub, 4096, U32, &[u64::from(u32::MAX); 8]);
        let mut op = gm_op(U32, 0, true, 70, [1, 2, 4, 0]);
        op.src1 = view(4096, U32.abi_code());
        op.src_dtype = U32.abi_code();
        op.p[2] = 1;
        let effect = gather_mask(&mut ub, &op).unwrap();
        assert_eq!(effect.result, 140);
        let expect: Vec<u64> = (0..70).chain(32..102).collect();
        assert_eq!(get(&ub, 0, U32, 140), expect);
        assert_eq!(effect.reads[1], ub_region(4096, 4096 + 12));
    }

    #[test]
    fn a_user_pattern_is_consumed_bit_by_bit_and_may_run_in_place() {
        // half, one repeat of 128 in normal mode, pattern words 0b1001 and
        // 0x8000 (bits 0, 3 and 31): elements 0, 3, 31; dst == src0.
        let mut ub = new_ub();
        let hs: Vec<u64> = (0..128)
            .map(|i| u64::from(half::f16::from_f64(f64::from(i)).to_bits()))
            .collect();
        put(&mut ub, 2048, H, &hs);
        put(&mut ub, 4096, U16, &[0b1001, 0x8000, 0, 0, 0, 0, 0, 0]);
        let mut op = gm_op(H, 0, false, 0, [1, 1, 8, 8]);
        op.src1 = view(4096, U16.abi_code());
        op.src_dtype = U16.abi_code();
        op.p[2] = 1;
        op.dst = op.src0;
        let effect = gather_mask(&mut ub, &op).unwrap();
        assert_eq!(effect.result, 3);
        assert_eq!(get(&ub, 2048, H, 3), vec![hs[0], hs[3], hs[31]]);
        // A pattern of the wrong width is refused.
        let mut bad = op;
        bad.src_dtype = U32.abi_code();
        assert!(gather_mask(&mut ub, &bad).is_err());
        // So is a built-in pattern outside 1..=7, and int8 elements.
        assert!(gather_mask(&mut ub, &gm_op(F, 8, false, 0, [1, 1, 8, 8])).is_err());
        assert!(gather_mask(&mut ub, &gm_op(Dtype::Int8, 1, false, 0, [1, 1, 8, 8])).is_err());
        // Counter mode needs a positive mask.
        assert!(gather_mask(&mut ub, &gm_op(F, 1, true, 0, [1, 1, 8, 8])).is_err());
    }

    fn copy_op(dtype: Dtype, form: u8, mask: u64, repeat: u32, strides: [u32; 4]) -> AscVecOp {
        let mut op = blank_op();
        op.op = 64;
        op.dtype = dtype.abi_code();
        op.src_dtype = op.dtype;
        op.form = form;
        op.mask = [mask, 0];
        op.repeat = repeat;
        op.dst = view(0, op.dtype);
        op.src0 = view(4096, op.dtype);
        op.dst_blk = strides[0];
        op.src0_blk = strides[1];
        op.dst_rep = strides[2];
        op.src0_rep = strides[3];
        op
    }

    #[test]
    fn copy_follows_the_mask_and_strides() {
        // float, continuous mask 10, 2 repeats, dst repeat stride 2 blocks:
        // dst[0..10] = src[0..10], dst[16..26] = src[64..74].
        let mut ub = new_ub();
        put(
            &mut ub,
            4096,
            F,
            &(0..128).map(|i| f(i as f32)).collect::<Vec<_>>(),
        );
        let effect = copy(
            &mut ub,
            &MaskState::reset(),
            &copy_op(F, form::MASK_CONT, 10, 2, [1, 1, 2, 8]),
        )
        .unwrap();
        assert_eq!(
            get(&ub, 0, F, 10),
            (0..10).map(|i| f(i as f32)).collect::<Vec<_>>()
        );
        assert_eq!(
            get(&ub, 64, F, 10),
            (64..74).map(|i| f(i as f32)).collect::<Vec<_>>()
        );
        assert_eq!(get(&ub, 40, F, 1), vec![numeric::load(&[POISON; 4], 0, F)]);
        assert_eq!((effect.repeats, effect.elems), (2, 20));
        // Counter mode: the mask (here from SetVectorMask) is per repeat.
        let mut ub = new_ub();
        put(
            &mut ub,
            4096,
            F,
            &(0..128).map(|i| f(i as f32)).collect::<Vec<_>>(),
        );
        let counter = MaskState {
            counter: true,
            lo: 3,
            hi: 0,
        };
        let effect = copy(
            &mut ub,
            &counter,
            &copy_op(F, form::MASK_CUR, 0, 2, [1, 1, 1, 8]),
        )
        .unwrap();
        assert_eq!((effect.repeats, effect.elems), (2, 6));
        assert_eq!(
            get(&ub, 0, F, 11),
            [0, 1, 2]
                .iter()
                .map(|&i| f(i as f32))
                .chain((3..8).map(|_| numeric::load(&[POISON; 4], 0, F)))
                .chain([64, 65, 66].iter().map(|&i| f(i as f32)))
                .collect::<Vec<_>>()
        );
    }
}
