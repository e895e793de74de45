//! Load3D (img2col) from L1 to L0A/L0B on Atlas A2, written from the guide
//! (6.2.3.2.1.4 Load3D with LoadData3DParamsV2, tables 6-168 and 6-171;
//! 6.2.3.2.1.7 SetFmatrix; 6.2.3.2.1.9-11 SetLoadDataBoundary,
//! SetLoadDataRepeat, SetLoadDataPaddingValue).
//!
//! Our reading of the guide, where its figures (not in our copy) or its
//! text leave a choice:
//!
//! - the feature map in A1/B1 is `C1 x l1H x l1W x C0` (NC1HWC0 of one
//!   image, "Load3d 数据格式说明": C0 = 32 bytes of the type, C1 =
//!   channelSize / C0), starting at the source operand;
//! - the img2col matrix has one row per output position and one column per
//!   (channel, kernel point): row m is output (ho, wo) = (m / Wo, m % Wo)
//!   with Wo = (l1W + padLeft + padRight - dilationW (filterW - 1) - 1) /
//!   strideW + 1; column k is (c1, kh, kw, c0) with c0 fastest (the guide's
//!   example moves the Ci channels of kernel point 00, then those of 01,
//!   ..., so a row holds Hk * Wk * Ci values; C1 outermost as in the
//!   FRACTAL_Z weights it multiplies);
//! - element (m, k) is the feature map at h = ho strideH - padTop + kh
//!   dilationH, w = wo strideW - padLeft + kw dilationW, or padValue where
//!   (h, w) lies outside the map;
//! - the destination is the window of mExtension rows from mStartPt and
//!   kExtension columns from kStartPt of that matrix, as whole fractals:
//!   in A2 ZZ (16 x C0
//!   fractals, row-major inside and between, the layout Mmad reads), in B2
//!   ZN (the window as the k x n matrix B with n = m), with enTranspose (A2,
//!   half) the window's transpose in ZZ; fractal positions past the window
//!   are written as zero;
//! - channelSize must be a multiple of C0: the small-channel forms the
//!   guide allows (4, 8, N * 16 + 4, ...) pack channels whose layout its
//!   figures show and our copy lacks, so they are refused as unsupported;
//! - `isSetFMatrix` / `isSetPadding` (IsResetLoad3dConfig) write the call's
//!   l1H, l1W, padList / padValue into the registers SetFmatrix /
//!   SetLoadDataPaddingValue set, which the call then uses; with them false
//!   the registers' values are used;
//! - SetLoadDataRepeat with repeatTime > 1 and SetLoadDataBoundary with a
//!   boundary are refused as unsupported (the guide does not say how the
//!   destination advances between repeats); Load3Dv1 is not on Atlas A2
//!   (table 6-168) and is refused.
//!
//! The register-setting calls record no instruction (they write special
//! registers from the scalar unit, which the model does not time).

use super::block::Block;
use super::cube::{zn_index, zz_index, C0_BYTES, FRACTAL_BYTES, FRACTAL_ROWS};
use super::fault::Fault;
use crate::abi::{load3d_flag, AscCubeOp, MEM_NONE};
use crate::trace::{DmaDir, InstrKind, Mem, Pipe};
use ascendopt_op::Dtype;

/// The feature-map registers (SetFmatrix): height, width, padding
/// [left, right, top, bottom].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Fmatrix {
    /// l1H.
    pub h: u32,
    /// l1W.
    pub w: u32,
    /// padList: left, right, top, bottom.
    pub pad: [u32; 4],
}

impl Fmatrix {
    fn from_abi(hw: u32, pads: u32) -> Fmatrix {
        Fmatrix {
            h: hw & 0xffff,
            w: hw >> 16,
            pad: [0, 8, 16, 24].map(|s| (pads >> s) & 0xff),
        }
    }
}

/// The Load3D registers of one core.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Load3dRegs {
    /// Feature-map registers, left (index 0) and right (1).
    pub fmatrix: [Option<Fmatrix>; 2],
    /// Padding value as raw bits.
    pub pad_bits: u64,
    /// SetLoadDataRepeat: repeatStride, repeatTime, repeatMode.
    pub repeat: (u32, u32, u32),
    /// SetLoadDataBoundary.
    pub boundary: u32,
}

