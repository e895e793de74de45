//! TransDataTo5HD: the 16-block transposition behind NCHW -> NC1HWC0
//! conversions and small matrix transposes.
//!
//! Semantics (guide 6.2.3.3.7.2): an instruction names 16 source and 16
//! destination data blocks (32-byte aligned UB addresses, handed over as a
//! table: `p[0]` and `p[1]` hold the low and high halves of the host
//! address of `uint64_t table[32]`, the 16 destinations first). A repeat:
//! - 16-bit elements (16 per block): pass `j` (0..16) takes element `j` of
//!   each of the 16 source blocks, in order, and writes them as destination
//!   block `j`;
//! - 32-bit elements (8 per block): pass `j` (0..8) takes element `j` of
//!   each source block, 16 elements, written as destination blocks `2j`
//!   and `2j + 1`;
//! - 8-bit elements (32 per block): pass `j` (0..16) takes element `j` of
//!   each source block, or element `16 + j` when srcHighHalf (`p[3]`), and
//!   writes the 16 bytes into the low half of destination block `j`, or its
//!   high half when dstHighHalf (`p[2]`).
//!
//! Repeat `r` moves every block by `r * repStride` blocks (dst_rep,
//! src0_rep); with a single repeat the blocks move by one repStride (the
//! guide: "当repeatTimes为1时，...有效起始位置为...起始位置加上dstRepStride/srcRepStride").
//! 0..=255 repeats. All sources are read before anything is written.

use ascendopt_op::Dtype;

use crate::abi::AscVecOp;
use crate::numeric;
use crate::runtime::fault::Fault;
use crate::trace::Mem;

use super::compare::dtype_of;
use super::lanes::{check_range, ub_region, BLOCK_BYTES, MAX_REPEAT};
use super::VecEffect;

/// Blocks per list.
const LIST: usize = 16;

