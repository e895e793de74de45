//! The cube data path of Atlas A2 (guide 2.6; 6.2.3.1.1.5 ND2NZ, 6.2.3.2.1.2
//! LoadData, 6.2.3.2.2.1 Mmad, 6.2.3.2.1.12 Fixpipe; hardware-facts.md §D):
//!
//! - DataCopy with `Nd2NzParams` (MTE2): GM rows of `dValue` elements become
//!   32-byte C0 blocks in L1 (or UB), the last block of a row zero-padded;
//! - LoadData 2D (MTE1 from L1, MTE2 from GM): `repeatTimes` 512-byte
//!   fractals, each optionally transposed (16 x 16, 2-byte types only);
//! - Mmad (PIPE_M): C (L0C, NZ: 16 x 16 fractals, row-major inside,
//!   column-major between) = or += A (L0A, ZZ: 16 x C0 fractals, row-major
//!   inside and between) x B (L0B, ZN: C0 x 16 fractals, column-major
//!   inside, row-major between); f16/bf16 products are exact in f32 and
//!   accumulated in f32 in k order, f32 products rounded to f32, int8 in
//!   wrapping int32;
//! - Fixpipe (FIX): L0C to GM as ND (NZ2ND) or NZ, with ReLU and the
//!   f32 -> f16/bf16 conversions (round to nearest even).
//!
//! The layout functions ([`zz_index`], [`zn_index`], [`nz_index`]) are the
//! single definition of the fractal formats; the runtime and its tests use
//! them.

use super::block::Block;
use super::fault::Fault;
use crate::abi::{co2_layout, cube_op, quant, AscAddr, AscCubeOp, MEM_NONE};
use crate::numeric::half_to_f32;
use crate::trace::{DmaDir, InstrKind, Mem, MmadShape, Pipe};
use ascendopt_op::Dtype;

/// Bytes of one L0A/L0B fractal (16 rows of 32 bytes).
pub const FRACTAL_BYTES: u64 = 512;
/// Bytes of one C0 block (a fractal row of A or B).
pub const C0_BYTES: u64 = 32;
/// Rows (and C columns) of a fractal.
pub const FRACTAL_ROWS: usize = 16;

/// Elements of an A/B fractal row (C0) for elements of `size` bytes.
pub fn c0_of(size: usize) -> usize {
    C0_BYTES as usize / size.max(1)
}

/// Index of A\[i\]\[k\] in an L0A buffer in ZZ layout: fractals of 16 x C0,
/// row-major inside and between, `k_blocks` fractals per fractal row.
pub fn zz_index(i: usize, k: usize, k_blocks: usize, c0: usize) -> usize {
    zz_in(i, k, k_blocks, FRACTAL_ROWS, c0)
}

/// Index of B\[k\]\[j\] in an L0B buffer in ZN layout: fractals of C0 x 16,
/// column-major inside (C0 k-values of one column together), row-major
/// between, `n_blocks` fractals per fractal row.
pub fn zn_index(k: usize, j: usize, n_blocks: usize, c0: usize) -> usize {
    zn_in(k, j, n_blocks, FRACTAL_ROWS, c0)
}

/// Index of C\[i\]\[j\] in an L0C buffer in NZ layout: 16 x 16 fractals,
/// row-major inside, column-major between, `m_blocks` fractals per fractal
/// column.
pub fn nz_index(i: usize, j: usize, m_blocks: usize) -> usize {
    nz_in(i, j, m_blocks, FRACTAL_ROWS)
}

/// [`zz_index`] for fractals of `rows` x `c0`.
fn zz_in(i: usize, k: usize, k_blocks: usize, rows: usize, c0: usize) -> usize {
    ((i / rows) * k_blocks + k / c0) * rows * c0 + (i % rows) * c0 + k % c0
}

/// [`zn_index`] for fractals of `c0` x `cols`.
fn zn_in(k: usize, j: usize, n_blocks: usize, cols: usize, c0: usize) -> usize {
    ((k / c0) * n_blocks + j / cols) * c0 * cols + (j % cols) * c0 + k % c0
}

/// [`nz_index`] for fractals of `side` x `side`.
fn nz_in(i: usize, j: usize, m_blocks: usize, side: usize) -> usize {
    ((j / side) * m_blocks + i / side) * side * side + (i % side) * side + j % side
}

/// The element types of one Mmad (guide table 6-220, Atlas A2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MmadTypes {
    /// int8 x int8 -> int32.
    S8,
    /// half x half -> float.
    F16,
    /// bfloat16 x bfloat16 -> float.
    Bf16,
    /// float x float -> float.
    F32,
}

impl MmadTypes {
    /// The combination of (A, B, C), if Atlas A2 supports it.
    pub fn of(a: Dtype, b: Dtype, c: Dtype) -> Option<MmadTypes> {
        Some(match (a, b, c) {
            (Dtype::Int8, Dtype::Int8, Dtype::Int32) => MmadTypes::S8,
            (Dtype::Float16, Dtype::Float16, Dtype::Float32) => MmadTypes::F16,
            (Dtype::Bfloat16, Dtype::Bfloat16, Dtype::Float32) => MmadTypes::Bf16,
            (Dtype::Float32, Dtype::Float32, Dtype::Float32) => MmadTypes::F32,
            _ => return None,
        })
    }

    /// Bytes of one A/B element.
    pub fn in_size(self) -> usize {
        match self {
            MmadTypes::S8 => 1,
            MmadTypes::F16 | MmadTypes::Bf16 => 2,
            MmadTypes::F32 => 4,
        }
    }

    /// The A/B element type.
    pub fn in_dtype(self) -> Dtype {
        match self {
            MmadTypes::S8 => Dtype::Int8,
            MmadTypes::F16 => Dtype::Float16,
            MmadTypes::Bf16 => Dtype::Bfloat16,
            MmadTypes::F32 => Dtype::Float32,
        }
    }

    fn value(self, bytes: &[u8], index: usize) -> f32 {
        match self {
            MmadTypes::S8 => f32::from(bytes[index] as i8),
            MmadTypes::F16 => {
                half_to_f32(u16::from_le_bytes([bytes[2 * index], bytes[2 * index + 1]]))
            }
            MmadTypes::Bf16 => f32::from_bits(
                u32::from(u16::from_le_bytes([bytes[2 * index], bytes[2 * index + 1]])) << 16,
            ),
            MmadTypes::F32 => f32::from_le_bytes([
                bytes[4 * index],
                bytes[4 * index + 1],
                bytes[4 * index + 2],
                bytes[4 * index + 3],
            ]),
        }
    }
}

/// Where the sums of an Mmad start.
#[derive(Debug, Clone, Copy)]
pub enum CInit<'a> {
    /// From zero (cmatrixInitVal).
    Zero,
    /// From C's current value in L0C (accumulation).
    Keep,
    /// From a bias row (the bias table): element j of every row starts at
    /// `bias[j]` (4-byte float or int32, as C), 0 past its end.
    Bias(&'a [u8]),
}

