//! Host tensors: a dtype, a row-major shape and little-endian bytes, with
//! element access as f64 / i64 that rounds or wraps like a cast.

use crate::float::{bits_to_f64, int_to_float_bits, round_f64_to_bits};
use crate::Dtype;

/// A dense row-major tensor with little-endian element bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tensor {
    /// Element type.
    pub dtype: Dtype,
    /// Shape; `[]` is a scalar with one element.
    pub shape: Vec<usize>,
    /// `numel(shape) * dtype.size()` bytes.
    pub data: Vec<u8>,
}

/// Elements converted per step of [`Tensor::read_f64s`] and
/// [`Tensor::write_f64s`].
const CONVERT_BLOCK: usize = 256;

/// Number of elements of a shape (1 for `[]`).
pub fn numel(shape: &[usize]) -> usize {
    shape.iter().product()
}

/// Formats a shape as `[2, 3]`.
pub fn shape_str(shape: &[usize]) -> String {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    format!("[{}]", dims.join(", "))
}

impl Tensor {
    /// A tensor of zero bytes (0, +0.0, false).
    pub fn zeros(dtype: Dtype, shape: &[usize]) -> Tensor {
        Tensor {
            dtype,
            shape: shape.to_vec(),
            data: vec![0; numel(shape) * dtype.size()],
        }
    }

    /// A tensor whose every element holds `element` (one element's bytes,
    /// e.g. [`crate::compare::poison_bytes`]).
    pub fn filled(dtype: Dtype, shape: &[usize], element: &[u8]) -> Tensor {
        let total = numel(shape) * element.len();
        let mut data = Vec::with_capacity(total);
        if !element.is_empty() {
            // Whole blocks of the pattern at a time (per-element copies of
            // a variable length were a library call per element).
            let block: Vec<u8> = element
                .iter()
                .copied()
                .cycle()
                .take(element.len() * (4096 / element.len()).max(1))
                .collect();
            while total - data.len() >= block.len() {
                data.extend_from_slice(&block);
            }
            let rest = total - data.len();
            data.extend_from_slice(&block[..rest]);
        }
        Tensor {
            dtype,
            shape: shape.to_vec(),
            data,
        }
    }

    /// A tensor from values, each stored as by [`Tensor::set_f64`].
    pub fn from_f64s(dtype: Dtype, shape: &[usize], values: &[f64]) -> Tensor {
        let mut t = Tensor::zeros(dtype, shape);
        for (i, &v) in values.iter().enumerate().take(t.numel()) {
            t.set_f64(i, v);
        }
        t
    }

    /// A tensor from values, each stored as by [`Tensor::set_i64`].
    pub fn from_i64s(dtype: Dtype, shape: &[usize], values: &[i64]) -> Tensor {
        let mut t = Tensor::zeros(dtype, shape);
        for (i, &v) in values.iter().enumerate().take(t.numel()) {
            t.set_i64(i, v);
        }
        t
    }

    /// The parts of a complex tensor as a real tensor with one more
    /// dimension of 2 (real, imaginary): complex64 `[n]` is float32
    /// `[n, 2]` over the same bytes. None for real dtypes.
    pub fn complex_parts(&self) -> Option<Tensor> {
        let part = self.dtype.complex_part()?;
        let mut shape = self.shape.clone();
        shape.push(2);
        Some(Tensor {
            dtype: part,
            shape,
            data: self.data.clone(),
        })
    }

    /// The complex tensor whose parts are `parts` (last dimension 2: real,
    /// imaginary), the inverse of [`Tensor::complex_parts`]. None when the
    /// last dimension is not 2 or no complex dtype has `parts`' dtype as its
    /// part.
    pub fn from_complex_parts(parts: &Tensor) -> Option<Tensor> {
        let dtype = Dtype::ALL
            .into_iter()
            .find(|d| d.complex_part() == Some(parts.dtype))?;
        let (&last, outer) = parts.shape.split_last()?;
        if last != 2 {
            return None;
        }
        Some(Tensor {
            dtype,
            shape: outer.to_vec(),
            data: parts.data.clone(),
        })
    }