impl Default for Load3dRegs {
    fn default() -> Load3dRegs {
        Load3dRegs {
            fmatrix: [None, None],
            pad_bits: 0,
            // The guide's defaults (table 6-193): repeatTime 1.
            repeat: (0, 1, 0),
            boundary: 0,
        }
    }
}

/// The geometry of one img2col: the feature map (C1 x H x W x C0) and the
/// sliding window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Img2Col {
    /// Feature map height and width.
    pub h: u64,
    /// Width.
    pub w: u64,
    /// Channel blocks (channelSize / C0).
    pub c1: u64,
    /// Channels per block (32 bytes of the type).
    pub c0: u64,
    /// Padding: left, right, top, bottom.
    pub pad: [u64; 4],
    /// strideW, strideH.
    pub stride: (u64, u64),
    /// filterW, filterH (kernel width and height).
    pub filter: (u64, u64),
    /// dilationFilterW, dilationFilterH.
    pub dilation: (u64, u64),
}

impl Img2Col {
    /// Output width Wo; None when the dilated kernel is wider than the
    /// padded map.
    pub fn out_w(&self) -> Option<u64> {
        let span = self.dilation.0 * (self.filter.0 - 1) + 1;
        let padded = self.w + self.pad[0] + self.pad[1];
        (padded >= span).then(|| (padded - span) / self.stride.0 + 1)
    }

    /// Output height Ho; None when the dilated kernel is taller than the
    /// padded map.
    pub fn out_h(&self) -> Option<u64> {
        let span = self.dilation.1 * (self.filter.1 - 1) + 1;
        let padded = self.h + self.pad[2] + self.pad[3];
        (padded >= span).then(|| (padded - span) / self.stride.1 + 1)
    }

    /// Columns of the img2col matrix: C1 x Kh x Kw x C0.
    pub fn width(&self) -> u64 {
        self.c1 * self.filter.0 * self.filter.1 * self.c0
    }

    /// Elements of the feature map.
    pub fn fmap_len(&self) -> u64 {
        self.c1 * self.h * self.w * self.c0
    }

    /// Element index in the feature map of img2col element (m, k) for an
    /// output width `wo`, or None where the window lies on the padding.
    /// `k` must be below [`Img2Col::width`].
    pub fn source(&self, wo: u64, m: u64, k: u64) -> Option<u64> {
        let c0 = k % self.c0;
        let point = k / self.c0;
        let kw = point % self.filter.0;
        let kh = (point / self.filter.0) % self.filter.1;
        let c1 = point / (self.filter.0 * self.filter.1);
        let (oh, ow) = (m / wo, m % wo);
        let h = (oh * self.stride.1 + kh * self.dilation.1).checked_sub(self.pad[2])?;
        let w = (ow * self.stride.0 + kw * self.dilation.0).checked_sub(self.pad[0])?;
        (h < self.h && w < self.w).then(|| ((c1 * self.h + h) * self.w + w) * self.c0 + c0)
    }
}

/// Where the img2col window goes in L0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Img2ColDst {
    /// L0A, ZZ.
    A,
    /// L0A, ZZ of the window's transpose (enTranspose).
    ATransposed,
    /// L0B, ZN with n = m.
    B,
}

/// The destination image of one Load3Dv2: the window of `rows` x `cols`
/// img2col elements from (`m0`, `k0`) as whole fractals of `size`-byte
/// elements, zero past the window. `fmap` holds the feature map, `pad`
/// the padding value's bytes.
pub fn img2col_image(
    g: &Img2Col,
    fmap: &[u8],
    pad: &[u8],
    size: usize,
    (m0, rows): (u64, u64),
    (k0, cols): (u64, u64),
    dst: Img2ColDst,
) -> Vec<u8> {
    let c0 = g.c0 as usize;
    let m_blocks = (rows as usize).div_ceil(FRACTAL_ROWS);
    let k_blocks = (cols as usize).div_ceil(c0);
    let mut out = vec![0u8; m_blocks * k_blocks * FRACTAL_BYTES as usize];
    let Some(wo) = g.out_w() else {
        return out;
    };
    for r in 0..rows as usize {
        for c in 0..cols as usize {
            let index = match dst {
                Img2ColDst::A => zz_index(r, c, k_blocks, c0),
                // Half only: 16 x 16 fractals of the k x m transpose.
                Img2ColDst::ATransposed => zz_index(c, r, m_blocks, c0),
                Img2ColDst::B => zn_index(c, r, m_blocks, c0),
            };
            let value = match g.source(wo, m0 + r as u64, k0 + c as u64) {
                Some(at) => &fmap[at as usize * size..(at as usize + 1) * size],
                None => pad,
            };
            out[index * size..(index + 1) * size].copy_from_slice(value);
        }
    }
    out
}