/// One Mmad on plain byte images of L0A (`a`, ZZ), L0B (`b`, ZN) and L0C
/// (`c`, NZ, 4-byte elements): every element of the `ceil(m/16) x
/// ceil(n/16)` fractals of C is computed from exactly `k` products, added
/// to the start `init` gives.
pub fn mmad_compute(
    types: MmadTypes,
    a: &[u8],
    b: &[u8],
    c: &mut [u8],
    (m, n, k): (usize, usize, usize),
    init: CInit<'_>,
) {
    let c0 = c0_of(types.in_size());
    let m_blocks = m.div_ceil(FRACTAL_ROWS);
    let n_blocks = n.div_ceil(FRACTAL_ROWS);
    let k_blocks = k.div_ceil(c0);
    let (rows, cols) = (m_blocks * FRACTAL_ROWS, n_blocks * FRACTAL_ROWS);
    // A as rows x k and B as k x cols, both row-major: each row of C is
    // accumulated as acc[j] += a[i][kk] * b[kk][j] for kk in order, so every
    // element still sums its k products in k order (the same bits as a dot
    // product per element) while the loop over j vectorises.
    let mut am = vec![0f32; rows * k];
    for i in 0..rows {
        for kk in 0..k {
            am[i * k + kk] = types.value(a, zz_index(i, kk, k_blocks, c0));
        }
    }
    let mut bk = vec![0f32; k * cols];
    for kk in 0..k {
        for j in 0..cols {
            bk[kk * cols + j] = types.value(b, zn_index(kk, j, n_blocks, c0));
        }
    }
    let start = |c: &[u8], i: usize, j: usize| -> [u8; 4] {
        let at = 4 * nz_index(i, j, m_blocks);
        match init {
            CInit::Zero => [0; 4],
            CInit::Keep => [c[at], c[at + 1], c[at + 2], c[at + 3]],
            CInit::Bias(bias) => bias
                .get(4 * j..4 * j + 4)
                .map_or([0; 4], |v| [v[0], v[1], v[2], v[3]]),
        }
    };
    if types == MmadTypes::S8 {
        let mut acc = vec![0i32; cols];
        for i in 0..rows {
            for (j, x) in acc.iter_mut().enumerate() {
                *x = i32::from_le_bytes(start(c, i, j));
            }
            for kk in 0..k {
                let x = am[i * k + kk] as i32;
                for (o, y) in acc.iter_mut().zip(&bk[kk * cols..(kk + 1) * cols]) {
                    *o = o.wrapping_add(x.wrapping_mul(*y as i32));
                }
            }
            for (j, x) in acc.iter().enumerate() {
                let at = 4 * nz_index(i, j, m_blocks);
                c[at..at + 4].copy_from_slice(&x.to_le_bytes());
            }
        }
    } else {
        let mut acc = vec![0f32; cols];
        for i in 0..rows {
            for (j, x) in acc.iter_mut().enumerate() {
                *x = f32::from_le_bytes(start(c, i, j));
            }
            for kk in 0..k {
                let x = am[i * k + kk];
                for (o, y) in acc.iter_mut().zip(&bk[kk * cols..(kk + 1) * cols]) {
                    *o += x * y;
                }
            }
            for (j, x) in acc.iter().enumerate() {
                let at = 4 * nz_index(i, j, m_blocks);
                c[at..at + 4].copy_from_slice(&x.to_le_bytes());
            }
        }
    }
}

/// Transposes one 16 x 16 fractal of 2-byte elements.
pub fn transpose_fractal_b16(src: &[u8], dst: &mut [u8]) {
    for r in 0..16 {
        for col in 0..16 {
            let s = 2 * (r * 16 + col);
            let d = 2 * (col * 16 + r);
            dst[d] = src[s];
            dst[d + 1] = src[s + 1];
        }
    }
}

/// The source blocks a LoadData walks: `startIndex`, then `srcStride`
/// blocks up per repeat, or down with addrMode decreasing.
struct SourceWalk {
    start: u64,
    stride: u64,
    decreasing: bool,
}

impl SourceWalk {
    fn new(start: u32, stride: u32, decreasing: u32) -> SourceWalk {
        SourceWalk {
            start: u64::from(start),
            stride: u64::from(stride),
            decreasing: decreasing != 0,
        }
    }

    /// Block index of repeat `i`; None below the source.
    fn index(&self, i: u64) -> Option<u64> {
        let step = i * self.stride;
        if self.decreasing {
            self.start.checked_sub(step)
        } else {
            Some(self.start + step)
        }
    }

    /// The lowest and highest block `repeat` repeats touch; a decreasing
    /// walk that goes below the source is a fault.
    fn span(&self, api: &'static str, repeat: u64) -> Result<(u64, u64), Fault> {
        let first = self.index(0).unwrap_or(0);
        let last = self.index(repeat - 1).ok_or_else(|| Fault::InvalidArg {
            api,
            what: format!(
                "addrMode decreasing from startIndex {} by srcStride {} for {repeat} repeats goes below the source",
                self.start, self.stride
            ),
        })?;
        Ok((first.min(last), first.max(last)))
    }
}

/// The square matrix LoadDataWithTranspose transposes per repeat for
/// elements of `size` bytes (guide 6.2.3.2.1.5): its side and how many
/// 512-byte fractals it spans.
pub fn transpose_square(size: usize) -> Option<(usize, usize)> {
    match size {
        1 => Some((32, 2)),
        2 => Some((16, 1)),
        4 => Some((16, 2)),
        _ => None,
    }
}

/// One repeat of LoadDataWithTranspose on elements of `size` bytes: `src`
/// holds the square's fractals as they lie in L1, `dst` receives the
/// transposed fractals, fractal after fractal (the caller places them).
/// The square is read as the guide describes (6.2.3.2.1.5): for a 2-byte
/// type one 16 x 16 fractal; for a 4-byte type two 16 x 8 fractals side by
/// side (columns 0-7, then 8-15), transposed and split again into columns
/// 0-7 and 8-15; for a 1-byte type two 16 x 32 fractals one above the
/// other (rows 0-15, then 16-31), transposed and split into rows 0-15 and
/// 16-31. Each fractal is row-major.
pub fn transpose_square_bytes(size: usize, src: &[u8], dst: &mut [u8]) {
    let Some((side, fracs)) = transpose_square(size) else {
        return;
    };
    // (fractal, row, column) of the square's element (r, c) with
    // fractals of `fr` x `fc`, side by side or stacked.
    let (fr, fc) = (FRACTAL_ROWS, FRACTAL_BYTES as usize / FRACTAL_ROWS / size);
    let at = |r: usize, c: usize| -> usize {
        let (f, rr, cc) = if fracs == 1 {
            (0, r, c)
        } else if fc < side {
            (c / fc, r, c % fc)
        } else {
            (r / fr, r % fr, c)
        };
        size * (f * fr * fc + rr * fc + cc)
    };
    for r in 0..side {
        for c in 0..side {
            let (s, d) = (at(r, c), at(c, r));
            dst[d..d + size].copy_from_slice(&src[s..s + size]);
        }
    }
}

fn dtype_of(code: u8, api: &'static str, operand: &str) -> Result<Dtype, Fault> {
    Dtype::from_abi_code(code).ok_or_else(|| Fault::InvalidArg {
        api,
        what: format!("{operand} element type code {code}"),
    })
}

fn mem_of(a: &AscAddr, api: &'static str, operand: &str) -> Result<Mem, Fault> {
    if a.mem == MEM_NONE {
        return Err(Fault::InvalidArg {
            api,
            what: format!("no {operand} operand"),
        });
    }
    Mem::from_code(a.mem).ok_or_else(|| Fault::InvalidArg {
        api,
        what: format!("{operand} memory code {}", a.mem),
    })
}

/// Byte address of an operand: the host address for GM, else the on-chip
/// byte address.
fn base_of(a: &AscAddr, mem: Mem) -> u64 {
    if mem == Mem::Gm {
        a.gm as u64
    } else {
        u64::from(a.addr)
    }
}

fn check_align(operand: &'static str, mem: Mem, addr: u64, align: u64) -> Result<(), Fault> {
    if !addr.is_multiple_of(align) {
        return Err(Fault::Unaligned {
            operand,
            mem: mem.name(),
            addr,
            align,
        });
    }
    Ok(())
}

fn check_range(api: &'static str, name: &str, v: u32, lo: u32, hi: u32) -> Result<(), Fault> {
    if v < lo || v > hi {
        return Err(Fault::InvalidArg {
            api,
            what: format!("{name} = {v} outside {lo}..={hi}"),
        });
    }
    Ok(())
}