    /// Number of elements.
    pub fn numel(&self) -> usize {
        numel(&self.shape)
    }

    /// True when the byte length matches shape and dtype.
    pub fn is_consistent(&self) -> bool {
        self.data.len() == self.numel() * self.dtype.size()
    }

    /// The raw bits of element `i`, zero-extended. Panics when `i` is out of
    /// range, like slice indexing.
    #[inline]
    pub fn bits(&self, i: usize) -> u64 {
        let size = self.dtype.size();
        let b = &self.data[i * size..(i + 1) * size];
        // Fixed-width reads (no memcpy call per element).
        match size {
            1 => u64::from(b[0]),
            2 => u64::from(u16::from_le_bytes([b[0], b[1]])),
            4 => u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            _ => {
                let mut buf = [0u8; 8];
                buf[..size].copy_from_slice(b);
                u64::from_le_bytes(buf)
            }
        }
    }

    /// Sets the raw bits of element `i` (low `dtype.size()` bytes).
    #[inline]
    pub fn set_bits(&mut self, i: usize, bits: u64) {
        let size = self.dtype.size();
        let dst = &mut self.data[i * size..(i + 1) * size];
        match size {
            1 => dst[0] = bits as u8,
            2 => dst.copy_from_slice(&(bits as u16).to_le_bytes()),
            4 => dst.copy_from_slice(&(bits as u32).to_le_bytes()),
            _ => dst.copy_from_slice(&bits.to_le_bytes()[..size]),
        }
    }

