//! Sorting on the vector unit: Sort32 (sort 32 scores with their indices)
//! and MrgSort (merge up to four sorted lists), the two sort instructions
//! of Atlas A2. The high-level Sort, Concat, Extract and MrgSort of the
//! headers are built from them (and from Copy and GatherMask).
//!
//! Semantics (guide 6.2.3.3.9.5 Sort32, 6.2.3.3.9.6 MrgSort, 6.2.3.3.9.7
//! GetMrgSortResult):
//! - A sorted element is an 8-byte structure: the score in the low bytes
//!   (a float in bytes 0..4, or a half in bytes 0..2 with bytes 2..4
//!   reserved, written as 0 here) and the uint32 index in bytes 4..8.
//!   Scores are half or float.
//! - Sort32: repeat `r` sorts the 32 scores `src0[32r..]` with the 32
//!   indices `src1[32r..]` into the 32 structures at `dst + 256r`, largest
//!   score first; equal scores keep their order (the earlier one first).
//!   0..=255 repeats; every operand 32-byte aligned.
//! - MrgSort: merges the valid lists (validBit 0b11, 0b111 or 0b1111: the
//!   first two, three or four) of `elementLengths` structures each (at
//!   most 4095), every one sorted, into dst, largest score first; on equal
//!   scores the earlier list's structure comes first. With
//!   ifExhaustedSuspension it stops as soon as one list is used up. The
//!   structures taken from each list are the instruction's result (what
//!   GetMrgSortResult reports). repeatTimes (1..=255) counts only when all
//!   four lists are valid, equally long and stored one after the other and
//!   ifExhaustedSuspension is off: repeat `k` then merges the four lists
//!   that follow the previous repeat's, into the output that follows; it
//!   is one merge otherwise. Lists are 8-byte aligned, dst 32-byte
//!   aligned, and dst may not overlap a list.
//! - Ordering of special scores (an assumption; the guide does not say):
//!   NaN sorts above every number, -0 equals +0.

use std::cmp::Ordering;

use ascendopt_op::Dtype;

use crate::abi::AscVecOp;
use crate::numeric;
use crate::runtime::fault::Fault;
use crate::trace::Mem;

use super::compare::dtype_of;
use super::lanes::{check_local, check_range, ub_region, MAX_REPEAT};
use super::VecEffect;

/// Bytes of one (score, index) structure.
pub const STRUCT_BYTES: u64 = 8;
/// Scores Sort32 sorts per repeat.
const SORT32_LEN: u64 = 32;
/// Largest list length of MrgSort.
const MAX_LIST_LEN: u32 = 4095;

/// The score type of a sort instruction (half or float).
fn score_type(api: &'static str, code: u8) -> Result<Dtype, Fault> {
    let dtype = dtype_of(api, code, "score")?;
    if matches!(dtype, Dtype::Float16 | Dtype::Float32) {
        Ok(dtype)
    } else {
        Err(Fault::Unsupported {
            api,
            what: format!("{dtype} scores (half or float on Atlas A2)"),
        })
    }
}

/// The order of two scores for a descending sort: `Less` when `a` comes
/// first.
fn descending(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        (false, false) => b.partial_cmp(&a).unwrap_or(Ordering::Equal),
    }
}

/// The score of the structure at `at`.
fn score_at(ub: &[u8], at: u64, dtype: Dtype) -> f64 {
    numeric::float_value(dtype, numeric::load(ub, at as usize, dtype)).unwrap_or(0.0)
}