/// Alignment of an on-chip operand's start by memory (guide 6.2.1 table
/// 6-49: UB and L1 32 B, L0A/L0B 512 B; Fixpipe's L0C source 64 B).
fn local_align(mem: Mem) -> u64 {
    match mem {
        Mem::L0a | Mem::L0b => FRACTAL_BYTES,
        Mem::L0c => 64,
        _ => 32,
    }
}

impl Block {
    /// Executes one cube-path instruction.
    pub fn cube(&mut self, op: &AscCubeOp, loc: u32) -> Result<(), Fault> {
        match op.op {
            cube_op::ND2NZ => self.nd2nz(op, loc),
            cube_op::LOAD2D => self.load2d(op, loc),
            cube_op::MMAD => self.mmad(op, loc),
            cube_op::FIXPIPE => self.fixpipe(op, loc),
            cube_op::FILL => self.fill(op, loc),
            cube_op::LOAD2D_TRANSPOSE => self.load2d_transpose(op, loc),
            cube_op::LOAD3D_V2 => self.load3d_v2(op, loc),
            cube_op::LOAD3D_V1 => Err(Fault::Unsupported {
                api: "LoadData (Load3Dv1)",
                what: "LoadData3DParamsV1: Atlas A2 has no Load3Dv1 (guide table 6-168); use \
                       LoadData3DParamsV2"
                    .into(),
            }),
            code @ (cube_op::SET_FMATRIX
            | cube_op::SET_LOAD3D_PAD
            | cube_op::SET_LOAD3D_REPEAT
            | cube_op::SET_LOAD3D_BOUNDARY) => self.load3d_register(op, code),
            other => Err(Fault::Unsupported {
                api: "cube",
                what: format!("cube instruction code {other}"),
            }),
        }
    }

    /// DataCopy(LocalTensor, GlobalTensor, Nd2NzParams).
    fn nd2nz(&mut self, op: &AscCubeOp, loc: u32) -> Result<(), Fault> {
        let api = "DataCopy (Nd2NzParams)";
        let dtype = dtype_of(op.dtype, api, "dst")?;
        let size = dtype.size();
        if !matches!(size, 1 | 2 | 4) {
            return Err(Fault::Unsupported {
                api,
                what: format!("{dtype} (1-, 2- and 4-byte types on Atlas A2)"),
            });
        }
        let src_mem = mem_of(&op.src0, api, "src")?;
        let dst_mem = mem_of(&op.dst, api, "dst")?;
        let dir = match (src_mem, dst_mem) {
            (Mem::Gm, Mem::L1) => DmaDir::GmToL1,
            (Mem::Gm, Mem::Ub) => DmaDir::GmToUb,
            (s, d) => {
                return Err(Fault::Unsupported {
                    api,
                    what: format!(
                        "copies from {} to {} (GM -> A1/B1 (L1) or VECIN (UB))",
                        s.name(),
                        d.name()
                    ),
                })
            }
        };
        let [nd_num, n_value, d_value, src_nd, src_d, c0_stride, n_stride, dst_nd] =
            [0, 1, 2, 3, 4, 5, 6, 7].map(|i| op.p[i]);
        check_range(api, "ndNum", nd_num, 0, 4095)?;
        check_range(api, "nValue", n_value, 0, 16384)?;
        let dst_base = base_of(&op.dst, dst_mem);
        check_align("dst", dst_mem, dst_base, 32)?;
        let size = size as u64;
        let c0 = C0_BYTES / size;
        let d_blocks = u64::from(d_value).div_ceil(c0);
        let rows = u64::from(nd_num) * u64::from(n_value);
        let src_base = base_of(&op.src0, src_mem);
        if rows == 0 || d_value == 0 {
            return self.record(
                Pipe::Mte2,
                dma(dir, 0, 0, 0, 0, false, false),
                vec![],
                vec![],
                loc,
            );
        }
        check_range(api, "srcDValue", src_d, 1, 65535)?;
        if src_d < d_value && n_value > 1 {
            return Err(Fault::InvalidArg {
                api,
                what: format!(
                    "srcDValue = {src_d} is less than dValue = {d_value}: source rows overlap"
                ),
            });
        }
        check_range(api, "dstNzNStride", n_stride, 1, 16384)?;
        if d_blocks > 1 {
            check_range(api, "dstNzC0Stride", c0_stride, 1, 16384)?;
        }
        let (nd_num, n_value) = (u64::from(nd_num), u64::from(n_value));
        let d_bytes = u64::from(d_value) * size;
        let src_end = src_base
            + ((nd_num - 1) * u64::from(src_nd) + (n_value - 1) * u64::from(src_d)) * size
            + d_bytes;
        let dst_end = dst_base
            + (nd_num - 1) * u64::from(dst_nd) * size
            + (n_value - 1) * u64::from(n_stride) * C0_BYTES
            + (d_blocks - 1) * u64::from(c0_stride) * C0_BYTES
            + C0_BYTES;
        // A read past the source's allocation reads poison with a note, as
        // every GM read of a DMA (runtime/gm_read.rs).
        let src_region = self.source_region("src", Mem::Gm, (src_base, src_end), loc)?;
        let dst_region = self.region("dst", dst_mem, (dst_base, dst_end))?;
        let mut row = vec![0u8; (d_blocks * C0_BYTES) as usize];
        for nd in 0..nd_num {
            for r in 0..n_value {
                let src = src_base + (nd * u64::from(src_nd) + r * u64::from(src_d)) * size;
                self.read_source(&src_region, src, &mut row[..d_bytes as usize]);
                row[d_bytes as usize..].fill(0);
                let dst_row =
                    dst_base + nd * u64::from(dst_nd) * size + r * u64::from(n_stride) * C0_BYTES;
                for j in 0..d_blocks {
                    let at = dst_row + j * u64::from(c0_stride) * C0_BYTES;
                    let block = &row[(j * C0_BYTES) as usize..((j + 1) * C0_BYTES) as usize];
                    self.write_bytes(dst_mem, at, block, None)?;
                }
            }
        }
        self.record(
            Pipe::Mte2,
            dma(
                dir,
                rows * d_bytes,
                rows as u32,
                d_bytes,
                src_region.start,
                rows > 1 && (u64::from(src_d) != u64::from(d_value) || nd_num > 1),
                false,
            ),
            vec![src_region],
            vec![dst_region],
            loc,
        )
    }