    /// Element `i` as f64: exact for floats and for integers below 2^53;
    /// bool is 0 or 1 (any non-zero byte reads as 1).
    #[inline]
    pub fn get_f64(&self, i: usize) -> f64 {
        // Typed fast paths for the common float formats.
        match self.dtype {
            Dtype::Float32 => {
                let b = &self.data[i * 4..i * 4 + 4];
                return f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]]));
            }
            Dtype::Float16 => {
                let b = &self.data[i * 2..i * 2 + 2];
                return f64::from(half::f16::from_bits(u16::from_le_bytes([b[0], b[1]])).to_f32());
            }
            Dtype::Bfloat16 => {
                let b = &self.data[i * 2..i * 2 + 2];
                return f64::from(half::bf16::from_bits(u16::from_le_bytes([b[0], b[1]])).to_f32());
            }
            _ => {}
        }
        let bits = self.bits(i);
        if self.dtype.is_float() {
            bits_to_f64(bits, self.dtype)
        } else if self.dtype == Dtype::Bool {
            if bits != 0 {
                1.0
            } else {
                0.0
            }
        } else {
            int_to_f64(int_value(bits, self.dtype))
        }
    }

    /// Element `i` as an integer: exact for integer dtypes (uint64 above
    /// `i64::MAX` wraps to negative), floats truncate toward zero (NaN gives
    /// 0, out-of-range saturates), bool is 0 or 1.
    pub fn get_i64(&self, i: usize) -> i64 {
        let bits = self.bits(i);
        if self.dtype.is_float() {
            bits_to_f64(bits, self.dtype) as i64
        } else if self.dtype == Dtype::Bool {
            i64::from(bits != 0)
        } else {
            int_value(bits, self.dtype) as i64
        }
    }

    /// Element `i` as i128, exact for every integer dtype including uint64.
    pub fn get_i128(&self, i: usize) -> i128 {
        let bits = self.bits(i);
        if self.dtype.is_float() {
            bits_to_f64(bits, self.dtype) as i128
        } else if self.dtype == Dtype::Bool {
            i128::from(bits != 0)
        } else {
            int_value(bits, self.dtype)
        }
    }

    /// Stores `v` in element `i` like a cast from f64: floats round to
    /// nearest even once; integers truncate toward zero then wrap to the
    /// width (NaN gives 0); bool stores `v != 0` (NaN is true).
    #[inline]
    pub fn set_f64(&mut self, i: usize, v: f64) {
        if self.dtype == Dtype::Float32 && !v.is_nan() {
            // `as` rounds to nearest even once, with subnormals and overflow.
            self.data[i * 4..i * 4 + 4].copy_from_slice(&(v as f32).to_le_bytes());
            return;
        }
        let bits = if self.dtype.is_float() {
            round_f64_to_bits(v, self.dtype)
        } else if self.dtype == Dtype::Bool {
            u64::from(v != 0.0)
        } else {
            // `as` truncates toward zero, saturates, and maps NaN to 0.
            wrap_int(f64_to_int(v), self.dtype)
        };
        self.set_bits(i, bits);
    }

    /// Stores the integer `v` in element `i`: floats round to nearest even
    /// once; integers wrap (two's complement); bool stores `v != 0`.
    pub fn set_i64(&mut self, i: usize, v: i64) {
        self.set_i128(i, i128::from(v));
    }

    /// Like [`Tensor::set_i64`] for values beyond i64 (uint64).
    pub fn set_i128(&mut self, i: usize, v: i128) {
        let bits = if self.dtype.is_float() {
            int_to_float_bits(v, self.dtype)
        } else if self.dtype == Dtype::Bool {
            u64::from(v != 0)
        } else {
            wrap_int(v, self.dtype)
        };
        self.set_bits(i, bits);
    }

    /// Elements `start .. start + out.len()` as f64: the values of
    /// [`Tensor::get_f64`], with one dtype dispatch per slice (float16 and
    /// bfloat16 convert a block at a time, with F16C where the CPU has it).
    /// Panics when the range is out of bounds, like slice indexing.
    pub fn read_f64s(&self, start: usize, out: &mut [f64]) {
        let n = out.len();
        match self.dtype {
            Dtype::Float16 | Dtype::Bfloat16 => {
                let bytes = &self.data[start * 2..(start + n) * 2];
                let mut singles = [0f32; CONVERT_BLOCK];
                for (o, b) in out
                    .chunks_mut(CONVERT_BLOCK)
                    .zip(bytes.chunks(2 * CONVERT_BLOCK))
                {
                    let singles = &mut singles[..o.len()];
                    load_halves(self.dtype, b, singles);
                    for (o, &s) in o.iter_mut().zip(singles.iter()) {
                        *o = f64::from(s);
                    }
                }
            }
            Dtype::Float32 => {
                let bytes = &self.data[start * 4..(start + n) * 4];
                for (o, c) in out.iter_mut().zip(bytes.chunks_exact(4)) {
                    *o = f64::from(f32::from_le_bytes([c[0], c[1], c[2], c[3]]));
                }
            }
            _ => {
                for (k, o) in out.iter_mut().enumerate() {
                    *o = self.get_f64(start + k);
                }
            }
        }
    }

    /// Stores `values` in elements `start ..`, each as [`Tensor::set_f64`]
    /// stores it. float16 and bfloat16 values that are exactly f32 values
    /// (not NaN) convert a block at a time; the others round one by one.
    /// Panics when the range is out of bounds, like slice indexing.
    pub fn write_f64s(&mut self, start: usize, values: &[f64]) {
        let n = values.len();
        let dtype = self.dtype;
        if dtype != Dtype::Bool && dtype.int_range().is_some() {
            // Integers: truncated and wrapped as set_f64 does, stored with
            // a fixed width.
            let size = dtype.size();
            let bytes = &mut self.data[start * size..(start + n) * size];
            let bits = |v: f64| wrap_int(f64_to_int(v), dtype);
            match size {
                1 => store_bits::<1>(bytes, values, bits),
                2 => store_bits::<2>(bytes, values, bits),
                4 => store_bits::<4>(bytes, values, bits),
                _ => store_bits::<8>(bytes, values, bits),
            }
            return;
        }
        if !matches!(dtype, Dtype::Float16 | Dtype::Bfloat16) {
            for (k, &v) in values.iter().enumerate() {
                self.set_f64(start + k, v);
            }
            return;
        }
        // Out of bounds panics before anything is written.
        let _ = &self.data[start * 2..(start + n) * 2];
        let mut singles = [0f32; CONVERT_BLOCK];
        for (j, v) in values.chunks(CONVERT_BLOCK).enumerate() {
            let at = start + j * CONVERT_BLOCK;
            let singles = &mut singles[..v.len()];
            let mut exact = true;
            for (s, &x) in singles.iter_mut().zip(v) {
                *s = x as f32;
                // NaN compares unequal: it takes the element path.
                exact &= f64::from(*s) == x;
            }
            if !exact {
                for (k, &x) in v.iter().enumerate() {
                    self.set_f64(at + k, x);
                }
                continue;
            }
            store_halves(dtype, singles, &mut self.data[at * 2..(at + v.len()) * 2]);
        }
    }

    /// All elements as f64.
    pub fn to_f64s(&self) -> Vec<f64> {
        (0..self.numel()).map(|i| self.get_f64(i)).collect()
    }

    /// All elements as i64.
    pub fn to_i64s(&self) -> Vec<i64> {
        (0..self.numel()).map(|i| self.get_i64(i)).collect()
    }

    /// The multi-dimensional index of flat index `flat` (row-major).
    pub fn multi_index(&self, flat: usize) -> Vec<usize> {
        multi_index(&self.shape, flat)
    }
}