/// Executes Sort32.
pub fn sort32(ub: &mut [u8], op: &AscVecOp) -> Result<VecEffect, Fault> {
    let api = "Sort32";
    let dtype = score_type(api, op.dtype)?;
    check_local(api, "dst", &op.dst)?;
    check_local(api, "src0", &op.src0)?;
    check_local(api, "src1", &op.src1)?;
    if op.repeat > MAX_REPEAT {
        return Err(Fault::InvalidArg {
            api,
            what: format!("repeatTime {} is above {MAX_REPEAT}", op.repeat),
        });
    }
    let n = u64::from(op.repeat) * SORT32_LEN;
    let size = dtype.size() as u64;
    let (s0, s1, d) = (
        u64::from(op.src0.addr),
        u64::from(op.src1.addr),
        u64::from(op.dst.addr),
    );
    check_range("src0", s0, s0 + n * size, ub.len())?;
    check_range("src1", s1, s1 + n * 4, ub.len())?;
    check_range("dst", d, d + n * STRUCT_BYTES, ub.len())?;
    // Read everything first: dst may overlap the sources.
    let mut items: Vec<(f64, u64, u64)> = (0..n)
        .map(|i| {
            let bits = numeric::load(ub, (s0 + i * size) as usize, dtype);
            let score = numeric::float_value(dtype, bits).unwrap_or(0.0);
            let index = numeric::load(ub, (s1 + i * 4) as usize, Dtype::Uint32);
            (score, bits, index)
        })
        .collect();
    for chunk in items.chunks_mut(SORT32_LEN as usize) {
        // A stable sort keeps equal scores in input order.
        chunk.sort_by(|a, b| descending(a.0, b.0));
    }
    for (i, &(_, bits, index)) in items.iter().enumerate() {
        let at = d + i as u64 * STRUCT_BYTES;
        store_struct(ub, at, dtype, bits, index);
    }
    let mut effect = VecEffect {
        repeats: op.repeat,
        elems: n,
        reads: Vec::new(),
        writes: Vec::new(),
        result: 0,
    };
    if n > 0 {
        effect.reads = vec![ub_region(s0, s0 + n * size), ub_region(s1, s1 + n * 4)];
        effect.writes = vec![ub_region(d, d + n * STRUCT_BYTES)];
    }
    Ok(effect)
}

/// Writes one (score, index) structure; a half score's reserved bytes
/// are 0.
fn store_struct(ub: &mut [u8], at: u64, dtype: Dtype, score_bits: u64, index: u64) {
    let at = at as usize;
    ub[at..at + 4].fill(0);
    numeric::store(ub, at, dtype, score_bits);
    numeric::store(ub, at + 4, Dtype::Uint32, index);
}