    /// LoadData(dst, src, LoadData2DParams).
    fn load2d(&mut self, op: &AscCubeOp, loc: u32) -> Result<(), Fault> {
        let api = "LoadData";
        let dtype = dtype_of(op.dtype, api, "dst")?;
        let size = dtype.size();
        if !matches!(size, 1 | 2 | 4) {
            return Err(Fault::Unsupported {
                api,
                what: format!("{dtype} (1-, 2- and 4-byte types on Atlas A2)"),
            });
        }
        let src_mem = mem_of(&op.src0, api, "src")?;
        let dst_mem = mem_of(&op.dst, api, "dst")?;
        let (dir, pipe) = match (src_mem, dst_mem) {
            (Mem::L1, Mem::L0a | Mem::L0b) => (DmaDir::L1ToL0, Pipe::Mte1),
            (Mem::Gm, Mem::L1 | Mem::L0a | Mem::L0b) => (DmaDir::GmToL1, Pipe::Mte2),
            (s, d) => {
                return Err(Fault::Unsupported {
                    api,
                    what: format!(
                        "loads from {} to {} (A1 -> A2, B1 -> B2, GM -> A1/B1/A2/B2)",
                        s.name(),
                        d.name()
                    ),
                })
            }
        };
        let [start, repeat, stride, gap, transpose, decreasing] =
            [0, 1, 2, 3, 4, 5].map(|i| op.p[i]);
        let transpose = transpose != 0;
        if transpose && (src_mem != Mem::L1 || size != 2) {
            return Err(Fault::Unsupported {
                api,
                what: format!(
                    "ifTranspose with {dtype} from {} (only A1 -> A2 and B1 -> B2 of 2-byte types)",
                    src_mem.name()
                ),
            });
        }
        check_range(api, "repeatTimes", repeat, 0, 255)?;
        let dst_base = base_of(&op.dst, dst_mem);
        let src_base = base_of(&op.src0, src_mem);
        check_align("dst", dst_mem, dst_base, local_align(dst_mem))?;
        if src_mem != Mem::Gm {
            check_align("src", src_mem, src_base, local_align(src_mem))?;
        }
        if repeat == 0 {
            return self.record(
                pipe,
                dma(dir, 0, 0, 0, 0, false, false),
                vec![],
                vec![],
                loc,
            );
        }
        // Fractal i of the source, in 512 B units from src_base.
        let walk = SourceWalk::new(start, stride, decreasing);
        let repeat = u64::from(repeat);
        let (lo, hi) = walk.span(api, repeat)?;
        // From GM, a read past the allocation reads poison with a note
        // (runtime/gm_read.rs).
        let src_region = self.source_region(
            "src",
            src_mem,
            (
                src_base + lo * FRACTAL_BYTES,
                src_base + (hi + 1) * FRACTAL_BYTES,
            ),
            loc,
        )?;
        let dst_step = (1 + u64::from(gap)) * FRACTAL_BYTES;
        let dst_region = self.region(
            "dst",
            dst_mem,
            (dst_base, dst_base + (repeat - 1) * dst_step + FRACTAL_BYTES),
        )?;
        let mut frac = [0u8; FRACTAL_BYTES as usize];
        let mut out = [0u8; FRACTAL_BYTES as usize];
        for i in 0..repeat {
            let idx = walk.index(i).unwrap_or(0);
            self.read_source(&src_region, src_base + idx * FRACTAL_BYTES, &mut frac);
            let data = if transpose {
                transpose_fractal_b16(&frac, &mut out);
                &out
            } else {
                &frac
            };
            self.write_bytes(dst_mem, dst_base + i * dst_step, data, None)?;
        }
        let bytes = repeat * FRACTAL_BYTES;
        // MTE1 moves fractal after fractal at its path rate whatever the
        // strides: one burst. From GM every fractal is a burst.
        let (bursts, burst_bytes) = if src_mem == Mem::Gm {
            (repeat as u32, FRACTAL_BYTES)
        } else {
            (1, bytes)
        };
        self.record(
            pipe,
            dma(
                dir,
                bytes,
                bursts,
                burst_bytes,
                src_region.start,
                src_mem == Mem::Gm && stride != 1,
                false,
            ),
            vec![src_region],
            vec![dst_region],
            loc,
        )
    }

    /// LoadDataWithTranspose(dst, src, LoadData2dTransposeParams): A1 -> A2
    /// or B1 -> B2, one square per repeat ([`transpose_square_bytes`]).
    fn load2d_transpose(&mut self, op: &AscCubeOp, loc: u32) -> Result<(), Fault> {
        let api = "LoadDataWithTranspose";
        let dtype = dtype_of(op.dtype, api, "dst")?;
        let size = dtype.size();
        let Some((_, fracs)) = transpose_square(size) else {
            return Err(Fault::Unsupported {
                api,
                what: format!("{dtype} (1-, 2- and 4-byte types on Atlas A2)"),
            });
        };
        let src_mem = mem_of(&op.src0, api, "src")?;
        let dst_mem = mem_of(&op.dst, api, "dst")?;
        if !matches!((src_mem, dst_mem), (Mem::L1, Mem::L0a | Mem::L0b)) {
            return Err(Fault::Unsupported {
                api,
                what: format!(
                    "loads from {} to {} (A1 -> A2 and B1 -> B2 only)",
                    src_mem.name(),
                    dst_mem.name()
                ),
            });
        }
        let [start, repeat, stride, gap, frac_gap, decreasing] =
            [0, 1, 2, 3, 4, 5].map(|i| op.p[i]);
        check_range(api, "repeatTimes", repeat, 0, 255)?;
        let dst_base = base_of(&op.dst, dst_mem);
        let src_base = base_of(&op.src0, src_mem);
        check_align("dst", dst_mem, dst_base, FRACTAL_BYTES)?;
        check_align("src", src_mem, src_base, 32)?;
        if repeat == 0 {
            return self.record(
                Pipe::Mte1,
                dma(DmaDir::L1ToL0, 0, 0, 0, 0, false, false),
                vec![],
                vec![],
                loc,
            );
        }
        let square = fracs as u64 * FRACTAL_BYTES;
        let repeat = u64::from(repeat);
        // Square i of the source, in `square` units from src_base.
        let walk = SourceWalk::new(start, stride, decreasing);
        let (lo, hi) = walk.span(api, repeat)?;
        let src_region = self.region(
            "src",
            src_mem,
            (src_base + lo * square, src_base + (hi + 1) * square),
        )?;
        let dst_step = (1 + u64::from(gap)) * FRACTAL_BYTES;
        let second = (1 + u64::from(frac_gap)) * FRACTAL_BYTES;
        let span = if fracs == 2 {
            second + FRACTAL_BYTES
        } else {
            FRACTAL_BYTES
        };
        let dst_region = self.region(
            "dst",
            dst_mem,
            (dst_base, dst_base + (repeat - 1) * dst_step + span),
        )?;
        let mut sq = vec![0u8; square as usize];
        let mut out = vec![0u8; square as usize];
        let frac = FRACTAL_BYTES as usize;
        for i in 0..repeat {
            let idx = walk.index(i).unwrap_or(0);
            self.read_bytes(src_mem, src_base + idx * square, &mut sq);
            transpose_square_bytes(size, &sq, &mut out);
            let at = dst_base + i * dst_step;
            self.write_bytes(dst_mem, at, &out[..frac], None)?;
            if fracs == 2 {
                self.write_bytes(dst_mem, at + second, &out[frac..], None)?;
            }
        }
        // MTE1 moves the squares at its path rate: one burst, as LoadData.
        let bytes = repeat * square;
        self.record(
            Pipe::Mte1,
            dma(
                DmaDir::L1ToL0,
                bytes,
                1,
                bytes,
                src_region.start,
                false,
                false,
            ),
            vec![src_region],
            vec![dst_region],
            loc,
        )
    }

    /// Fill(dst, InitConstValueParams): on L1 blocks of 32 B, on L0A/L0B
    /// of 512 B. The guide names no pipe; we put L1 on MTE2 and L0 on MTE1
    /// (the pipes that write them) at the on-chip L1 -> L0 rates.
    fn fill(&mut self, op: &AscCubeOp, loc: u32) -> Result<(), Fault> {
        let api = "Fill";
        let dtype = dtype_of(op.dtype, api, "dst")?;
        if !matches!(dtype.size(), 2 | 4) {
            return Err(Fault::Unsupported {
                api,
                what: format!(
                    "{dtype} (half, int16, uint16, bfloat16, float, int32, uint32 on Atlas A2)"
                ),
            });
        }
        let mem = mem_of(&op.dst, api, "dst")?;
        let (block, pipe) = match mem {
            Mem::L1 => (C0_BYTES, Pipe::Mte2),
            Mem::L0a | Mem::L0b => (FRACTAL_BYTES, Pipe::Mte1),
            other => {
                return Err(Fault::Unsupported {
                    api,
                    what: format!("a destination in {} (A1/B1 or A2/B2)", other.name()),
                })
            }
        };
        let base = u64::from(op.dst.addr);
        check_align("dst", mem, base, block)?;
        let [repeat, blocks, gap] = [0, 1, 2].map(|i| u64::from(op.p[i]));
        if repeat == 0 || blocks == 0 {
            return self.record(
                pipe,
                dma(DmaDir::L1ToL0, 0, 0, 0, 0, false, false),
                vec![],
                vec![],
                loc,
            );
        }
        let step = (blocks + gap) * block;
        let len = blocks * block;
        let region = self.region("dst", mem, (base, base + (repeat - 1) * step + len))?;
        let size = dtype.size();
        let value = op.scalar.to_le_bytes();
        let pattern: Vec<u8> = value[..size]
            .iter()
            .copied()
            .cycle()
            .take(len as usize)
            .collect();
        for i in 0..repeat {
            self.write_bytes(mem, base + i * step, &pattern, None)?;
        }
        self.record(
            pipe,
            dma(
                DmaDir::L1ToL0,
                repeat * len,
                1,
                repeat * len,
                0,
                false,
                false,
            ),
            vec![],
            vec![region],
            loc,
        )
    }