/// Executes TransDataTo5HD; `table` is the 16 destination then 16 source
/// block addresses.
pub fn trans_data_to_5hd(
    ub: &mut [u8],
    op: &AscVecOp,
    table: &[u64; 32],
) -> Result<VecEffect, Fault> {
    let api = "TransDataTo5HD";
    let dtype = dtype_of(api, op.dtype, "element")?;
    let size = dtype.size() as u64;
    if !matches!(size, 1 | 2 | 4) || matches!(dtype, Dtype::Bool) {
        return Err(Fault::Unsupported {
            api,
            what: format!("{dtype} elements (8-, 16- or 32-bit)"),
        });
    }
    if op.repeat > MAX_REPEAT {
        return Err(Fault::InvalidArg {
            api,
            what: format!("repeatTimes {} is above {MAX_REPEAT}", op.repeat),
        });
    }
    for (i, &addr) in table.iter().enumerate() {
        if !addr.is_multiple_of(BLOCK_BYTES) {
            return Err(Fault::Unaligned {
                operand: if i < LIST { "dstList" } else { "srcList" },
                mem: Mem::Ub.name(),
                addr,
                align: BLOCK_BYTES,
            });
        }
    }
    let (dst_high, src_high) = (op.p[2] != 0, op.p[3] != 0);
    let per_block = BLOCK_BYTES / size;
    let offset = |r: u32, stride: u32| -> u64 {
        let steps = if op.repeat == 1 { 1 } else { u64::from(r) };
        steps * u64::from(stride) * BLOCK_BYTES
    };
    let (mut src_low, mut src_high_addr) = (u64::MAX, 0u64);
    let (mut dst_low, mut dst_high_addr) = (u64::MAX, 0u64);
    let mut writes: Vec<(u64, u64)> = Vec::new();
    for r in 0..op.repeat {
        let s_off = offset(r, op.src0_rep);
        let d_off = offset(r, op.dst_rep);
        let src: Vec<u64> = table[LIST..].iter().map(|a| a + s_off).collect();
        let dst: Vec<u64> = table[..LIST].iter().map(|a| a + d_off).collect();
        for &a in &src {
            check_range("srcList", a, a + BLOCK_BYTES, ub.len())?;
            src_low = src_low.min(a);
            src_high_addr = src_high_addr.max(a + BLOCK_BYTES);
        }
        for &a in &dst {
            check_range("dstList", a, a + BLOCK_BYTES, ub.len())?;
            dst_low = dst_low.min(a);
            dst_high_addr = dst_high_addr.max(a + BLOCK_BYTES);
        }
        let load =
            |ub: &[u8], block: u64, j: u64| numeric::load(ub, (block + j * size) as usize, dtype);
        match size {
            2 => {
                for j in 0..per_block {
                    for (b, &s) in src.iter().enumerate() {
                        writes.push((dst[j as usize] + b as u64 * size, load(ub, s, j)));
                    }
                }
            }
            4 => {
                for j in 0..per_block {
                    for (b, &s) in src.iter().enumerate() {
                        let block = dst[2 * j as usize + b / 8];
                        writes.push((block + (b as u64 % 8) * size, load(ub, s, j)));
                    }
                }
            }
            _ => {
                for j in 0..LIST as u64 {
                    let from = if src_high { 16 + j } else { j };
                    let half = if dst_high { 16 } else { 0 };
                    for (b, &s) in src.iter().enumerate() {
                        writes.push((dst[j as usize] + half + b as u64, load(ub, s, from)));
                    }
                }
            }
        }
    }
    for (addr, bits) in &writes {
        numeric::store(ub, *addr as usize, dtype, *bits);
    }
    let mut effect = VecEffect {
        repeats: op.repeat,
        elems: writes.len() as u64,
        reads: Vec::new(),
        writes: Vec::new(),
        result: 0,
    };
    if !writes.is_empty() {
        effect.reads.push(ub_region(src_low, src_high_addr));
        effect.writes.push(ub_region(dst_low, dst_high_addr));
    }
    Ok(effect)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::vec::lanes::tests::blank_op;

    fn op(dtype: Dtype, repeat: u32, rep: u32) -> AscVecOp {
        let mut op = blank_op();
        op.op = 66;
        op.dtype = dtype.abi_code();
        op.repeat = repeat;
        op.dst_rep = rep;
        op.src0_rep = rep;
        op
    }

    /// Destination blocks from 0, source blocks from 1024, 32 bytes apart.
    fn table() -> [u64; 32] {
        let mut t = [0u64; 32];
        for i in 0..16 {
            t[i] = 32 * i as u64;
            t[16 + i] = 1024 + 32 * i as u64;
        }
        t
    }

    #[test]
    fn half_blocks_transpose_a_16_by_16_matrix() {
        // src[k] = k for 256 halves: the guide's example, dst row j is
        // j, 16 + j, 32 + j, ...
        let mut ub = vec![0u8; 4096];
        for k in 0..256u64 {
            let h = u64::from(half::f16::from_f64(k as f64).to_bits());
            numeric::store(&mut ub, 1024 + 2 * k as usize, Dtype::Float16, h);
        }
        let effect = trans_data_to_5hd(&mut ub, &op(Dtype::Float16, 1, 0), &table()).unwrap();
        for j in 0..16u64 {
            for b in 0..16u64 {
                let bits = numeric::load(&ub, (32 * j + 2 * b) as usize, Dtype::Float16);
                let v = numeric::float_value(Dtype::Float16, bits).unwrap();
                assert_eq!(v, (16 * b + j) as f64, "dst[{j}][{b}]");
            }
        }
        assert_eq!(effect.writes, vec![ub_region(0, 512)]);
        assert_eq!(effect.reads, vec![ub_region(1024, 1536)]);
    }

    #[test]
    fn float_blocks_fill_two_destination_blocks_per_pass() {
        let mut ub = vec![0u8; 4096];
        for k in 0..128u64 {
            numeric::store(&mut ub, 1024 + 4 * k as usize, Dtype::Int32, k);
        }
        trans_data_to_5hd(&mut ub, &op(Dtype::Int32, 1, 0), &table()).unwrap();
        // Pass j: element j of source blocks 0..8 into dst block 2j, of
        // blocks 8..16 into dst block 2j + 1.
        for j in 0..8u64 {
            for b in 0..16u64 {
                let at = 32 * (2 * j + b / 8) + 4 * (b % 8);
                assert_eq!(numeric::load(&ub, at as usize, Dtype::Int32), 8 * b + j);
            }
        }
    }

    #[test]
    fn int8_halves_and_repeat_strides() {
        // Source block b holds b * 32 + i; take the high halves into the
        // high halves, over 2 repeats 16 blocks apart.
        let mut ub = vec![0u8; 8192];
        for k in 0..2048usize {
            ub[1024 + k] = (k % 256) as u8;
        }
        let mut o = op(Dtype::Uint8, 2, 16);
        o.p[2] = 1;
        o.p[3] = 1;
        trans_data_to_5hd(&mut ub, &o, &table()).unwrap();
        for r in 0..2usize {
            for j in 0..16usize {
                for b in 0..16usize {
                    let got = ub[512 * r + 32 * j + 16 + b];
                    let want = ((512 * r + 32 * b + 16 + j) % 256) as u8;
                    assert_eq!(got, want, "repeat {r} dst {j} byte {b}");
                }
                assert_eq!(ub[512 * r + 32 * j], 0, "low half untouched");
            }
        }
        // One repeat moves the blocks by one stride.
        let mut ub2 = vec![0u8; 8192];
        ub2[1024 + 512..1024 + 1024].fill(9);
        let mut one = op(Dtype::Uint8, 1, 16);
        one.p[2] = 0;
        trans_data_to_5hd(&mut ub2, &one, &table()).unwrap();
        assert_eq!(ub2[512], 9);
        assert_eq!(ub2[0], 0);
        // Unaligned blocks fail.
        let mut bad = table();
        bad[3] += 2;
        assert!(trans_data_to_5hd(&mut ub2, &one, &bad).is_err());
    }
}