fn range(api: &'static str, name: &str, v: u32, lo: u32, hi: u32) -> Result<(), Fault> {
    if v < lo || v > hi {
        return Err(Fault::InvalidArg {
            api,
            what: format!("{name} = {v} outside {lo}..={hi}"),
        });
    }
    Ok(())
}

impl Block {
    /// SetFmatrix, SetLoadDataPaddingValue, SetLoadDataRepeat,
    /// SetLoadDataBoundary: writes the register, records nothing.
    pub(super) fn load3d_register(&mut self, op: &AscCubeOp, code: u32) -> Result<(), Fault> {
        use crate::abi::cube_op;
        match code {
            cube_op::SET_FMATRIX => {
                let side = usize::from(op.p[2] != 0);
                self.load3d.fmatrix[side] = Some(Fmatrix::from_abi(op.p[0], op.p[1]));
            }
            cube_op::SET_LOAD3D_PAD => self.load3d.pad_bits = op.scalar,
            cube_op::SET_LOAD3D_REPEAT => {
                range("SetLoadDataRepeat", "repeatTime", op.p[1], 0, 255)?;
                range("SetLoadDataRepeat", "repeatMode", op.p[2], 0, 1)?;
                self.load3d.repeat = (op.p[0], op.p[1], op.p[2]);
            }
            _ => {
                let v = op.p[0];
                if v != 0 && v < 1024 {
                    return Err(Fault::InvalidArg {
                        api: "SetLoadDataBoundary",
                        what: format!(
                            "boundaryValue = {v}: at least 1024 bytes for Load3Dv2, or 0 for none"
                        ),
                    });
                }
                self.load3d.boundary = v;
            }
        }
        Ok(())
    }