    /// Mmad(dst, fm, filter[, bias], MmadParams).
    fn mmad(&mut self, op: &AscCubeOp, loc: u32) -> Result<(), Fault> {
        let api = "Mmad";
        let c_type = dtype_of(op.dtype, api, "dst")?;
        let a_type = dtype_of(op.src_dtype, api, "fm")?;
        let b_type = dtype_of(op.src1_dtype, api, "filter")?;
        let types = MmadTypes::of(a_type, b_type, c_type).ok_or_else(|| Fault::Unsupported {
            api,
            what: format!(
                "fm {a_type} x filter {b_type} -> dst {c_type} (Atlas A2: int8 x int8 -> int32, half x half -> float, \
                 bfloat16 x bfloat16 -> float, float x float -> float)"
            ),
        })?;
        for (operand, a, want, pos) in [
            ("dst", &op.dst, Mem::L0c, "CO1 (L0C)"),
            ("fm", &op.src0, Mem::L0a, "A2 (L0A)"),
            ("filter", &op.src1, Mem::L0b, "B2 (L0B)"),
        ] {
            let mem = mem_of(a, api, operand)?;
            if mem != want {
                return Err(Fault::InvalidArg {
                    api,
                    what: format!("{operand} is in {}, it must be in {pos}", mem.name()),
                });
            }
        }
        let bias_mem = if op.bias.mem == MEM_NONE {
            None
        } else {
            Some(mem_of(&op.bias, api, "bias")?)
        };
        if let Some(mem) = bias_mem {
            if mem != Mem::Bt {
                return Err(Fault::Unsupported {
                    api,
                    what: format!(
                        "a bias in {} (emulated: the bias table, position C2)",
                        mem.name()
                    ),
                });
            }
            let bias_type = dtype_of(op.bias_dtype, api, "bias")?;
            if bias_type != c_type {
                return Err(Fault::InvalidArg {
                    api,
                    what: format!("bias {bias_type} with dst {c_type} (the bias has dst's type)"),
                });
            }
        }
        let [m, n, k, init_val, source, unit_flag] = [0, 1, 2, 3, 4, 5].map(|i| op.p[i]);
        check_range(api, "m", m, 0, 4095)?;
        check_range(api, "n", n, 0, 4095)?;
        check_range(api, "k", k, 0, 4095)?;
        if init_val == 0 && source != 0 && bias_mem.is_none() {
            return Err(Fault::Unsupported {
                api,
                what:
                    "cmatrixSource = true (C initialised from the bias table C2, not emulated yet)"
                        .into(),
            });
        }
        // With a bias the sums start from it whatever cmatrixInitVal says
        // (guide table 6-217).
        let init = init_val != 0 || bias_mem.is_some();
        let c_base = u64::from(op.dst.addr);
        let a_base = u64::from(op.src0.addr);
        let b_base = u64::from(op.src1.addr);
        // dst: 256 elements (one C fractal); fm and filter: 512 B (guide
        // table 6-216).
        check_align("dst", Mem::L0c, c_base, 256 * 4)?;
        check_align("fm", Mem::L0a, a_base, FRACTAL_BYTES)?;
        check_align("filter", Mem::L0b, b_base, FRACTAL_BYTES)?;
        let (m, n, k) = (m as usize, n as usize, k as usize);
        let shape = MmadShape {
            m: m as u32,
            n: n as u32,
            k: k as u32,
            dtype: types.in_dtype(),
            unit_flag: unit_flag as u8,
            init,
        };
        if m == 0 || n == 0 || k == 0 {
            return self.record(Pipe::M, InstrKind::Mmad(shape), vec![], vec![], loc);
        }
        let c0 = c0_of(types.in_size());
        let m_blocks = m.div_ceil(FRACTAL_ROWS) as u64;
        let n_blocks = n.div_ceil(FRACTAL_ROWS) as u64;
        let k_blocks = k.div_ceil(c0) as u64;
        let a_len = m_blocks * k_blocks * FRACTAL_BYTES;
        let b_len = k_blocks * n_blocks * FRACTAL_BYTES;
        let c_len = m_blocks * n_blocks * 256 * 4;
        let a_region = self.region("fm", Mem::L0a, (a_base, a_base + a_len))?;
        let b_region = self.region("filter", Mem::L0b, (b_base, b_base + b_len))?;
        let c_region = self.region("dst", Mem::L0c, (c_base, c_base + c_len))?;
        let bias_region = match bias_mem {
            Some(mem) => {
                let base = u64::from(op.bias.addr);
                // The bias operand: 128 B aligned (guide table 6-216).
                check_align("bias", mem, base, 128)?;
                Some(self.region("bias", mem, (base, base + 4 * n as u64))?)
            }
            None => None,
        };
        let mut a = vec![0u8; a_len as usize];
        let mut b = vec![0u8; b_len as usize];
        let mut c = vec![0u8; c_len as usize];
        self.read_bytes(Mem::L0a, a_base, &mut a);
        self.read_bytes(Mem::L0b, b_base, &mut b);
        let mut bias = Vec::new();
        if let Some(r) = bias_region {
            bias.resize(r.len as usize, 0);
            self.read_bytes(Mem::Bt, r.start, &mut bias);
        }
        let start = if bias_region.is_some() {
            CInit::Bias(&bias)
        } else if init {
            CInit::Zero
        } else {
            self.read_bytes(Mem::L0c, c_base, &mut c);
            CInit::Keep
        };
        mmad_compute(types, &a, &b, &mut c, (m, n, k), start);
        self.write_bytes(Mem::L0c, c_base, &c, None)?;
        let mut reads = vec![a_region, b_region];
        if !init {
            reads.push(c_region);
        }
        reads.extend(bias_region);
        self.record(Pipe::M, InstrKind::Mmad(shape), reads, vec![c_region], loc)
    }