/// Executes MrgSort.
pub fn mrg_sort(ub: &mut [u8], op: &AscVecOp) -> Result<VecEffect, Fault> {
    let api = "MrgSort";
    let dtype = score_type(api, op.dtype)?;
    check_local(api, "dst", &op.dst)?;
    let lists = match op.p[5] {
        0b11 => 2,
        0b111 => 3,
        0b1111 => 4,
        other => {
            return Err(Fault::InvalidArg {
                api,
                what: format!("validBit {other:#b} (0b11, 0b111 or 0b1111)"),
            })
        }
    };
    let mut bases = [0u64; 4];
    for (k, base) in bases.iter_mut().enumerate().take(lists) {
        let (name, local_mem, addr) = match k {
            0 => ("src1", op.src0.mem, op.src0.addr),
            1 => ("src2", op.src1.mem, op.src1.addr),
            2 => ("src3", op.src2.mem, op.src2.addr),
            _ => ("src4", Mem::Ub as u8, op.p[6]),
        };
        if Mem::from_code(local_mem) != Some(Mem::Ub) {
            return Err(Fault::Unsupported {
                api,
                what: format!("{name} outside the UB"),
            });
        }
        if !u64::from(addr).is_multiple_of(STRUCT_BYTES) {
            return Err(Fault::Unaligned {
                operand: name,
                mem: Mem::Ub.name(),
                addr: u64::from(addr),
                align: STRUCT_BYTES,
            });
        }
        *base = u64::from(addr);
    }
    let mut lens = [0u64; 4];
    for (k, len) in lens.iter_mut().enumerate().take(lists) {
        if op.p[k] > MAX_LIST_LEN {
            return Err(Fault::InvalidArg {
                api,
                what: format!("elementLengths[{k}] = {} is above {MAX_LIST_LEN}", op.p[k]),
            });
        }
        *len = u64::from(op.p[k]);
    }
    if op.repeat == 0 || op.repeat > MAX_REPEAT {
        return Err(Fault::InvalidArg {
            api,
            what: format!("repeatTimes {} is outside 1..={MAX_REPEAT}", op.repeat),
        });
    }
    let exhausted_stop = op.p[4] != 0;
    let repeats_count = lists == 4
        && !exhausted_stop
        && lens.iter().all(|&l| l == lens[0])
        && (1..4).all(|k| bases[k] == bases[k - 1] + lens[k - 1] * STRUCT_BYTES);
    let repeats = if repeats_count {
        u64::from(op.repeat)
    } else {
        1
    };
    let group = lens.iter().take(lists).sum::<u64>() * STRUCT_BYTES;
    let dst = u64::from(op.dst.addr);
    // Bounds and the no-overlap rule, on the whole span of every repeat.
    let (mut src_low, mut src_high) = (u64::MAX, 0u64);
    for k in 0..lists {
        let start = bases[k];
        let end = start + (repeats - 1) * group + lens[k] * STRUCT_BYTES;
        let name = ["src1", "src2", "src3", "src4"][k];
        check_range(name, start, end, ub.len())?;
        if lens[k] > 0 {
            src_low = src_low.min(start);
            src_high = src_high.max(end);
        }
    }
    let dst_end = dst + repeats * group;
    check_range("dst", dst, dst_end, ub.len())?;
    for k in 0..lists {
        let start = bases[k];
        let end = start + (repeats - 1) * group + lens[k] * STRUCT_BYTES;
        if lens[k] > 0 && start < dst_end && dst < end {
            return Err(Fault::InvalidArg {
                api,
                what: format!(
                    "dst overlaps {} (MrgSort does not allow it)",
                    ["src1", "src2", "src3", "src4"][k]
                ),
            });
        }
    }
    let mut out = dst;
    let mut taken = [0u64; 4];
    for r in 0..repeats {
        taken = [0; 4];
        loop {
            // The valid list whose next structure has the largest score
            // (the earliest list on a tie).
            let mut best: Option<(usize, f64)> = None;
            for k in 0..lists {
                if taken[k] >= lens[k] {
                    continue;
                }
                let at = bases[k] + r * group + taken[k] * STRUCT_BYTES;
                let score = score_at(ub, at, dtype);
                if best.is_none_or(|(_, s)| descending(score, s) == Ordering::Less) {
                    best = Some((k, score));
                }
            }
            let Some((k, _)) = best else { break };
            let at = (bases[k] + r * group + taken[k] * STRUCT_BYTES) as usize;
            let mut item = [0u8; STRUCT_BYTES as usize];
            item.copy_from_slice(&ub[at..at + STRUCT_BYTES as usize]);
            ub[out as usize..out as usize + STRUCT_BYTES as usize].copy_from_slice(&item);
            out += STRUCT_BYTES;
            taken[k] += 1;
            if exhausted_stop && (0..lists).any(|k| taken[k] >= lens[k]) {
                break;
            }
        }
    }
    let written = out - dst;
    let elems = written / STRUCT_BYTES;
    let result = taken
        .iter()
        .enumerate()
        .fold(0u64, |acc, (k, &t)| acc | ((t & 0xffff) << (16 * k)));
    let mut effect = VecEffect {
        repeats: written.div_ceil(super::lanes::REPEAT_BYTES) as u32,
        elems,
        reads: Vec::new(),
        writes: Vec::new(),
        result,
    };
    if src_low < src_high {
        effect.reads.push(ub_region(src_low, src_high));
    }
    if written > 0 {
        effect.writes.push(ub_region(dst, out));
    }
    Ok(effect)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::vec::lanes::tests::{blank_op, ub as view};

    const F: Dtype = Dtype::Float32;
    const H: Dtype = Dtype::Float16;

    fn new_ub() -> Vec<u8> {
        vec![0x77; 16384]
    }

    fn f(x: f32) -> u64 {
        u64::from(x.to_bits())
    }

    /// (score, index) of the structures at `at`.
    fn structs(ub: &[u8], at: u64, dtype: Dtype, n: u64) -> Vec<(f64, u64)> {
        (0..n)
            .map(|i| {
                let a = at + i * STRUCT_BYTES;
                (
                    score_at(ub, a, dtype),
                    numeric::load(ub, a as usize + 4, Dtype::Uint32),
                )
            })
            .collect()
    }

    fn sort32_op(dtype: Dtype, repeat: u32) -> AscVecOp {
        let mut op = blank_op();
        op.op = 100;
        op.dtype = dtype.abi_code();
        op.src_dtype = op.dtype;
        op.dst = view(0, op.dtype);
        op.src0 = view(4096, op.dtype);
        op.src1 = view(8192, Dtype::Uint32.abi_code());
        op.repeat = repeat;
        op
    }

    #[test]
    fn sort32_sorts_each_group_of_32_descending_and_keeps_ties_in_order() {
        // Scores 31, 30, ..., 0 then 0..32 with index = position; one tie
        // pair (positions 3 and 4 both 7.5).
        let mut ub = new_ub();
        let mut scores: Vec<f32> = (0..32).map(|i| (31 - i) as f32).collect();
        scores.extend((0..32).map(|i| i as f32));
        scores[3] = 7.5;
        scores[4] = 7.5;
        for (i, s) in scores.iter().enumerate() {
            numeric::store(&mut ub, 4096 + 4 * i, F, f(*s));
            numeric::store(&mut ub, 8192 + 4 * i, Dtype::Uint32, i as u64);
        }
        let effect = sort32(&mut ub, &sort32_op(F, 2)).unwrap();
        let got = structs(&ub, 0, F, 64);
        // Group 0: 31, 30, 29 (positions 0..3), then 26..8 ... the two
        // 7.5s after 8 (position 23), position 3 before position 4.
        assert_eq!(&got[..3], &[(31.0, 0), (30.0, 1), (29.0, 2)]);
        let tie: Vec<_> = got[..32].iter().filter(|s| s.0 == 7.5).collect();
        assert_eq!(tie, vec![&(7.5, 3), &(7.5, 4)]);
        assert!(got[..32].windows(2).all(|w| w[0].0 >= w[1].0));
        // Group 1 is sorted on its own: 31 (position 63) first.
        assert_eq!(got[32], (31.0, 63));
        assert_eq!(got[63], (0.0, 32));
        assert_eq!(effect.writes, vec![ub_region(0, 512)]);
        assert_eq!((effect.repeats, effect.elems), (2, 64));
    }

    #[test]
    fn sort32_with_half_scores_zeroes_the_reserved_bytes() {
        let mut ub = new_ub();
        for i in 0..32u64 {
            let h = half::f16::from_f64(i as f64 * 0.5).to_bits();
            numeric::store(&mut ub, 4096 + 2 * i as usize, H, u64::from(h));
            numeric::store(&mut ub, 8192 + 4 * i as usize, Dtype::Uint32, 100 + i);
        }
        sort32(&mut ub, &sort32_op(H, 1)).unwrap();
        assert_eq!(structs(&ub, 0, H, 1), vec![(15.5, 131)]);
        assert_eq!(&ub[2..4], &[0, 0]);
        // int32 scores are refused.
        assert!(sort32(&mut ub, &sort32_op(Dtype::Int32, 1)).is_err());
    }

    /// Writes a list of (score, index) float structures at `at`.
    fn put_list(ub: &mut [u8], at: u64, items: &[(f32, u64)]) {
        for (i, (s, idx)) in items.iter().enumerate() {
            store_struct(ub, at + i as u64 * STRUCT_BYTES, F, f(*s), *idx);
        }
    }

    fn mrg_op(
        bases: [u32; 4],
        lens: [u32; 4],
        valid: u32,
        exhausted: bool,
        repeat: u32,
    ) -> AscVecOp {
        let mut op = blank_op();
        op.op = 101;
        op.dtype = F.abi_code();
        op.src_dtype = op.dtype;
        op.dst = view(0, op.dtype);
        op.src0 = view(bases[0], op.dtype);
        op.src1 = view(bases[1], op.dtype);
        op.src2 = view(bases[2], op.dtype);
        op.p = [
            lens[0],
            lens[1],
            lens[2],
            lens[3],
            u32::from(exhausted),
            valid,
            bases[3],
            0,
        ];
        op.repeat = repeat;
        op
    }

    #[test]
    fn mrg_sort_merges_lists_earliest_list_first_on_ties() {
        let mut ub = new_ub();
        put_list(&mut ub, 4096, &[(9.0, 10), (5.0, 11), (1.0, 12)]);
        put_list(&mut ub, 4200, &[(8.0, 20), (5.0, 21)]);
        put_list(&mut ub, 4400, &[(7.0, 30)]);
        let effect = mrg_sort(
            &mut ub,
            &mrg_op([4096, 4200, 4400, 0], [3, 2, 1, 0], 0b111, false, 1),
        )
        .unwrap();
        assert_eq!(
            structs(&ub, 0, F, 6),
            vec![
                (9.0, 10),
                (8.0, 20),
                (7.0, 30),
                (5.0, 11),
                (5.0, 21),
                (1.0, 12)
            ]
        );
        assert_eq!(effect.result, 3 | (2 << 16) | (1 << 32));
        assert_eq!(effect.writes, vec![ub_region(0, 48)]);
        // Stop at the first exhausted list: list 3 (one structure) runs out
        // after 9, 8, 7.
        let mut ub2 = new_ub();
        ub2[4096..4600].copy_from_slice(&ub[4096..4600]);
        let effect = mrg_sort(
            &mut ub2,
            &mrg_op([4096, 4200, 4400, 0], [3, 2, 1, 0], 0b111, true, 1),
        )
        .unwrap();
        assert_eq!(
            structs(&ub2, 0, F, 3),
            vec![(9.0, 10), (8.0, 20), (7.0, 30)]
        );
        assert_eq!(effect.result, 1 | (1 << 16) | (1 << 32));
    }

    #[test]
    fn mrg_sort_repeats_only_over_four_equal_contiguous_lists() {
        // Two repeats of four contiguous lists of 1: each repeat merges its
        // own four.
        let mut ub = new_ub();
        let items: Vec<(f32, u64)> = [1.0, 4.0, 2.0, 3.0, 8.0, 5.0, 7.0, 6.0]
            .iter()
            .enumerate()
            .map(|(i, &s)| (s, i as u64))
            .collect();
        put_list(&mut ub, 4096, &items);
        mrg_sort(
            &mut ub,
            &mrg_op([4096, 4104, 4112, 4120], [1, 1, 1, 1], 0b1111, false, 2),
        )
        .unwrap();
        let scores: Vec<f64> = structs(&ub, 0, F, 8).iter().map(|s| s.0).collect();
        assert_eq!(scores, vec![4.0, 3.0, 2.0, 1.0, 8.0, 7.0, 6.0, 5.0]);
        // Bad validBit, an overlapping dst and an unaligned list fail.
        assert!(mrg_sort(
            &mut ub,
            &mrg_op([4096, 4104, 0, 0], [1, 1, 0, 0], 0b1, false, 1)
        )
        .is_err());
        assert!(mrg_sort(
            &mut ub,
            &mrg_op([0, 4104, 0, 0], [2, 1, 0, 0], 0b11, false, 1)
        )
        .is_err());
        assert!(mrg_sort(
            &mut ub,
            &mrg_op([4100, 4104, 0, 0], [1, 1, 0, 0], 0b11, false, 1)
        )
        .is_err());
    }
}