/// The multi-dimensional index of `flat` in a row-major `shape`.
pub fn multi_index(shape: &[usize], flat: usize) -> Vec<usize> {
    let mut idx = vec![0; shape.len()];
    let mut rest = flat;
    for (d, &dim) in shape.iter().enumerate().rev() {
        if dim > 0 {
            idx[d] = rest % dim;
            rest /= dim;
        }
    }
    idx
}

/// The integer value of raw bits of an integer dtype.
fn int_value(bits: u64, dtype: Dtype) -> i128 {
    let width = dtype.size() * 8;
    if dtype.is_signed_int() {
        let shift = 64 - width;
        i128::from(((bits << shift) as i64) >> shift)
    } else {
        i128::from(bits)
    }
}

/// `v as f64` (nearest even), through i64 when it fits: one instruction
/// instead of the 128-bit software conversion, the same value.
#[inline]
fn int_to_f64(v: i128) -> f64 {
    match i64::try_from(v) {
        Ok(v) => v as f64,
        Err(_) => v as f64,
    }
}

/// `v as i128` (toward zero, saturating, NaN to 0), through i64 below 2^62
/// in magnitude (the same value, one instruction).
#[inline]
fn f64_to_int(v: f64) -> i128 {
    if v.abs() < 4.0e18 {
        i128::from(v as i64)
    } else {
        v as i128
    }
}

/// Stores `singles` rounded to the 16-bit float `dtype` (float16, else
/// bfloat16; nearest even, through `half`'s slice conversion: F16C where
/// the CPU has it) as little-endian bytes, two per value.
pub(crate) fn store_halves(dtype: Dtype, singles: &[f32], bytes: &mut [u8]) {
    use half::slice::{HalfBitsSliceExt, HalfFloatSliceExt};
    let mut halves = [0u16; CONVERT_BLOCK];
    for (s, b) in singles
        .chunks(CONVERT_BLOCK)
        .zip(bytes.chunks_mut(2 * CONVERT_BLOCK))
    {
        let halves = &mut halves[..s.len()];
        if dtype == Dtype::Float16 {
            halves
                .reinterpret_cast_mut::<half::f16>()
                .convert_from_f32_slice(s);
        } else {
            halves
                .reinterpret_cast_mut::<half::bf16>()
                .convert_from_f32_slice(s);
        }
        for (c, h) in b.chunks_exact_mut(2).zip(halves.iter()) {
            c.copy_from_slice(&h.to_le_bytes());
        }
    }
}