    /// Fixpipe(GlobalTensor, LocalTensor, FixpipeParamsV220).
    fn fixpipe(&mut self, op: &AscCubeOp, loc: u32) -> Result<(), Fault> {
        let api = "Fixpipe";
        let dst_type = dtype_of(op.dtype, api, "dst")?;
        let src_type = dtype_of(op.src_dtype, api, "src")?;
        let src_mem = mem_of(&op.src0, api, "src")?;
        let dst_mem = mem_of(&op.dst, api, "dst")?;
        if src_mem != Mem::L0c {
            return Err(Fault::InvalidArg {
                api,
                what: format!("src is in {}, it must be in CO1 (L0C)", src_mem.name()),
            });
        }
        if dst_mem != Mem::Gm {
            return Err(Fault::Unsupported {
                api,
                what: format!("a destination in {} (Atlas A2: CO1 -> GM)", dst_mem.name()),
            });
        }
        let [n_size, m_size, src_stride, dst_stride, quant_pre, nd_num, src_nd, dst_nd, relu, unit, layout, split] =
            op.p;
        // unitFlag 2 or 3 enables the fine-grained overlap with the Mmad
        // (table 6-197); 0 and other values leave it off.
        let out_dir = if matches!(unit, 2 | 3) {
            DmaDir::L0cOutUnit
        } else {
            DmaDir::L0cOut
        };
        if split != 0 {
            return Err(Fault::Unsupported {
                api,
                what: "isChannelSplit (not emulated yet)".into(),
            });
        }
        // (conversion, the L0C types it takes, the destination types it
        // makes, per-channel parameters) (guide table 6-197).
        use super::fixpipe_quant::{Conversion, QuantParam};
        let (conv, srcs, dsts, per_channel): (Conversion, &[Dtype], &[Dtype], bool) =
            match quant_pre {
                quant::NONE => (
                    Conversion::Keep,
                    &[src_type],
                    &[Dtype::Float32, Dtype::Int32],
                    false,
                ),
                quant::F322F16 => (
                    Conversion::ToHalf,
                    &[Dtype::Float32],
                    &[Dtype::Float16],
                    false,
                ),
                quant::F322BF16 => (
                    Conversion::ToBf16,
                    &[Dtype::Float32],
                    &[Dtype::Bfloat16],
                    false,
                ),
                quant::DEQF16 | quant::VDEQF16 => (
                    Conversion::DeqHalf,
                    &[Dtype::Int32],
                    &[Dtype::Float16],
                    quant_pre == quant::VDEQF16,
                ),
                quant::QF322B8_PRE | quant::VQF322B8_PRE => (
                    Conversion::Quant8,
                    &[Dtype::Float32],
                    &[Dtype::Int8, Dtype::Uint8],
                    quant_pre == quant::VQF322B8_PRE,
                ),
                quant::REQ8 | quant::VREQ8 => (
                    Conversion::Quant8,
                    &[Dtype::Int32],
                    &[Dtype::Int8, Dtype::Uint8],
                    quant_pre == quant::VREQ8,
                ),
                other => {
                    return Err(Fault::InvalidArg {
                        api,
                        what: format!("quantPre code {other} (not a QuantMode_t of Atlas A2)"),
                    })
                }
            };
        let fits = srcs.contains(&src_type)
            && dsts.contains(&dst_type)
            && (conv != Conversion::Keep || src_type == dst_type);
        if !fits {
            return Err(Fault::InvalidArg {
                api,
                what: format!(
                    "src {src_type} -> dst {dst_type} does not match quantPre code {quant_pre} \
                     (NoQuant: float -> float or int32 -> int32; F322F16: float -> half; F322BF16: \
                     float -> bfloat16; DEQF16/VDEQF16: int32 -> half; QF322B8_PRE/VQF322B8_PRE: \
                     float -> int8/uint8; REQ8/VREQ8: int32 -> int8/uint8)"
                ),
            });
        }
        let has_workspace = op.src1.mem != MEM_NONE;
        if per_channel != has_workspace {
            return Err(Fault::InvalidArg {
                api,
                what: if per_channel {
                    format!(
                        "quantPre code {quant_pre} quantises per channel: it takes the overload with \
                         a cbufWorkspace (LocalTensor<uint64_t> in A1)"
                    )
                } else {
                    format!(
                        "a cbufWorkspace with quantPre code {quant_pre}: only VDEQF16, VQF322B8_PRE \
                         and VREQ8 take one (guide table 6-196)"
                    )
                },
            });
        }
        let nd_layout = match layout {
            co2_layout::ROW_MAJOR => true,
            co2_layout::NZ => false,
            _ => {
                return Err(Fault::Unsupported {
                    api,
                    what: "CFG_COLUMN_MAJOR (NZ2DN is not on Atlas A2)".into(),
                })
            }
        };
        check_range(api, "nSize", n_size, 1, 4095)?;
        check_range(
            api,
            "mSize",
            m_size,
            1,
            if nd_layout { 8192 } else { 65535 },
        )?;
        if !nd_layout && n_size % 16 != 0 {
            return Err(Fault::InvalidArg {
                api,
                what: format!("nSize = {n_size} must be a multiple of 16 without NZ2ND"),
            });
        }
        if dst_stride == 0 {
            return Err(Fault::InvalidArg {
                api,
                what: "dstStride = 0 (it must not be 0)".into(),
            });
        }
        if !nd_layout && dst_type.size() == 1 {
            return Err(Fault::Unsupported {
                api,
                what: format!(
                    "an NZ destination of {dst_type} (the guide does not describe the 8-bit NZ \
                     output; use CFG_ROW_MAJOR)"
                ),
            });
        }
        let nd_num = if nd_layout { nd_num } else { 1 };
        // The quantisation parameters: deqScalar, or one per column from
        // the cbufWorkspace in A1 (the guide's hardware moves them through
        // the fixpipe buffer; we read them from L1 and charge no time).
        let mut params = vec![QuantParam::from_bits(op.scalar)];
        let mut param_region = None;
        if per_channel {
            let ws_mem = mem_of(&op.src1, api, "cbufWorkspace")?;
            if ws_mem != Mem::L1 {
                return Err(Fault::InvalidArg {
                    api,
                    what: format!(
                        "cbufWorkspace is in {}, it must be in A1 (L1)",
                        ws_mem.name()
                    ),
                });
            }
            let ws_base = u64::from(op.src1.addr);
            check_align("cbufWorkspace", Mem::L1, ws_base, 32)?;
            let region = self.region(
                "cbufWorkspace",
                Mem::L1,
                (ws_base, ws_base + 8 * u64::from(n_size)),
            )?;
            let mut raw = vec![0u8; region.len as usize];
            self.read_bytes(Mem::L1, ws_base, &mut raw);
            params = raw
                .chunks_exact(8)
                .map(|b| {
                    QuantParam::from_bits(u64::from_le_bytes([
                        b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
                    ]))
                })
                .collect();
            param_region = Some(region);
        }
        let src_base = u64::from(op.src0.addr);
        check_align("src", Mem::L0c, src_base, 64)?;
        let dst_base = op.dst.gm as u64;
        let dsize = dst_type.size() as u64;
        if nd_num == 0 {
            self.shared.note(
                "fixpipe-ndnum-0",
                "Fixpipe with ndNum = 0 does nothing (the hardware skips it with a warning)".into(),
            );
            return self.record(
                Pipe::Fix,
                dma(DmaDir::L0cOut, 0, 0, 0, 0, false, false),
                vec![],
                vec![],
                loc,
            );
        }
        let (m, n, nd) = (u64::from(m_size), u64::from(n_size), u64::from(nd_num));
        // L0C element index of (matrix, row, column): srcNdStride counts
        // 16 x 16 fractals, srcStride 16-element fractal rows.
        let src_elem = |t: u64, r: u64, c: u64| {
            t * u64::from(src_nd) * 256 + (c / 16) * u64::from(src_stride) * 16 + r * 16 + c % 16
        };
        let mut src_hi = 0;
        for t in [0, nd - 1] {
            for c in [0, n - 1] {
                src_hi = src_hi.max(src_elem(t, m - 1, c));
            }
        }
        let src_region = self.region("src", Mem::L0c, (src_base, src_base + (src_hi + 1) * 4))?;
        let dst_len = if nd_layout {
            ((nd - 1) * u64::from(dst_nd) + (m - 1) * u64::from(dst_stride) + n) * dsize
        } else {
            (n / 16 - 1) * u64::from(dst_stride) * C0_BYTES + m * 16 * dsize
        };
        let dst_region = self.region("dst", Mem::Gm, (dst_base, dst_base + dst_len))?;
        let mut l0c = vec![0u8; src_region.len as usize];
        self.read_bytes(Mem::L0c, src_base, &mut l0c);
        let value = |idx: u64| -> [u8; 4] {
            let at = (idx * 4) as usize;
            [l0c[at], l0c[at + 1], l0c[at + 2], l0c[at + 3]]
        };
        let relu = relu != 0;
        let convert = |raw: [u8; 4], column: u64, out: &mut Vec<u8>| {
            let param = params[if per_channel { column as usize } else { 0 }];
            super::fixpipe_quant::convert(conv, src_type, dst_type, raw, param, relu, out);
        };
        let atomic = self.atomic;
        let mut row = Vec::with_capacity((n.max(16) * dsize) as usize);
        let mut bursts = 0u32;
        let burst_bytes = if nd_layout {
            for t in 0..nd {
                for r in 0..m {
                    row.clear();
                    for c in 0..n {
                        convert(value(src_elem(t, r, c)), c, &mut row);
                    }
                    let at = dst_base + (t * u64::from(dst_nd) + r * u64::from(dst_stride)) * dsize;
                    self.write_bytes(Mem::Gm, at, &row, atomic)?;
                    bursts += 1;
                }
            }
            n * dsize
        } else {
            for j in 0..n / 16 {
                row.clear();
                for r in 0..m {
                    for c in 0..16 {
                        convert(value(src_elem(0, r, j * 16 + c)), j * 16 + c, &mut row);
                    }
                }
                let at = dst_base + j * u64::from(dst_stride) * C0_BYTES;
                self.write_bytes(Mem::Gm, at, &row, atomic)?;
                bursts += 1;
            }
            m * 16 * dsize
        };
        let strided = bursts > 1 && dst_region.len != u64::from(bursts) * burst_bytes;
        self.record(
            Pipe::Fix,
            dma(
                out_dir,
                nd * m * n * dsize,
                bursts,
                burst_bytes,
                dst_region.start,
                strided,
                atomic.is_some(),
            ),
            std::iter::once(src_region).chain(param_region).collect(),
            vec![dst_region],
            loc,
        )
    }
}

