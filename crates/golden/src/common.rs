//! The guards and helpers shared by the builtin golden files: arity, dtype
//! and attribute checks,
//! NumPy-style broadcasting of shapes, rejection messages, and tables over
//! every bit pattern of a 16-bit input (the large cases' elementwise work
//! done once per value).

use ascendopt_op::golden::Reject;
use ascendopt_op::spec::{AttrValue, Case};
use ascendopt_op::tensor::Tensor;
use ascendopt_op::Dtype;

/// Rejects a case whose input or output count differs from the golden's.
pub(super) fn arity(case: &Case, inputs: usize, outputs: usize) -> Result<(), Reject> {
    if case.inputs.len() != inputs || case.outputs.len() != outputs {
        return Err(Reject::new(
            "shapes",
            format!(
                "this golden needs {inputs} input(s) and {outputs} output(s), the spec declares {} and {}",
                case.inputs.len(),
                case.outputs.len()
            ),
        ));
    }
    Ok(())
}

/// The integer value of attr `name`.
pub(super) fn int_attr(case: &Case, name: &str) -> Result<i64, Reject> {
    case.attr(name)
        .and_then(AttrValue::as_i64)
        .ok_or_else(|| Reject::new("attrs", format!("attr `{name}` has no integer value")))
}

/// The numeric value of attr `name`.
pub(super) fn float_attr(case: &Case, name: &str) -> Result<f64, Reject> {
    case.attr(name)
        .and_then(AttrValue::as_f64)
        .ok_or_else(|| Reject::new("attrs", format!("attr `{name}` has no numeric value")))
}

/// Rejects a case with an input of a non-float dtype.
pub(crate) fn float_inputs(case: &Case, op: &str) -> Result<(), Reject> {
    for i in &case.inputs {
        if !i.dtype.is_float() {
            return Err(Reject::new(
                "dtype",
                format!(
                    "{op} is defined for float dtypes; input `{}` is {}",
                    i.name, i.dtype
                ),
            ));
        }
    }
    Ok(())
}

/// The value of bool attr `name`.
pub(crate) fn bool_attr(case: &Case, name: &str) -> Result<bool, Reject> {
    match case.attr(name) {
        Some(AttrValue::Bool(b)) => Ok(*b),
        _ => Err(Reject::new(
            "attrs",
            format!("attr `{name}` must be a bool"),
        )),
    }
}

/// The value of string attr `name`.
pub(crate) fn str_attr<'a>(case: &'a Case, name: &str) -> Result<&'a str, Reject> {
    match case.attr(name) {
        Some(AttrValue::Str(s)) => Ok(s),
        _ => Err(Reject::new(
            "attrs",
            format!("attr `{name}` must be a string"),
        )),
    }
}

/// The NumPy broadcast of two shapes (trailing dimensions aligned; equal
/// or 1), None when they do not broadcast.
pub(super) fn broadcast_shape(a: &[usize], b: &[usize]) -> Option<Vec<usize>> {
    let rank = a.len().max(b.len());
    let dim = |s: &[usize], i: usize| {
        if i + s.len() >= rank {
            s[i + s.len() - rank]
        } else {
            1
        }
    };
    (0..rank)
        .map(|i| match (dim(a, i), dim(b, i)) {
            (x, y) if x == y => Some(x),
            (1, y) => Some(y),
            (x, 1) => Some(x),
            _ => None,
        })
        .collect()
}

/// Flat offsets `base + sum(idx[d] * strides[d])` of every multi-index
/// `idx` of `dims`, in row-major order, advanced like an odometer (no
/// multi-index is built per element).
pub(super) struct Odometer {
    dims: Vec<usize>,
    strides: Vec<usize>,
    idx: Vec<usize>,
    offset: usize,
    left: usize,
}

impl Odometer {
    pub(super) fn new(dims: &[usize], strides: &[usize], base: usize) -> Odometer {
        Odometer {
            dims: dims.to_vec(),
            strides: strides.to_vec(),
            idx: vec![0; dims.len()],
            offset: base,
            left: dims.iter().product(),
        }
    }

    /// The source offsets of a tensor of `shape` broadcast to `out`
    /// (NumPy: right-aligned, size-1 dimensions repeat), for every output
    /// element in order.
    pub(super) fn broadcast(shape: &[usize], out: &[usize]) -> Odometer {
        let skip = out.len() - shape.len().min(out.len());
        let mut strides = vec![0; out.len()];
        let mut stride = 1;
        for (d, &dim) in shape.iter().enumerate().rev() {
            if dim != 1 {
                strides[d + skip] = stride;
            }
            stride *= dim;
        }
        Odometer::new(out, &strides, 0)
    }
}