/// The values of the 16-bit float `dtype`'s little-endian `bytes` (two per
/// value; float16, else bfloat16) as f32, exactly.
fn load_halves(dtype: Dtype, bytes: &[u8], singles: &mut [f32]) {
    use half::slice::{HalfBitsSliceExt, HalfFloatSliceExt};
    let mut halves = [0u16; CONVERT_BLOCK];
    for (s, b) in singles
        .chunks_mut(CONVERT_BLOCK)
        .zip(bytes.chunks(2 * CONVERT_BLOCK))
    {
        let halves = &mut halves[..s.len()];
        for (h, c) in halves.iter_mut().zip(b.chunks_exact(2)) {
            *h = u16::from_le_bytes([c[0], c[1]]);
        }
        if dtype == Dtype::Float16 {
            halves
                .reinterpret_cast::<half::f16>()
                .convert_to_f32_slice(s);
        } else {
            halves
                .reinterpret_cast::<half::bf16>()
                .convert_to_f32_slice(s);
        }
    }
}

/// Stores `bits(v)`'s low `N` bytes (little-endian) for each value in the
/// `N`-byte elements of `bytes`.
#[inline]
fn store_bits<const N: usize>(bytes: &mut [u8], values: &[f64], bits: impl Fn(f64) -> u64) {
    for (el, &v) in bytes.chunks_exact_mut(N).zip(values) {
        el.copy_from_slice(&bits(v).to_le_bytes()[..N]);
    }
}