fn dma(
    dir: DmaDir,
    bytes: u64,
    bursts: u32,
    burst_bytes: u64,
    gm_offset: u64,
    gm_strided: bool,
    atomic: bool,
) -> InstrKind {
    InstrKind::Dma {
        dir,
        bytes,
        bursts,
        burst_bytes,
        gm_offset,
        gm_strided,
        atomic,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The real fractal sizes: the storage position of chosen elements of
    /// 32 x 32 matrices of 16-row fractals, by hand.
    #[test]
    fn fractal_layouts_follow_the_guide() {
        let c0 = 16;
        // ZZ: row 0 of fractal (0,0), then row 1 of it, ..., then fractal (0,1).
        assert_eq!(zz_index(0, 0, 2, c0), 0);
        assert_eq!(zz_index(0, 15, 2, c0), 15);
        assert_eq!(zz_index(1, 0, 2, c0), 16);
        assert_eq!(zz_index(0, 16, 2, c0), 256);
        assert_eq!(zz_index(16, 0, 2, c0), 512);
        assert_eq!(zz_index(17, 18, 2, c0), 512 + 256 + 16 + 2);
        // ZN: column 0 of fractal (0,0) (16 k-values), column 1, ...; then
        // fractal (0,1) along n; fractal (1,0) after a whole fractal row.
        assert_eq!(zn_index(0, 0, 2, c0), 0);
        assert_eq!(zn_index(1, 0, 2, c0), 1);
        assert_eq!(zn_index(0, 1, 2, c0), 16);
        assert_eq!(zn_index(0, 16, 2, c0), 256);
        assert_eq!(zn_index(16, 0, 2, c0), 512);
        // NZ: row-major inside; fractal (1,0) (rows 16..32) before (0,1).
        assert_eq!(nz_index(0, 1, 2), 1);
        assert_eq!(nz_index(1, 0, 2), 16);
        assert_eq!(nz_index(16, 0, 2), 256);
        assert_eq!(nz_index(0, 16, 2), 512);
        // int8 (c0 = 32) and float (c0 = 8) fractals are 512 bytes too.
        assert_eq!(zz_index(1, 0, 1, 32), 32);
        assert_eq!(zz_index(0, 8, 2, 8), 128);
        assert_eq!(zn_index(0, 1, 1, 32), 32);
        assert_eq!(zn_index(8, 0, 1, 8), 128);
    }

    /// The guide's own example (6.2.3.2.2.1): a 4 x 4 matrix 0..15 with
    /// 2 x 2 fractals is stored as A (ZZ) 0,1,4,5,2,3,6,7,8,9,12,13,10,11,
    /// 14,15; B (ZN) 0,4,1,5,2,6,3,7,8,12,9,13,10,14,11,15; C (NZ)
    /// 0,1,4,5,8,9,12,13,2,3,6,7,10,11,14,15. The same functions the
    /// runtime uses, at fractal size 2.
    #[test]
    fn the_guides_4x4_storage_orders() {
        let order = |index: &dyn Fn(usize, usize) -> usize| {
            let mut out = [0usize; 16];
            for r in 0..4 {
                for c in 0..4 {
                    out[index(r, c)] = r * 4 + c;
                }
            }
            out
        };
        assert_eq!(
            order(&|i, k| zz_in(i, k, 2, 2, 2)),
            [0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15]
        );
        assert_eq!(
            order(&|k, j| zn_in(k, j, 2, 2, 2)),
            [0, 4, 1, 5, 2, 6, 3, 7, 8, 12, 9, 13, 10, 14, 11, 15]
        );
        assert_eq!(
            order(&|i, j| nz_in(i, j, 2, 2)),
            [0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15]
        );
    }

    fn put_f16(buf: &mut [u8], index: usize, v: f32) {
        buf[2 * index..2 * index + 2].copy_from_slice(&half::f16::from_f32(v).to_le_bytes());
    }

    fn c_at(c: &[u8], i: usize, j: usize, m_blocks: usize) -> f32 {
        let at = 4 * nz_index(i, j, m_blocks);
        f32::from_le_bytes([c[at], c[at + 1], c[at + 2], c[at + 3]])
    }

    /// 16 x 16 x 32 in half: A[i][k] = i + 1 at k = i, 1 at k = 16 + i, 0
    /// elsewhere; B[k][j] = 16 k + j. By hand: C[i][j] = (i + 1) B[i][j] +
    /// B[16 + i][j].
    #[test]
    fn mmad_f16_accumulates_in_f32() {
        let (m, n, k) = (16, 16, 32);
        let mut a = vec![0u8; 16 * 32 * 2];
        let mut b = vec![0u8; 32 * 16 * 2];
        for i in 0..16 {
            put_f16(&mut a, zz_index(i, i, 2, 16), (i + 1) as f32);
            put_f16(&mut a, zz_index(i, 16 + i, 2, 16), 1.0);
        }
        for j in 0..16 {
            for kk in 0..32 {
                // B[k][j] = k * 16 + j, exact in half up to 2048.
                put_f16(&mut b, zn_index(kk, j, 1, 16), (kk * 16 + j) as f32);
            }
        }
        let mut c = vec![0xffu8; 16 * 16 * 4];
        mmad_compute(MmadTypes::F16, &a, &b, &mut c, (m, n, k), CInit::Zero);
        for i in 0..16 {
            for j in 0..16 {
                let want = (i + 1) as f32 * (i * 16 + j) as f32 + ((16 + i) * 16 + j) as f32;
                assert_eq!(c_at(&c, i, j, 1), want, "C[{i}][{j}]");
            }
        }
        // Accumulate: a second Mmad onto C doubles it.
        mmad_compute(MmadTypes::F16, &a, &b, &mut c, (m, n, k), CInit::Keep);
        assert_eq!(c_at(&c, 3, 5, 1), 2.0 * (4.0 * 53.0 + 309.0));
        // f16 products summed in f32, not in half: 2048 + 1 is kept.
        let mut a = vec![0u8; 16 * 16 * 2];
        let mut b = vec![0u8; 16 * 16 * 2];
        put_f16(&mut a, zz_index(0, 0, 1, 16), 2048.0);
        put_f16(&mut a, zz_index(0, 1, 1, 16), 1.0);
        put_f16(&mut b, zn_index(0, 0, 1, 16), 1.0);
        put_f16(&mut b, zn_index(1, 0, 1, 16), 1.0);
        let mut c = vec![0u8; 16 * 16 * 4];
        mmad_compute(MmadTypes::F16, &a, &b, &mut c, (1, 1, 2), CInit::Zero);
        assert_eq!(c_at(&c, 0, 0, 1), 2049.0);
    }

    /// Only `k` products enter a sum: garbage in the padded columns of A
    /// and rows of B past k changes nothing.
    #[test]
    fn mmad_sums_exactly_k_products() {
        let mut a = vec![0u8; 16 * 16 * 2];
        let mut b = vec![0u8; 16 * 16 * 2];
        for kk in 0..16 {
            put_f16(
                &mut a,
                zz_index(2, kk, 1, 16),
                if kk < 3 { 2.0 } else { f32::NAN },
            );
            put_f16(
                &mut b,
                zn_index(kk, 4, 1, 16),
                if kk < 3 { 5.0 } else { f32::INFINITY },
            );
        }
        let mut c = vec![0u8; 16 * 16 * 4];
        mmad_compute(MmadTypes::F16, &a, &b, &mut c, (16, 16, 3), CInit::Zero);
        assert_eq!(c_at(&c, 2, 4, 1), 30.0);
    }

    #[test]
    fn mmad_int8_and_f32_and_bf16() {
        // int8: 16 x 16 x 32, A[i][k] = -1 for every k, B[k][j] = j - 8:
        // C[i][j] = -32 * (j - 8).
        let mut a = vec![0u8; 16 * 32];
        let mut b = vec![0u8; 32 * 16];
        for i in 0..16 {
            for kk in 0..32 {
                a[zz_index(i, kk, 1, 32)] = (-1i8) as u8;
                b[zn_index(kk, i, 1, 32)] = (i as i8 - 8) as u8;
            }
        }
        let mut c = vec![0u8; 16 * 16 * 4];
        mmad_compute(MmadTypes::S8, &a, &b, &mut c, (16, 16, 32), CInit::Zero);
        let at = 4 * nz_index(7, 3, 1);
        assert_eq!(
            i32::from_le_bytes([c[at], c[at + 1], c[at + 2], c[at + 3]]),
            160
        );
        // float: 16 x 16 x 8 (one fractal each, c0 = 8), A = 0.5, B[k][j] = k.
        let mut a = vec![0u8; 512];
        let mut b = vec![0u8; 512];
        for i in 0..16 {
            for kk in 0..8 {
                let at = 4 * zz_index(i, kk, 1, 8);
                a[at..at + 4].copy_from_slice(&0.5f32.to_le_bytes());
                let at = 4 * zn_index(kk, i, 1, 8);
                b[at..at + 4].copy_from_slice(&(kk as f32).to_le_bytes());
            }
        }
        let mut c = vec![0u8; 16 * 16 * 4];
        mmad_compute(MmadTypes::F32, &a, &b, &mut c, (16, 16, 8), CInit::Zero);
        assert_eq!(c_at(&c, 9, 9, 1), 14.0);
        // bfloat16: 1.5 x 3 over k = 16 -> 72.
        let mut a = vec![0u8; 512];
        let mut b = vec![0u8; 512];
        for i in 0..16 {
            for kk in 0..16 {
                let at = 2 * zz_index(i, kk, 1, 16);
                a[at..at + 2].copy_from_slice(&half::bf16::from_f32(1.5).to_le_bytes());
                let at = 2 * zn_index(kk, i, 1, 16);
                b[at..at + 2].copy_from_slice(&half::bf16::from_f32(3.0).to_le_bytes());
            }
        }
        let mut c = vec![0u8; 16 * 16 * 4];
        mmad_compute(MmadTypes::Bf16, &a, &b, &mut c, (16, 16, 16), CInit::Zero);
        assert_eq!(c_at(&c, 0, 15, 1), 72.0);
    }

    #[test]
    fn transpose_square_of_floats_is_two_side_by_side_fractals() {
        // The guide's float example (6.2.3.2.1.5, 示例3): B [16 k, 16 n] in
        // L1 as two 16 x 8 fractals (n 0-7, n 8-15); after the transpose the
        // first fractal holds k 0-7 and the second k 8-15, each row one n.
        let mut src = vec![0u8; 1024];
        for k in 0..16 {
            for n in 0..16 {
                let at = 4 * ((n / 8) * 128 + k * 8 + n % 8);
                src[at..at + 4].copy_from_slice(&((100 * k + n) as f32).to_le_bytes());
            }
        }
        let mut dst = vec![0u8; 1024];
        transpose_square_bytes(4, &src, &mut dst);
        let at = |f: usize, r: usize, c: usize| {
            let i = 4 * (f * 128 + r * 8 + c);
            f32::from_le_bytes([dst[i], dst[i + 1], dst[i + 2], dst[i + 3]])
        };
        // Fractal 0, row n = 3, column k = 5: B[5][3].
        assert_eq!(at(0, 3, 5), 503.0);
        // Fractal 1, row n = 12, column k - 8 = 7: B[15][12].
        assert_eq!(at(1, 12, 7), 1512.0);
        // That is the ZN layout of L0B: k of one column together.
        assert_eq!(at(1, 0, 0), 800.0);
    }

    #[test]
    fn transpose_square_of_int8_is_two_stacked_fractals() {
        // Two 16 x 32 fractals (rows 0-15, 16-31) form a 32 x 32 square;
        // element (r, c) = r * 32 + c mod 256 goes to (c, r).
        let src: Vec<u8> = (0..1024usize).map(|i| (i % 251) as u8).collect();
        let mut dst = vec![0u8; 1024];
        transpose_square_bytes(1, &src, &mut dst);
        // (r, c) = (20, 3) -> (3, 20): fractal 0, row 3, column 20.
        assert_eq!(dst[3 * 32 + 20], ((20 * 32 + 3) % 251) as u8);
        // (r, c) = (2, 30) -> (30, 2): fractal 1, row 14, column 2.
        assert_eq!(dst[512 + 14 * 32 + 2], (2 * 32 + 30) as u8);
    }

    #[test]
    fn transpose_square_of_halves_is_the_fractal_transpose() {
        let src: Vec<u8> = (0..256u16).flat_map(|v| v.to_le_bytes()).collect();
        let mut a = vec![0u8; 512];
        let mut b = vec![0u8; 512];
        transpose_square_bytes(2, &src, &mut a);
        transpose_fractal_b16(&src, &mut b);
        assert_eq!(a, b);
        assert_eq!(transpose_square(8), None);
    }

    #[test]
    fn transpose_of_a_b16_fractal() {
        let src: Vec<u8> = (0..256u16).flat_map(|v| v.to_le_bytes()).collect();
        let mut dst = vec![0u8; 512];
        transpose_fractal_b16(&src, &mut dst);
        let at = |r: usize, c: usize| {
            u16::from_le_bytes([dst[2 * (r * 16 + c)], dst[2 * (r * 16 + c) + 1]])
        };
        assert_eq!(at(0, 1), 16);
        assert_eq!(at(1, 0), 1);
        assert_eq!(at(15, 14), 14 * 16 + 15);
    }

    #[test]
    fn supported_type_combinations() {
        assert_eq!(
            MmadTypes::of(Dtype::Float16, Dtype::Float16, Dtype::Float32),
            Some(MmadTypes::F16)
        );
        assert_eq!(
            MmadTypes::of(Dtype::Float16, Dtype::Float16, Dtype::Float16),
            None
        );
        assert_eq!(
            MmadTypes::of(Dtype::Int8, Dtype::Int8, Dtype::Int32),
            Some(MmadTypes::S8)
        );
        assert_eq!(MmadTypes::of(Dtype::Uint8, Dtype::Int8, Dtype::Int32), None);
    }
}