    /// LoadData(dst, src, LoadData3DParamsV2): img2col, A1 -> A2 or B1 ->
    /// B2, on MTE1.
    pub(super) fn load3d_v2(&mut self, op: &AscCubeOp, loc: u32) -> Result<(), Fault> {
        let api = "LoadData (Load3Dv2)";
        let dtype = Dtype::from_abi_code(op.dtype).ok_or_else(|| Fault::InvalidArg {
            api,
            what: format!("element type code {}", op.dtype),
        })?;
        let size = dtype.size();
        if !matches!(size, 1 | 2 | 4) {
            return Err(Fault::Unsupported {
                api,
                what: format!("{dtype} (Atlas A2: 1-, 2- and 4-byte types)"),
            });
        }
        let mem = |a: &crate::abi::AscAddr, operand: &str| -> Result<Mem, Fault> {
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
        };
        let (src_mem, dst_mem) = (mem(&op.src0, "src")?, mem(&op.dst, "dst")?);
        if src_mem != Mem::L1 || !matches!(dst_mem, Mem::L0a | Mem::L0b) {
            return Err(Fault::Unsupported {
                api,
                what: format!(
                    "loads from {} to {} (A1 -> A2 and B1 -> B2 only)",
                    src_mem.name(),
                    dst_mem.name()
                ),
            });
        }
        if dst_mem == Mem::L0b && size == 1 {
            return Err(Fault::Unsupported {
                api,
                what: format!(
                    "{dtype} into B2 (guide table 6-168: B1/B2 take half, bfloat16, float, int32, uint32)"
                ),
            });
        }
        let flags = op.p[7];
        if flags & load3d_flag::SMALL_K != 0 {
            return Err(Fault::Unsupported {
                api,
                what: "enSmallK (the guide: no longer supported on current products)".into(),
            });
        }
        if flags & load3d_flag::FMATRIX_RIGHT != 0 {
            return Err(Fault::InvalidArg {
                api,
                what: "fMatrixCtrl = true (the guide, table 6-171: only false is supported)".into(),
            });
        }
        let transpose = flags & load3d_flag::TRANSPOSE != 0;
        if transpose && (dst_mem != Mem::L0a || dtype != Dtype::Float16) {
            return Err(Fault::InvalidArg {
                api,
                what: format!(
                    "enTranspose with {dtype} into {} (only half into A2, guide table 6-171)",
                    dst_mem.name()
                ),
            });
        }
        if flags & load3d_flag::SET_FMATRIX != 0 {
            self.load3d.fmatrix[0] = Some(Fmatrix::from_abi(op.p[1], op.p[0]));
        }
        if flags & load3d_flag::SET_PADDING != 0 {
            self.load3d.pad_bits = op.scalar;
        }
        let fm = self.load3d.fmatrix[0].ok_or_else(|| Fault::InvalidArg {
            api,
            what:
                "IsResetLoad3dConfig::isSetFMatrix = false and no SetFmatrix before: the feature \
                   map's height, width and padding are unset"
                    .into(),
        })?;
        if self.load3d.repeat.1 > 1 {
            return Err(Fault::Unsupported {
                api,
                what: format!(
                    "SetLoadDataRepeat with repeatTime = {} (the guide does not say where each \
                     repeat writes; one repeat is emulated)",
                    self.load3d.repeat.1
                ),
            });
        }
        if self.load3d.boundary != 0 {
            return Err(Fault::Unsupported {
                api,
                what: format!(
                    "SetLoadDataBoundary({}) (wrapping reads at an A1/B1 boundary are not emulated)",
                    self.load3d.boundary
                ),
            });
        }
        range(api, "l1H", fm.h, 1, 32767)?;
        range(api, "l1W", fm.w, 1, 32767)?;
        let c0 = C0_BYTES as u32 / size as u32;
        let channels = op.p[2];
        // The guide gives channelSize in [1, 63] and, in the same table,
        // forms N * 16 (half) for any positive N; we take its forms.
        range(api, "channelSize", channels, 1, 65535)?;
        if !channels.is_multiple_of(c0) {
            return Err(Fault::Unsupported {
                api,
                what: format!(
                    "channelSize = {channels} with {dtype}: only multiples of C0 = {c0} are \
                     emulated (the small-channel packings 4, 8, N * C0 + 4, ... are not)"
                ),
            });
        }
        let (k_ext, m_ext) = (op.p[3] & 0xffff, op.p[3] >> 16);
        let (k_start, m_start) = (op.p[4] & 0xffff, op.p[4] >> 16);
        range(api, "kExtension", k_ext, 1, 65535)?;
        range(api, "mExtension", m_ext, 1, 65535)?;
        if k_start % c0 != 0 {
            return Err(Fault::InvalidArg {
                api,
                what: format!("kStartPt = {k_start} is not a multiple of C0 = {c0}"),
            });
        }
        let [stride_w, stride_h, dil_w, dil_h] = [0, 8, 16, 24].map(|s| (op.p[5] >> s) & 0xff);
        let (filter_w, filter_h) = (op.p[6] & 0xffff, op.p[6] >> 16);
        range(api, "strideW", stride_w, 1, 63)?;
        range(api, "strideH", stride_h, 1, 63)?;
        range(api, "filterW", filter_w, 1, 511)?;
        range(api, "filterH", filter_h, 1, 511)?;
        range(api, "dilationFilterW", dil_w, 1, 255)?;
        range(api, "dilationFilterH", dil_h, 1, 255)?;
        let g = Img2Col {
            h: u64::from(fm.h),
            w: u64::from(fm.w),
            c1: u64::from(channels / c0),
            c0: u64::from(c0),
            pad: fm.pad.map(u64::from),
            stride: (u64::from(stride_w), u64::from(stride_h)),
            filter: (u64::from(filter_w), u64::from(filter_h)),
            dilation: (u64::from(dil_w), u64::from(dil_h)),
        };
        if g.out_w().is_none() || g.out_h().is_none() {
            return Err(Fault::InvalidArg {
                api,
                what: format!(
                    "the dilated {filter_h} x {filter_w} kernel does not fit the padded {} x {} \
                     feature map",
                    fm.h + fm.pad[2] + fm.pad[3],
                    fm.w + fm.pad[0] + fm.pad[1]
                ),
            });
        }
        if u64::from(k_start) + u64::from(k_ext) > g.width() {
            return Err(Fault::InvalidArg {
                api,
                what: format!(
                    "kStartPt + kExtension = {} exceeds the img2col width C1 x Kh x Kw x C0 = {}",
                    k_start + k_ext,
                    g.width()
                ),
            });
        }
        let src_base = u64::from(op.src0.addr);
        let dst_base = u64::from(op.dst.addr);
        if !src_base.is_multiple_of(C0_BYTES) {
            return Err(Fault::Unaligned {
                operand: "src",
                mem: src_mem.name(),
                addr: src_base,
                align: C0_BYTES,
            });
        }
        if !dst_base.is_multiple_of(FRACTAL_BYTES) {
            return Err(Fault::Unaligned {
                operand: "dst",
                mem: dst_mem.name(),
                addr: dst_base,
                align: FRACTAL_BYTES,
            });
        }
        let fmap_bytes = g.fmap_len() * size as u64;
        let src_region = self.region("src", src_mem, (src_base, src_base + fmap_bytes))?;
        let dst = match (dst_mem, transpose) {
            (Mem::L0b, _) => Img2ColDst::B,
            (_, true) => Img2ColDst::ATransposed,
            _ => Img2ColDst::A,
        };
        let mut fmap = vec![0u8; fmap_bytes as usize];
        self.read_bytes(src_mem, src_base, &mut fmap);
        let pad = self.load3d.pad_bits.to_le_bytes();
        let image = img2col_image(
            &g,
            &fmap,
            &pad[..size],
            size,
            (u64::from(m_start), u64::from(m_ext)),
            (u64::from(k_start), u64::from(k_ext)),
            dst,
        );
        let bytes = image.len() as u64;
        let dst_region = self.region("dst", dst_mem, (dst_base, dst_base + bytes))?;
        self.write_bytes(dst_mem, dst_base, &image, None)?;
        // One MTE1 transfer of the fractals written, at the L1 -> L0 path
        // rate with the Load3D latency (timing/cost.rs).
        self.record(
            Pipe::Mte1,
            InstrKind::Dma {
                dir: DmaDir::L1Img2Col,
                bytes,
                bursts: 1,
                burst_bytes: bytes,
                gm_offset: 0,
                gm_strided: false,
                atomic: false,
            },
            vec![src_region],
            vec![dst_region],
            loc,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A one-channel-block map of f16-sized elements whose value names its
    /// place: element (c1, h, w, c0) holds 1000 c1 + 100 h + 10 w + c0
    /// (as u16), so the tests read positions back.
    fn fmap(g: &Img2Col) -> Vec<u8> {
        let mut out = Vec::new();
        for c1 in 0..g.c1 {
            for h in 0..g.h {
                for w in 0..g.w {
                    for c0 in 0..g.c0 {
                        let v = (1000 * c1 + 100 * h + 10 * w + c0) as u16;
                        out.extend_from_slice(&v.to_le_bytes());
                    }
                }
            }
        }
        out
    }

    fn geom(h: u64, w: u64, pad: [u64; 4], stride: u64, filter: u64, dilation: u64) -> Img2Col {
        Img2Col {
            h,
            w,
            c1: 1,
            c0: 16,
            pad,
            stride: (stride, stride),
            filter: (filter, filter),
            dilation: (dilation, dilation),
        }
    }

    /// Element (m, k) of an A2 (ZZ) image of a window from (0, 0).
    fn at_a(img: &[u8], k_blocks: usize, m: usize, k: usize) -> u16 {
        let i = zz_index(m, k, k_blocks, 16);
        u16::from_le_bytes([img[2 * i], img[2 * i + 1]])
    }

    const PAD: u16 = 0xdead;

    /// A 3 x 3 map, 2 x 2 kernel, stride 1, no padding: Ho = Wo = 2; row m
    /// = (m / 2, m % 2); columns (kh, kw, c0). By hand: row 3 (output
    /// (1, 1)) at kernel point (1, 0) reads (h, w) = (2, 1).
    #[test]
    fn img2col_of_a_small_map() {
        let g = geom(3, 3, [0; 4], 1, 2, 1);
        assert_eq!((g.out_h(), g.out_w(), g.width()), (Some(2), Some(2), 64));
        let img = img2col_image(
            &g,
            &fmap(&g),
            &PAD.to_le_bytes(),
            2,
            (0, 4),
            (0, 64),
            Img2ColDst::A,
        );
        assert_eq!(img.len(), 4 * 512);
        // Kernel point (kh, kw) = (1, 0) is column block 2; channel 5.
        assert_eq!(at_a(&img, 4, 3, 2 * 16 + 5), 100 * 2 + 10 + 5);
        // Output (0, 1), kernel point (0, 1): (h, w) = (0, 2), channel 0.
        assert_eq!(at_a(&img, 4, 1, 16), 20);
        // Output (0, 0), kernel point (1, 1): (1, 1), channel 15.
        assert_eq!(at_a(&img, 4, 0, 3 * 16 + 15), 100 + 10 + 15);
        // Rows 4..16 of the fractal are past the window: zero.
        assert_eq!(at_a(&img, 4, 4, 0), 0);
        assert_eq!(at_a(&img, 4, 15, 63), 0);
    }

    /// Padding 1 on every side of a 2 x 2 map, 3 x 3 kernel: Ho = Wo = 2.
    /// Output (0, 0) at kernel point (0, 0) reads (-1, -1): padding; at
    /// (1, 1) reads (0, 0); output (1, 1) at (2, 2) reads (2, 2): padding.
    #[test]
    fn img2col_with_padding() {
        let g = geom(2, 2, [1, 1, 1, 1], 1, 3, 1);
        assert_eq!((g.out_h(), g.out_w()), (Some(2), Some(2)));
        let img = img2col_image(
            &g,
            &fmap(&g),
            &PAD.to_le_bytes(),
            2,
            (0, 4),
            (0, 144),
            Img2ColDst::A,
        );
        let kb = 9;
        assert_eq!(at_a(&img, kb, 0, 7), PAD);
        assert_eq!(at_a(&img, kb, 0, 4 * 16 + 7), 7);
        assert_eq!(at_a(&img, kb, 3, 8 * 16), PAD);
        // Output (1, 1) at kernel point (1, 1): (1, 1).
        assert_eq!(at_a(&img, kb, 3, 4 * 16 + 3), 110 + 3);
        // Output (0, 1) at kernel point (0, 2): (-1, 2): padding; at (1, 2):
        // (0, 2): off the right edge (W = 2): padding; at (1, 1): (0, 1).
        assert_eq!(at_a(&img, kb, 1, 2 * 16), PAD);
        assert_eq!(at_a(&img, kb, 1, 5 * 16), PAD);
        assert_eq!(at_a(&img, kb, 1, 4 * 16), 10);
    }

    /// Stride 2 over a 5 x 5 map with a 3 x 3 kernel: Ho = Wo = 2; output
    /// (1, 0) at kernel point (2, 1) reads (2 * 1 + 2, 0 + 1) = (4, 1).
    #[test]
    fn img2col_with_stride_two() {
        let g = geom(5, 5, [0; 4], 2, 3, 1);
        assert_eq!((g.out_h(), g.out_w()), (Some(2), Some(2)));
        let img = img2col_image(
            &g,
            &fmap(&g),
            &PAD.to_le_bytes(),
            2,
            (0, 4),
            (0, 144),
            Img2ColDst::A,
        );
        assert_eq!(at_a(&img, 9, 2, (2 * 3 + 1) * 16 + 4), 410 + 4);
        // Output (1, 1) at kernel point (0, 0): (2, 2).
        assert_eq!(at_a(&img, 9, 3, 0), 220);
    }

    /// Dilation 2 on a 4 x 4 map with a 2 x 2 kernel: the kernel spans 3,
    /// Ho = Wo = 2; output (0, 1) at kernel point (1, 1) reads (2, 3).
    /// With padding 1 on every side (the guide's Load3Dv1 example
    /// geometry: H = W = 4, Kh = Kw = 2, dilation 2, pads 1): Ho = Wo =
    /// 4; output (0, 0) at (1, 1) reads (1, 1).
    #[test]
    fn img2col_with_dilation() {
        let g = geom(4, 4, [0; 4], 1, 2, 2);
        assert_eq!((g.out_h(), g.out_w()), (Some(2), Some(2)));
        let img = img2col_image(
            &g,
            &fmap(&g),
            &PAD.to_le_bytes(),
            2,
            (0, 4),
            (0, 64),
            Img2ColDst::A,
        );
        assert_eq!(at_a(&img, 4, 1, 3 * 16 + 9), 230 + 9);
        let g = geom(4, 4, [1; 4], 1, 2, 2);
        assert_eq!((g.out_h(), g.out_w()), (Some(4), Some(4)));
        let img = img2col_image(
            &g,
            &fmap(&g),
            &PAD.to_le_bytes(),
            2,
            (0, 16),
            (0, 64),
            Img2ColDst::A,
        );
        assert_eq!(at_a(&img, 4, 0, 3 * 16), 110);
        assert_eq!(at_a(&img, 4, 0, 0), PAD);
        // Output (3, 3) at kernel point (0, 0): (2, 2).
        assert_eq!(at_a(&img, 4, 15, 0), 220);
    }

    /// A window from (mStartPt, kStartPt) = (16, 16) of a 6 x 6 map with a
    /// 1 x 2 kernel (Wo = 5, Ho = 6) and two channel blocks: row 0 of the
    /// window is output 16 = (3, 1); column 0 is kernel point (0, 1) of
    /// block 0; column 32 is (0, 1) of block 1 (k = 48 = (1, 0, 1, 0)).
    #[test]
    fn img2col_window_and_channel_blocks() {
        let mut g = geom(6, 6, [0; 4], 1, 1, 1);
        g.filter = (2, 1);
        g.c1 = 2;
        assert_eq!((g.out_h(), g.out_w(), g.width()), (Some(6), Some(5), 64));
        let img = img2col_image(
            &g,
            &fmap(&g),
            &PAD.to_le_bytes(),
            2,
            (16, 16),
            (16, 48),
            Img2ColDst::A,
        );
        assert_eq!(img.len(), 3 * 512);
        assert_eq!(at_a(&img, 3, 0, 0), 320);
        assert_eq!(at_a(&img, 3, 0, 32), 1000 + 320);
        // Column 16 = k 32: block 1, kernel point (0, 0): (3, 1).
        assert_eq!(at_a(&img, 3, 0, 16 + 1), 1000 + 310 + 1);
        // Row 5 = output 21 = (4, 1), column 0: (4, 2).
        assert_eq!(at_a(&img, 3, 5, 0), 420);
    }

    /// The same window in B2 (ZN, n = m) and transposed in A2: the
    /// element (m, k) of the window sits where the layouts say.
    #[test]
    fn img2col_into_b2_and_transposed() {
        let g = geom(3, 3, [0; 4], 1, 2, 1);
        let f = fmap(&g);
        let pad = PAD.to_le_bytes();
        let b = img2col_image(&g, &f, &pad, 2, (0, 4), (0, 64), Img2ColDst::B);
        let t = img2col_image(&g, &f, &pad, 2, (0, 4), (0, 64), Img2ColDst::ATransposed);
        let read = |img: &[u8], i: usize| u16::from_le_bytes([img[2 * i], img[2 * i + 1]]);
        // (m, k) = (3, 37): output (1, 1), kernel point (1, 0), channel 5.
        assert_eq!(read(&b, zn_index(37, 3, 1, 16)), 215);
        assert_eq!(read(&t, zz_index(37, 3, 1, 16)), 215);
        // ZN: fractal (k block 2, m block 0) is the third.
        assert_eq!(zn_index(37, 3, 1, 16), 2 * 256 + 3 * 16 + 5);
        // Transposed: row k = 37 is fractal row 2, row 5 inside, column 3.
        assert_eq!(zz_index(37, 3, 1, 16), 2 * 256 + 5 * 16 + 3);
    }

    #[test]
    fn a_kernel_larger_than_the_padded_map_has_no_output() {
        let g = geom(2, 2, [0; 4], 1, 3, 1);
        assert_eq!(g.out_w(), None);
        let g = geom(2, 2, [1, 0, 0, 0], 1, 3, 1);
        assert_eq!((g.out_w(), g.out_h()), (Some(1), None));
    }
}