impl Iterator for Odometer {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let here = self.offset;
        for d in (0..self.dims.len()).rev() {
            self.idx[d] += 1;
            self.offset += self.strides[d];
            if self.idx[d] < self.dims[d] {
                break;
            }
            self.offset -= self.strides[d] * self.dims[d];
            self.idx[d] = 0;
        }
        Some(here)
    }
}

/// Attr `name`: a list of `len` positive integers.
pub(crate) fn list_int(case: &Case, name: &str, len: usize) -> Result<Vec<usize>, Reject> {
    match case.attr(name) {
        Some(AttrValue::ListInt(v)) if v.len() == len && v.iter().all(|&d| d >= 1) => {
            Ok(v.iter().map(|&d| d as usize).collect())
        }
        _ => Err(Reject::new(
            "attrs",
            format!("attr `{name}` must be a list of {len} positive integers"),
        )),
    }
}

/// Attr `name`: a finite scale >= 0, as float32 (0: the in/out ratio).
pub(crate) fn f32_scale(case: &Case, name: &str) -> Result<f32, Reject> {
    let s = case
        .attr(name)
        .and_then(AttrValue::as_f64)
        .map(|v| v as f32)
        .ok_or_else(|| Reject::new("attrs", format!("attr `{name}` must be a number")))?;
    if !s.is_finite() || s < 0.0 {
        return Err(Reject::new(
            "attrs",
            format!("{name} = {s} must be finite and >= 0 (0: in/out)"),
        ));
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_maps_store_what_element_maps_store() {
        // Two inputs of every dtype (random bit patterns: NaNs, infinities,
        // subnormals, huge integers), several blocks and a tail, into
        // outputs of every dtype.
        let n = 2 * MAP_BLOCK + 77;
        let mut state = 0x243f_6a88_85a3_08d3u64;
        let mut bytes = |len: usize| -> Vec<u8> {
            (0..len)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    (state >> 24) as u8
                })
                .collect()
        };
        // Each argument weighs differently, so a swapped or shifted
        // argument changes the result.
        let f = |a: &[f64]| {
            a.iter()
                .enumerate()
                .fold(0.5, |acc, (i, v)| acc * 0.75 - v * (i + 1) as f64)
        };
        for &din in &Dtype::ALL {
            let xs: Vec<Tensor> = (0..3)
                .map(|_| Tensor {
                    dtype: din,
                    shape: vec![n],
                    data: bytes(n * din.size()),
                })
                .collect();
            let refs: Vec<&Tensor> = xs.iter().collect();
            for &dout in &Dtype::ALL {
                for k in 0..=3 {
                    let mut blocks = Tensor::zeros(dout, &[n]);
                    map_into(&refs[..k], &mut blocks, f);
                    let mut elements = Tensor::zeros(dout, &[n]);
                    for i in 0..n {
                        let args: Vec<f64> = xs[..k].iter().map(|t| t.get_f64(i)).collect();
                        elements.set_f64(i, f(&args));
                    }
                    assert!(
                        blocks.data == elements.data,
                        "{k} inputs of {din:?} -> {dout:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_odometer_gives_the_offsets_of_the_multi_indices() {
        use ascendopt_op::tensor::multi_index;
        let cases: [(&[usize], &[usize]); 5] = [
            (&[2, 3, 4], &[2, 3, 4]),
            (&[3, 1], &[2, 3, 4]),
            (&[1], &[5, 2]),
            (&[4], &[2, 3, 4]),
            (&[2, 1, 4], &[2, 3, 4]),
        ];
        for (shape, out) in cases {
            let n: usize = out.iter().product();
            let got: Vec<usize> = Odometer::broadcast(shape, out).collect();
            let want: Vec<usize> = (0..n)
                .map(|i| {
                    let idx = multi_index(out, i);
                    let skip = out.len() - shape.len();
                    shape
                        .iter()
                        .zip(&idx[skip..])
                        .fold(0, |flat, (&d, &j)| flat * d + if d == 1 { 0 } else { j })
                })
                .collect();
            assert_eq!(got, want, "{shape:?} -> {out:?}");
        }
        // Strided with a base (a slice of a 4x6 tensor: rows 1.., every
        // second column from 1).
        let got: Vec<usize> = Odometer::new(&[2, 3], &[6, 2], 7).collect();
        assert_eq!(got, vec![7, 9, 11, 13, 15, 17]);
        assert_eq!(Odometer::new(&[3, 0], &[1, 1], 0).count(), 0);
    }

    #[test]
    fn broadcasts_like_numpy() {
        assert_eq!(broadcast_shape(&[4, 1, 3], &[5, 1]), Some(vec![4, 5, 3]));
        assert_eq!(broadcast_shape(&[], &[2, 3]), Some(vec![2, 3]));
        assert_eq!(broadcast_shape(&[1, 0], &[3, 1]), Some(vec![3, 0]));
        assert_eq!(broadcast_shape(&[2, 3], &[3, 2]), None);
    }
}

/// Elements from which an elementwise function of one 16-bit float input is
/// computed once per bit pattern (65,536 values) and looked up: the same
/// bits as computing every element, at a fraction of the cost on the large
/// cases (tens of millions of elements).
const TABLE16_FROM: usize = 1 << 18;

/// A tensor of the 16-bit `dtype` holding every bit pattern, in order.
fn every_pattern16(dtype: Dtype) -> Tensor {
    Tensor {
        dtype,
        shape: vec![1 << 16],
        data: (0..=u16::MAX).flat_map(u16::to_le_bytes).collect(),
    }
}

/// Elements per block of [`map_into`].
const MAP_BLOCK: usize = 2048;

/// `y[i] = f(&[x0[i], x1[i], …])` for every element of `y`, the inputs read
/// and `y` stored a block at a time (one dtype dispatch per block instead of
/// per element); the values read and stored are those of `get_f64` and
/// `set_f64`. Every input holds at least `y`'s element count.
pub(crate) fn map_into(inputs: &[&Tensor], y: &mut Tensor, mut f: impl FnMut(&[f64]) -> f64) {
    let n = y.numel();
    let mut columns = vec![0.0f64; inputs.len() * MAP_BLOCK];
    let mut results = vec![0.0f64; MAP_BLOCK];
    // Interleaved arguments, for three inputs or more.
    let mut args = vec![
        0.0f64;
        if inputs.len() > 2 {
            inputs.len() * MAP_BLOCK
        } else {
            0
        }
    ];
    let mut start = 0;
    while start < n {
        let m = (n - start).min(MAP_BLOCK);
        for (column, t) in columns.chunks_exact_mut(MAP_BLOCK).zip(inputs) {
            t.read_f64s(start, &mut column[..m]);
        }
        match inputs.len() {
            0 => results[..m].iter_mut().for_each(|r| *r = f(&[])),
            // The common arities without a gather loop per element.
            1 => {
                for (r, &a) in results[..m].iter_mut().zip(&columns[..m]) {
                    *r = f(&[a]);
                }
            }
            2 => {
                let (a, b) = columns.split_at(MAP_BLOCK);
                for ((r, &a), &b) in results[..m].iter_mut().zip(&a[..m]).zip(&b[..m]) {
                    *r = f(&[a, b]);
                }
            }
            k => {
                // Interleaved once per block: element j's arguments are
                // then one contiguous slice.
                for (i, column) in columns.chunks_exact(MAP_BLOCK).enumerate() {
                    for (j, &v) in column[..m].iter().enumerate() {
                        args[j * k + i] = v;
                    }
                }
                for (r, a) in results[..m].iter_mut().zip(args.chunks_exact(k)) {
                    *r = f(a);
                }
            }
        }
        y.write_f64s(start, &results[..m]);
        start += m;
    }
}

/// `direct(x)` for a large 16-bit float `x` computed through a table of
/// `direct` over every bit pattern, or `None` when `x` does not qualify (not
/// a 16-bit float, or too small for the table to pay). `direct` must compute
/// each output element from the input element at the same index alone.
pub(crate) fn unary_by_table16(
    x: &Tensor,
    out: Dtype,
    direct: impl Fn(&Tensor) -> Tensor,
) -> Option<Tensor> {
    let size = out.size();
    if !(x.dtype.is_float() && x.dtype.size() == 2)
        || x.numel() < TABLE16_FROM
        || !matches!(size, 2 | 4 | 8)
    {
        return None;
    }
    let table = direct(&every_pattern16(x.dtype));
    if table.dtype != out || table.data.len() != size << 16 {
        return None;
    }
    let mut data = vec![0u8; x.numel() * size];
    match size {
        2 => look_up::<2>(&mut data, &x.data, &table.data),
        4 => look_up::<4>(&mut data, &x.data, &table.data),
        _ => look_up::<8>(&mut data, &x.data, &table.data),
    }
    Some(Tensor {
        dtype: out,
        shape: x.shape.clone(),
        data,
    })
}

/// `f` of the elements of one tensor: looked up per bit pattern when the
/// tensor is a large 16-bit float (computed once for each of the 65,536
/// patterns, from the same decoded value an element gives), computed
/// directly otherwise. For goldens whose costly part depends on one
/// element alone (an activation, its derivative, a gate).
pub(crate) struct PerValue<F> {
    f: F,
    table: Option<Vec<f64>>,
}

impl<F: Fn(f64) -> f64> PerValue<F> {
    /// `f` over the elements of `t`.
    pub(crate) fn new(t: &Tensor, f: F) -> PerValue<F> {
        let table =
            (t.dtype.is_float() && t.dtype.size() == 2 && t.numel() >= TABLE16_FROM).then(|| {
                let every = every_pattern16(t.dtype);
                (0..1usize << 16).map(|b| f(every.get_f64(b))).collect()
            });
        PerValue { f, table }
    }

    /// `f` of element `i` of `t` (the tensor given to [`PerValue::new`]).
    #[inline]
    pub(crate) fn at(&self, t: &Tensor, i: usize) -> f64 {
        match &self.table {
            Some(table) => {
                let b = &t.data[i * 2..i * 2 + 2];
                table[usize::from(u16::from_le_bytes([b[0], b[1]]))]
            }
            None => (self.f)(t.get_f64(i)),
        }
    }
}

/// `dst[i] = table[src[i]]` for 16-bit `src` elements and `N`-byte entries.
fn look_up<const N: usize>(dst: &mut [u8], src: &[u8], table: &[u8]) {
    for (d, s) in dst.chunks_exact_mut(N).zip(src.chunks_exact(2)) {
        let at = usize::from(u16::from_le_bytes([s[0], s[1]])) * N;
        let mut entry = [0u8; N];
        entry.copy_from_slice(&table[at..at + N]);
        d.copy_from_slice(&entry);
    }
}

#[cfg(test)]
mod table16_tests {
    use super::*;

    /// A function that depends on the value alone, with rounding cases.
    fn direct(t: &Tensor, out: Dtype) -> Tensor {
        let mut y = Tensor::zeros(out, &t.shape);
        for i in 0..t.numel() {
            let v = t.get_f64(i);
            y.set_f64(i, (v * 1.7).sin() / (1.0 + v * v));
        }
        y
    }

    #[test]
    fn the_table_gives_the_bits_of_the_direct_computation() {
        for (input, out) in [
            (Dtype::Float16, Dtype::Float16),
            (Dtype::Bfloat16, Dtype::Bfloat16),
            (Dtype::Float16, Dtype::Float32),
        ] {
            // Every bit pattern (NaNs, infinities, subnormals) in a
            // shuffled order, repeated past the table's threshold.
            let n = TABLE16_FROM + 12_345;
            let data: Vec<u8> = (0..n)
                .map(|i| ((i as u64).wrapping_mul(0x9E37_79B9) >> 7) as u16)
                .flat_map(u16::to_le_bytes)
                .collect();
            let x = Tensor {
                dtype: input,
                shape: vec![n],
                data,
            };
            let y = unary_by_table16(&x, out, |t| direct(t, out)).expect("qualifies");
            assert_eq!(y.shape, x.shape);
            assert!(y.data == direct(&x, out).data, "{input:?} -> {out:?}");
        }
        // PerValue gives f of each element, NaN for NaN.
        let n = TABLE16_FROM + 7;
        let x = Tensor {
            dtype: Dtype::Float16,
            shape: vec![n],
            data: (0..n)
                .map(|i| ((i as u64).wrapping_mul(0x9E37_79B9) >> 5) as u16)
                .flat_map(u16::to_le_bytes)
                .collect(),
        };
        let f = |v: f64| v.exp() - v * 0.25;
        let per = PerValue::new(&x, f);
        assert!(per.table.is_some());
        for i in 0..n {
            let (a, b) = (per.at(&x, i), f(x.get_f64(i)));
            assert!(
                a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
                "{i}"
            );
        }
        // Too small, or not 16-bit: no table.
        assert!(PerValue::new(&Tensor::zeros(Dtype::Float16, &[9]), f)
            .table
            .is_none());
        let small = Tensor::zeros(Dtype::Float16, &[1000]);
        assert!(unary_by_table16(&small, Dtype::Float16, |t| direct(t, Dtype::Float16)).is_none());
        let wide = Tensor::zeros(Dtype::Float32, &[TABLE16_FROM]);
        assert!(unary_by_table16(&wide, Dtype::Float32, |t| direct(t, Dtype::Float32)).is_none());
    }
}