/// `v` wrapped to the width of an integer dtype, as raw bits.
#[inline]
pub(crate) fn wrap_int(v: i128, dtype: Dtype) -> u64 {
    let width = dtype.size() * 8;
    let mask: u128 = if width >= 64 {
        u128::from(u64::MAX)
    } else {
        (1u128 << width) - 1
    };
    ((v as u128) & mask) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn narrow_integer_conversions_match_the_wide_ones() {
        let mut next = crate::float::tests::split_mix(0x1_2345);
        for k in 0..100_000u32 {
            let raw = next();
            let v = (raw as i128) << (k % 70) >> (k % 70 + k % 3);
            assert_eq!(int_to_f64(v).to_bits(), (v as f64).to_bits(), "{v}");
            let x = f64::from_bits(raw) * if k % 2 == 0 { 1.0 } else { 1e-290 };
            for x in [
                x,
                x.trunc(),
                4.0e18,
                -4.0e18,
                3.999e18,
                9.5e18,
                -9.5e18,
                f64::NAN,
                -0.5,
            ] {
                assert_eq!(f64_to_int(x), x as i128, "{x:e}");
            }
        }
    }

    #[test]
    fn slice_reads_and_writes_match_the_element_ones() {
        let mut next = crate::float::tests::split_mix(0x51_1CE);
        // Values that are f32 (the block path), inexact ones, NaN, huge
        // and tiny ones, integers beyond 2^63 and their negatives.
        let mut values: Vec<f64> = Vec::new();
        for k in 0..4000u32 {
            let raw = next();
            // The first half only values that are f32 (blocks convert
            // whole), the second half every kind.
            let kind = if k < 2000 {
                [0, 3, 8, 7][k as usize % 4]
            } else {
                k % 8
            };
            values.push(match kind {
                0 => f64::from(f32::from_bits(raw as u32)),
                1 => f64::from_bits(raw),
                2 => (raw as i64 as f64) * 1e-12,
                3 => f64::from(raw as u16) - 30000.5,
                4 => [f64::NAN, f64::INFINITY, -0.0, 1e300, -1e40, 9.3e18][raw as usize % 6],
                5 => f64::from((raw as i32) >> (raw % 31)),
                6 => f64::from(half::f16::from_bits(raw as u16).to_f32()) * 1.000_001,
                7 => f64::from(half::bf16::from_bits(raw as u16).to_f32()),
                _ => f64::from(raw as i16),
            });
        }
        for dtype in Dtype::ALL {
            if dtype.is_complex() {
                continue;
            }
            // Blocks of f32 values (converted whole) and blocks with
            // inexact values or NaN (element by element).
            let n = values.len();
            let (mut by_slice, mut by_element) = (
                Tensor::zeros(dtype, &[n + 3]),
                Tensor::zeros(dtype, &[n + 3]),
            );
            by_slice.write_f64s(3, &values);
            for (k, &v) in values.iter().enumerate() {
                by_element.set_f64(3 + k, v);
            }
            let first = (0..n + 3).find(|&k| by_slice.bits(k) != by_element.bits(k));
            assert_eq!(
                first, None,
                "{dtype:?}: the first element written differently"
            );
            let mut read = vec![0.0; n - 5];
            by_slice.read_f64s(5, &mut read);
            for (k, r) in read.iter().enumerate() {
                let e = by_slice.get_f64(5 + k);
                assert!(
                    r.to_bits() == e.to_bits() || (r.is_nan() && e.is_nan()),
                    "{dtype:?}: read {k}"
                );
            }
        }
    }

    #[test]
    fn filled_repeats_the_element_exactly_across_block_boundaries() {
        for (dtype, element) in [
            (Dtype::Uint8, vec![0x5Au8]),
            (Dtype::Float16, vec![0x5A, 0x7E]),
            (Dtype::Float32, vec![1, 2, 3, 4]),
            (Dtype::Float64, vec![1, 2, 3, 4, 5, 6, 7, 8]),
        ] {
            for n in [0usize, 1, 7, 1023, 1024, 1025, 4096, 5000] {
                let t = Tensor::filled(dtype, &[n], &element);
                let naive: Vec<u8> = (0..n).flat_map(|_| element.iter().copied()).collect();
                assert_eq!(t.data, naive, "{dtype:?} x {n}");
            }
        }
    }

    #[test]
    fn float_elements_round_once_and_read_back_exactly() {
        let mut t = Tensor::zeros(Dtype::Float16, &[2, 2]);
        t.set_f64(0, 0.1);
        assert_eq!(t.bits(0), 0x2E66);
        assert_eq!(t.get_f64(0), 0.0999755859375);
        t.set_f64(3, -65520.0);
        assert_eq!(t.get_f64(3), f64::NEG_INFINITY);
        assert_eq!(t.data.len(), 8);
        assert_eq!(&t.data[0..2], &[0x66, 0x2E]);
        t.set_i64(1, 2049);
        assert_eq!(t.get_f64(1), 2048.0);
    }

    #[test]
    fn integer_elements_wrap_and_truncate() {
        let mut t = Tensor::zeros(Dtype::Int8, &[4]);
        t.set_i64(0, 200);
        assert_eq!(t.get_i64(0), -56);
        t.set_f64(1, -3.9);
        assert_eq!(t.get_i64(1), -3);
        t.set_f64(2, 300.7);
        assert_eq!(t.get_i64(2), 44);
        t.set_f64(3, f64::NAN);
        assert_eq!(t.get_i64(3), 0);
        let mut u = Tensor::zeros(Dtype::Uint8, &[1]);
        u.set_i64(0, -1);
        assert_eq!(u.get_i64(0), 255);
        let mut u64t = Tensor::zeros(Dtype::Uint64, &[1]);
        u64t.set_i128(0, i128::from(u64::MAX));
        assert_eq!(u64t.get_i128(0), i128::from(u64::MAX));
        assert_eq!(u64t.get_i64(0), -1);
        let mut i32t = Tensor::zeros(Dtype::Int32, &[1]);
        i32t.set_i64(0, i64::from(i32::MAX) + 1);
        assert_eq!(i32t.get_i64(0), i64::from(i32::MIN));
        assert_eq!(i32t.data, vec![0, 0, 0, 0x80]);
    }

    #[test]
    fn bool_elements() {
        let mut t = Tensor::zeros(Dtype::Bool, &[3]);
        t.set_f64(0, f64::NAN);
        t.set_f64(1, -0.0);
        t.set_i64(2, 7);
        assert_eq!(t.data, vec![1, 0, 1]);
    }

    #[test]
    fn multi_index_is_row_major() {
        let t = Tensor::zeros(Dtype::Float32, &[2, 3, 4]);
        assert_eq!(t.multi_index(0), vec![0, 0, 0]);
        assert_eq!(t.multi_index(23), vec![1, 2, 3]);
        assert_eq!(t.multi_index(13), vec![1, 0, 1]);
        assert_eq!(multi_index(&[], 0), Vec::<usize>::new());
        assert_eq!(shape_str(&[2, 3]), "[2, 3]");
    }
}
