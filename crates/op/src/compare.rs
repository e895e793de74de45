//! Comparing a kernel's output with the golden, and detecting output
//! elements the kernel never wrote.
//!
//! Rule (CANN style, every element checked): a float element fails only
//! when its absolute error exceeds `atol` AND its relative error
//! (`abs / |expected|`) exceeds `rtol`. NaN matches only NaN; an infinity
//! matches only the same infinity; ±0 match each other. Integers use the
//! same rule on exact integer values (the default tolerance 0 makes them
//! exact); bool compares bytes exactly. A tensor passes when no element
//! fails.
//!
//! Outputs are filled with [`poison_bytes`] before a launch; an element
//! whose bytes still equal the poison while the golden's do not was never
//! written, and fails even where the golden is NaN (a float poison is a
//! NaN, and NaN would otherwise match NaN).

use crate::error::OpError;
use crate::float::{bits_to_f64, quiet_nan_bits};
use crate::spec::Tolerance;
use crate::tensor::{multi_index, shape_str, Tensor};
use crate::Dtype;
use rayon::prelude::*;
use std::fmt;

/// The bytes of one poison element of `dtype`: a quiet NaN with a 0x5A
/// payload for floats (never produced by arithmetic on our inputs), 0x5A in
/// every byte for integers and bool (0x5A is not a valid bool).
pub fn poison_bytes(dtype: Dtype) -> Vec<u8> {
    let bits: u64 = match dtype {
        Dtype::Float16 => 0x7E5A,
        Dtype::Bfloat16 => 0x7FDA,
        Dtype::Float32 => 0x7FDA_5A5A,
        Dtype::Float64 => 0x7FFA_5A5A_5A5A_5A5A,
        // Two float32 poisons (real and imaginary part).
        Dtype::Complex64 => 0x7FDA_5A5A_7FDA_5A5A,
        _ => 0x5A5A_5A5A_5A5A_5A5A,
    };
    bits.to_le_bytes()[..dtype.size()].to_vec()
}

/// A tensor of `shape` filled with the poison of `dtype`.
pub fn poisoned(dtype: Dtype, shape: &[usize]) -> Tensor {
    Tensor::filled(dtype, shape, &poison_bytes(dtype))
}

/// The poison of the second run of the run-twice check: other bytes than
/// [`poison_bytes`] in every byte (0xA5 for integers and bool, quiet NaNs
/// with an 0xA5 payload for floats), so that an element neither run writes
/// differs between the runs even where the expected value equals one
/// poison (an int8 output saturated at 0x5A, a NaN expected).
pub fn second_poison_bytes(dtype: Dtype) -> Vec<u8> {
    let bits: u64 = match dtype {
        Dtype::Float16 => 0x7EA5,
        Dtype::Bfloat16 => 0x7FE5,
        Dtype::Float32 => 0x7FE5_A5A5,
        Dtype::Float64 => 0x7FFD_A5A5_A5A5_A5A5,
        Dtype::Complex64 => 0x7FE5_A5A5_7FE5_A5A5,
        _ => 0xA5A5_A5A5_A5A5_A5A5,
    };
    bits.to_le_bytes()[..dtype.size()].to_vec()
}

/// A tensor of `shape` filled with [`second_poison_bytes`].
pub fn second_poisoned(dtype: Dtype, shape: &[usize]) -> Tensor {
    Tensor::filled(dtype, shape, &second_poison_bytes(dtype))
}

/// Element `index` of `first` holds the first poison and of `second` the
/// second: no run wrote it.
pub fn never_written(first: &Tensor, second: &Tensor, index: usize) -> bool {
    let size = first.dtype.size();
    let at = index * size..(index + 1) * size;
    first.data.get(at.clone()) == Some(&poison_bytes(first.dtype)[..])
        && second.data.get(at) == Some(&second_poison_bytes(second.dtype)[..])
}

/// An element's value, for reports.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ElemValue {
    /// A float (NaN and infinities included).
    Float(f64),
    /// An integer or bool.
    Int(i128),
    /// A raw byte that is not a valid bool.
    Bits(u64),
}

impl fmt::Display for ElemValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ElemValue::Float(v) => write!(f, "{v:?}"),
            ElemValue::Int(v) => write!(f, "{v}"),
            ElemValue::Bits(b) => write!(f, "{b:#x}"),
        }
    }
}

/// One element named in a report.
#[derive(Debug, Clone, PartialEq)]
pub struct ElemReport {
    /// Flat index.
    pub index: usize,
    /// Row-major multi-dimensional index.
    pub multi_index: Vec<usize>,
    /// The golden's value.
    pub expected: ElemValue,
    /// The kernel's value.
    pub actual: ElemValue,
}

impl fmt::Display for ElemReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "element {} {:?}: expected {}, got {}",
            self.index, self.multi_index, self.expected, self.actual
        )
    }
}

/// The result of comparing one output.
#[derive(Debug, Clone, PartialEq)]
pub struct CompareReport {
    /// Element type.
    pub dtype: Dtype,
    /// Tolerance used.
    pub tolerance: Tolerance,
    /// Elements compared.
    pub total: usize,
    /// Elements that failed.
    pub mismatches: usize,
    /// Largest absolute error over element pairs that are both finite.
    pub max_abs_err: f64,
    /// Largest relative error over finite pairs with a non-zero expected
    /// value.
    pub max_rel_err: f64,
    /// The first failing element.
    pub first_bad: Option<ElemReport>,
    /// Elements still holding the poison where the golden does not.
    pub unwritten: usize,
    /// The first such element.
    pub first_unwritten: Option<ElemReport>,
}

impl CompareReport {
    /// True when every element matched, or no more than the tolerance's
    /// `max_mismatch_ratio` of them failed.
    pub fn passed(&self) -> bool {
        self.mismatches == 0
            || (self.mismatches as f64) <= self.total as f64 * self.tolerance.max_mismatch_ratio
    }
}

impl fmt::Display for CompareReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}/{} {} elements mismatch (atol {}, rtol {}); max abs err {:e}, max rel err {:e}",
            self.mismatches,
            self.total,
            self.dtype,
            self.tolerance.atol,
            self.tolerance.rtol,
            self.max_abs_err,
            self.max_rel_err
        )?;
        if self.tolerance.max_mismatch_ratio > 0.0 {
            write!(
                f,
                "; up to {} of them may fail (max_mismatch_ratio {})",
                (self.total as f64 * self.tolerance.max_mismatch_ratio).floor(),
                self.tolerance.max_mismatch_ratio
            )?;
        }
        if let Some(b) = &self.first_bad {
            write!(f, "; first: {b}")?;
        }
        if self.unwritten > 0 {
            write!(f, "; {} elements never written", self.unwritten)?;
            if let Some(u) = &self.first_unwritten {
                write!(f, " (first: {u})")?;
            }
        }
        Ok(())
    }
}

fn value(t: &Tensor, i: usize) -> ElemValue {
    if t.dtype.is_float() {
        ElemValue::Float(t.get_f64(i))
    } else if t.dtype == Dtype::Bool {
        match t.bits(i) {
            b @ (0 | 1) => ElemValue::Int(i128::from(b)),
            b => ElemValue::Bits(b),
        }
    } else {
        ElemValue::Int(t.get_i128(i))
    }
}

/// Compares every element of `actual` with `expected` under `tol`. The two
/// must have the same dtype, shape and byte length. Complex tensors compare
/// part by part: the report counts parts, and its indices have a last
/// dimension of 2 (real, imaginary).
pub fn compare(
    expected: &Tensor,
    actual: &Tensor,
    tol: Tolerance,
) -> Result<CompareReport, OpError> {
    if expected.dtype != actual.dtype
        || expected.shape != actual.shape
        || !expected.is_consistent()
        || !actual.is_consistent()
    {
        return Err(OpError::Compare {
            message: format!(
                "expected {} {} ({} bytes), actual {} {} ({} bytes)",
                expected.dtype,
                shape_str(&expected.shape),
                expected.data.len(),
                actual.dtype,
                shape_str(&actual.shape),
                actual.data.len()
            ),
        });
    }
    if let (Some(e), Some(a)) = (expected.complex_parts(), actual.complex_parts()) {
        let mut report = compare(&e, &a, tol)?;
        report.dtype = expected.dtype;
        return Ok(report);
    }
    let dtype = expected.dtype;
    let poison = u64::from_le_bytes({
        let mut b = [0u8; 8];
        b[..dtype.size()].copy_from_slice(&poison_bytes(dtype));
        b
    });
    let total = expected.numel();
    let size = dtype.size();
    // Chunks compared in parallel and merged in order (counts add, maxima
    // combine, the first failing element is the lowest index). A chunk
    // whose bytes equal the golden's has no failing, unwritten or erring
    // element (equal bits: NaN matches NaN, zero error), so it is skipped.
    let chunks: Vec<(usize, usize)> = (0..total)
        .step_by(COMPARE_CHUNK)
        .map(|lo| (lo, (lo + COMPARE_CHUNK).min(total)))
        .collect();
    let parts: Vec<CompareReport> = chunks
        .par_iter()
        .map(|&(lo, hi)| {
            let mut part = CompareReport {
                dtype,
                tolerance: tol,
                total: hi - lo,
                mismatches: 0,
                max_abs_err: 0.0,
                max_rel_err: 0.0,
                first_bad: None,
                unwritten: 0,
                first_unwritten: None,
            };
            if expected.data[lo * size..hi * size] != actual.data[lo * size..hi * size] {
                let pair = Pair {
                    expected,
                    actual,
                    tol,
                    poison,
                };
                compare_range(&pair, lo..hi, &mut part);
            }
            part
        })
        .collect();
    let mut report = CompareReport {
        dtype,
        tolerance: tol,
        total,
        mismatches: 0,
        max_abs_err: 0.0,
        max_rel_err: 0.0,
        first_bad: None,
        unwritten: 0,
        first_unwritten: None,
    };
    for part in parts {
        report.mismatches += part.mismatches;
        report.unwritten += part.unwritten;
        report.max_abs_err = report.max_abs_err.max(part.max_abs_err);
        report.max_rel_err = report.max_rel_err.max(part.max_rel_err);
        if report.first_bad.is_none() {
            report.first_bad = part.first_bad;
        }
        if report.first_unwritten.is_none() {
            report.first_unwritten = part.first_unwritten;
        }
    }
    Ok(report)
}

/// Elements per chunk of a parallel comparison.
const COMPARE_CHUNK: usize = 1 << 16;

/// Compares the elements in `range`, accumulating into `report`: with
/// element reads of the dtype's fixed width, skipping runs of
/// [`EQUAL_RUN`] elements whose bytes are equal (no failing, unwritten or
/// erring element among them).
fn compare_range(pair: &Pair<'_>, range: std::ops::Range<usize>, report: &mut CompareReport) {
    match pair.expected.dtype.size() {
        1 => compare_width::<1>(pair, range, report),
        2 => compare_width::<2>(pair, range, report),
        4 => compare_width::<4>(pair, range, report),
        _ => compare_width::<8>(pair, range, report),
    }
}

/// What one comparison holds fixed: the two tensors, the tolerance and the
/// poison's bits.
struct Pair<'a> {
    expected: &'a Tensor,
    actual: &'a Tensor,
    tol: Tolerance,
    poison: u64,
}

/// Elements whose bytes are compared at once before any is looked at.
const EQUAL_RUN: usize = 32;

/// The little-endian element of `N` bytes at `b`.
#[inline(always)]
fn read_bits<const N: usize>(b: &[u8]) -> u64 {
    let mut buf = [0u8; 8];
    buf[..N].copy_from_slice(&b[..N]);
    u64::from_le_bytes(buf)
}

/// [`compare_range`] for elements of `N` bytes.
fn compare_width<const N: usize>(
    pair: &Pair<'_>,
    range: std::ops::Range<usize>,
    report: &mut CompareReport,
) {
    let Pair {
        expected,
        actual,
        tol,
        poison,
    } = *pair;
    let dtype = expected.dtype;
    let element = |i: usize| ElemReport {
        index: i,
        multi_index: multi_index(&expected.shape, i),
        expected: value(expected, i),
        actual: value(actual, i),
    };
    let (e_bytes, a_bytes) = (&expected.data, &actual.data);
    let mut lo = range.start;
    while lo < range.end {
        let hi = (lo + EQUAL_RUN).min(range.end);
        let (e_run, a_run) = (&e_bytes[lo * N..hi * N], &a_bytes[lo * N..hi * N]);
        if e_run == a_run {
            lo = hi;
            continue;
        }
        for (k, (e_el, a_el)) in e_run.chunks_exact(N).zip(a_run.chunks_exact(N)).enumerate() {
            let i = lo + k;
            let (eb, ab) = (read_bits::<N>(e_el), read_bits::<N>(a_el));
            if ab == poison && eb != poison {
                report.unwritten += 1;
                if report.first_unwritten.is_none() {
                    report.first_unwritten = Some(element(i));
                }
                // A float poison is a NaN, which no kernel writes where
                // the golden is not NaN: never written, a failure even
                // where the golden is NaN (NaN matches NaN). An integer
                // poison is a value a kernel may well write (90 for int8,
                // one off a golden of 89 within atol 1): judged by the
                // tolerance like any value.
                if dtype.is_float() {
                    report.mismatches += 1;
                    if report.first_bad.is_none() {
                        report.first_bad = Some(element(i));
                    }
                    continue;
                }
            }
            if eb == ab {
                // Equal bits always match, with zero error (NaN payloads
                // included: a NaN matches a NaN).
                continue;
            }
            let ok = if dtype.is_float() {
                let (e, a) = (bits_to_f64(eb, dtype), bits_to_f64(ab, dtype));
                float_ok(e, a, tol, report)
            } else if dtype == Dtype::Bool {
                false
            } else {
                let (e, a) = (expected.get_i128(i), actual.get_i128(i));
                let abs = (e - a).unsigned_abs() as f64;
                if e != 0 {
                    report.max_rel_err = report.max_rel_err.max(abs / (e.unsigned_abs() as f64));
                }
                report.max_abs_err = report.max_abs_err.max(abs);
                let rel = if e == 0 {
                    f64::INFINITY
                } else {
                    abs / e.unsigned_abs() as f64
                };
                abs == 0.0 || !(abs > tol.atol && rel > tol.rtol)
            };
            if !ok {
                report.mismatches += 1;
                if report.first_bad.is_none() {
                    report.first_bad = Some(element(i));
                }
            }
        }
        lo = hi;
    }
}

fn float_ok(e: f64, a: f64, tol: Tolerance, report: &mut CompareReport) -> bool {
    if e.is_nan() || a.is_nan() {
        return e.is_nan() && a.is_nan();
    }
    if e.is_infinite() || a.is_infinite() {
        return e == a;
    }
    let abs = (e - a).abs();
    report.max_abs_err = report.max_abs_err.max(abs);
    let rel = if e != 0.0 {
        abs / e.abs()
    } else if abs > 0.0 {
        f64::INFINITY
    } else {
        0.0
    };
    if e != 0.0 {
        report.max_rel_err = report.max_rel_err.max(rel);
    }
    !(abs > tol.atol && rel > tol.rtol)
}

/// Elements of `actual` still holding the poison while `expected` does not.
/// The same count as [`CompareReport::unwritten`], without the comparison.
pub fn find_unwritten(
    expected: &Tensor,
    actual: &Tensor,
) -> Result<(usize, Option<ElemReport>), OpError> {
    let r = compare(
        expected,
        actual,
        Tolerance {
            atol: f64::INFINITY,
            rtol: f64::INFINITY,
            max_mismatch_ratio: 0.0,
        },
    )?;
    Ok((r.unwritten, r.first_unwritten))
}

/// The canonical quiet NaN bits, re-exported for callers that build
/// expected tensors by hand.
pub fn canonical_nan_bits(dtype: Dtype) -> u64 {
    quiet_nan_bits(dtype)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tol(t: f64) -> Tolerance {
        Tolerance {
            atol: t,
            rtol: t,
            max_mismatch_ratio: 0.0,
        }
    }

    #[test]
    fn chunked_comparison_counts_every_chunk_and_names_the_first_failure() {
        let n = 3 * COMPARE_CHUNK + 17;
        let mut e = Tensor::zeros(Dtype::Float32, &[n]);
        for i in 0..n {
            e.set_f64(i, i as f64 * 0.5);
        }
        let mut a = e.clone();
        // Failures in the last and the second chunk, an unwritten element
        // in the third, an error within tolerance in the first.
        a.set_f64(n - 1, -1.0);
        a.set_f64(COMPARE_CHUNK + 5, 1e9);
        let poison = poison_bytes(Dtype::Float32);
        let k = 2 * COMPARE_CHUNK + 3;
        a.data[k * 4..k * 4 + 4].copy_from_slice(&poison);
        a.set_f64(10, 5.0 + 1e-6);
        let r = compare(&e, &a, tol(1e-3)).unwrap();
        assert_eq!(r.total, n);
        assert_eq!(r.mismatches, 3);
        assert_eq!(r.unwritten, 1);
        assert_eq!(
            r.first_bad.as_ref().map(|b| b.index),
            Some(COMPARE_CHUNK + 5)
        );
        assert_eq!(r.first_unwritten.as_ref().map(|b| b.index), Some(k));
        assert!(r.max_abs_err >= 1e9 - (COMPARE_CHUNK + 5) as f64);
        // Identical tensors skip every chunk: no error at all.
        let same = compare(&e, &e.clone(), tol(0.0)).unwrap();
        assert!(same.passed());
        assert_eq!((same.max_abs_err, same.unwritten), (0.0, 0));
    }

    fn f32s(v: &[f64]) -> Tensor {
        Tensor::from_f64s(Dtype::Float32, &[v.len()], v)
    }

    #[test]
    fn complex64_compares_part_by_part() {
        let parts = Tensor::from_f64s(
            Dtype::Float32,
            &[3, 2],
            &[1.0, -2.0, 0.5, f64::NAN, 0.0, 3.0],
        );
        let expected = Tensor::from_complex_parts(&parts).unwrap();
        assert_eq!(
            (expected.dtype, expected.shape.clone()),
            (Dtype::Complex64, vec![3])
        );
        let tol = Tolerance {
            atol: 1e-4,
            rtol: 1e-4,
            max_mismatch_ratio: 0.0,
        };
        let same = compare(&expected, &expected.clone(), tol).unwrap();
        assert!(same.passed(), "{same}");
        assert_eq!((same.total, same.dtype), (6, Dtype::Complex64));
        // One imaginary part off: one bad part, at [0, 1].
        let mut off = parts.clone();
        off.set_f64(1, -2.5);
        let r = compare(&expected, &Tensor::from_complex_parts(&off).unwrap(), tol).unwrap();
        assert_eq!(r.mismatches, 1);
        assert_eq!(r.first_bad.as_ref().unwrap().multi_index, vec![0, 1]);
        // An unwritten element is two poisoned parts.
        let poison = poisoned(Dtype::Complex64, &[3]);
        let r = compare(&expected, &poison, tol).unwrap();
        assert_eq!(r.unwritten, 6);
        assert!(!r.passed());
    }

    #[test]
    fn a_mismatch_ratio_lets_that_share_of_elements_fail() {
        // 1 of 1000 elements off: fails by default, passes at 0.001 (the
        // CANN sample check: no more than 0.1% may fail), 2 of 1000 do not.
        let e = f32s(&[1.0; 1000]);
        let mut values = vec![1.0; 1000];
        values[7] = 2.0;
        let one = f32s(&values);
        assert!(!compare(&e, &one, tol(1e-3)).unwrap().passed());
        let ratio = Tolerance {
            max_mismatch_ratio: 0.001,
            ..tol(1e-3)
        };
        let r = compare(&e, &one, ratio).unwrap();
        assert!(r.passed(), "{r}");
        assert!(r.to_string().contains("up to 1 of them may fail"), "{r}");
        values[8] = 2.0;
        assert!(!compare(&e, &f32s(&values), ratio).unwrap().passed());
    }

    #[test]
    fn fails_only_when_both_abs_and_rel_exceed() {
        // expected 1000, actual 1000.5: abs 0.5 > 1e-3 but rel 5e-4 <= 1e-3 -> ok.
        // expected 1e-4, actual 5e-4: rel 4 > 1e-3 but abs 4e-4 <= 1e-3 -> ok.
        // expected 1, actual 1.01: abs 0.01 and rel 0.01 both exceed -> fail.
        // expected 0, actual 0.002: rel infinite, abs 2e-3 > 1e-3 -> fail.
        let e = f32s(&[1000.0, 1e-4, 1.0, 0.0, 2.0]);
        let a = f32s(&[1000.5, 5e-4, 1.01, 0.002, 2.0]);
        let r = compare(&e, &a, tol(1e-3)).unwrap();
        assert_eq!((r.total, r.mismatches), (5, 2));
        let first = r.first_bad.clone().unwrap();
        assert_eq!(first.index, 2);
        assert_eq!(first.expected, ElemValue::Float(1.0));
        assert!((r.max_abs_err - 0.5).abs() < 1e-9);
        assert!((r.max_rel_err - 4.0).abs() < 1e-6, "{}", r.max_rel_err);
        assert!(!r.passed());
        assert_eq!(r.unwritten, 0);
        assert!(r
            .to_string()
            .starts_with("2/5 float32 elements mismatch (atol 0.001, rtol 0.001)"));
    }

    #[test]
    fn nan_and_inf_rules() {
        let inf = f64::INFINITY;
        let e = f32s(&[f64::NAN, f64::NAN, 1.0, inf, inf, -inf, 0.0]);
        let a = f32s(&[f64::NAN, 1.0, f64::NAN, inf, -inf, 1e30, -0.0]);
        let r = compare(&e, &a, tol(1e-3)).unwrap();
        // NaN==NaN ok; NaN vs 1 fail; 1 vs NaN fail; inf==inf ok; inf vs
        // -inf fail; -inf vs finite fail; +0 vs -0 ok.
        assert_eq!(r.mismatches, 4);
        assert_eq!(r.first_bad.unwrap().index, 1);
        // A huge tolerance does not let NaN or inf through.
        let r = compare(&e, &a, tol(1e300)).unwrap();
        assert_eq!(r.mismatches, 4);
    }

    #[test]
    fn integers_are_exact_by_default_and_bool_bytes_exact() {
        let e = Tensor::from_i64s(Dtype::Int32, &[2, 2], &[1, -5, 7, i64::from(i32::MIN)]);
        let a = Tensor::from_i64s(Dtype::Int32, &[2, 2], &[1, -5, 8, i64::from(i32::MIN)]);
        let r = compare(&e, &a, tol(0.0)).unwrap();
        assert_eq!(r.mismatches, 1);
        let bad = r.first_bad.unwrap();
        assert_eq!(bad.multi_index, vec![1, 0]);
        assert_eq!(
            (bad.expected, bad.actual),
            (ElemValue::Int(7), ElemValue::Int(8))
        );
        let e = Tensor {
            dtype: Dtype::Bool,
            shape: vec![3],
            data: vec![1, 0, 1],
        };
        let a = Tensor {
            dtype: Dtype::Bool,
            shape: vec![3],
            data: vec![1, 0, 2],
        };
        let r = compare(&e, &a, tol(10.0)).unwrap();
        assert_eq!(r.mismatches, 1);
        assert_eq!(r.first_bad.unwrap().actual, ElemValue::Bits(2));
    }

    #[test]
    fn fp16_one_ulp_passes_default_tolerance_two_ulps_fail() {
        // 1 ulp at 1.0 is 2^-10 = 9.77e-4 <= 1e-3; 2 ulps exceed both.
        let e = Tensor::from_f64s(Dtype::Float16, &[2], &[1.0, 1.0]);
        let a = Tensor::from_f64s(
            Dtype::Float16,
            &[2],
            &[1.0 + 2f64.powi(-10), 1.0 + 2f64.powi(-9)],
        );
        let r = compare(&e, &a, crate::spec::default_tolerance(Dtype::Float16)).unwrap();
        assert_eq!(r.mismatches, 1);
        assert_eq!(r.first_bad.unwrap().index, 1);
    }

    #[test]
    fn unwritten_elements_are_found() {
        let expected = f32s(&[1.0, 2.0, 3.0, 4.0]);
        let mut actual = poisoned(Dtype::Float32, &[4]);
        actual.set_f64(0, 1.0);
        actual.set_f64(2, 3.0);
        let r = compare(&expected, &actual, tol(1e-4)).unwrap();
        assert_eq!((r.unwritten, r.mismatches), (2, 2));
        let u = r.first_unwritten.clone().unwrap();
        assert_eq!(u.index, 1);
        assert!(matches!(u.actual, ElemValue::Float(v) if v.is_nan()));
        assert!(r.to_string().contains("2 elements never written"));
        // A golden that is the poison value itself is not "unwritten".
        let mut e = Tensor::from_i64s(Dtype::Int32, &[2], &[0x5A5A_5A5A, 1]);
        let a = poisoned(Dtype::Int32, &[2]);
        assert_eq!(find_unwritten(&e, &a).unwrap().0, 1);
        e.set_i64(1, 0x5A5A_5A5A);
        assert_eq!(find_unwritten(&e, &a).unwrap().0, 0);
        // Every dtype's poison differs from zero and, for floats, is a NaN
        // that is not the canonical one.
        for d in Dtype::ALL {
            let p = poisoned(d, &[1]);
            assert_ne!(p.bits(0), 0, "{d}");
            if d.is_float() {
                assert!(p.get_f64(0).is_nan());
                assert_ne!(p.bits(0), canonical_nan_bits(d));
            }
        }
    }

    #[test]
    fn an_unwritten_element_fails_even_where_the_golden_is_nan() {
        for dtype in [Dtype::Float32, Dtype::Float16, Dtype::Bfloat16] {
            let expected = Tensor::from_f64s(dtype, &[3], &[1.0, f64::NAN, 2.0]);
            let mut actual = poisoned(dtype, &[3]);
            actual.set_f64(0, 1.0);
            actual.set_f64(2, 2.0);
            let r = compare(&expected, &actual, tol(1e-3)).unwrap();
            assert_eq!((r.unwritten, r.mismatches), (1, 1), "{dtype}");
            assert!(!r.passed(), "{dtype}");
            assert_eq!(r.first_bad.unwrap().index, 1);
            // A NaN the kernel wrote there is fine.
            actual.set_f64(1, f64::NAN);
            assert!(compare(&expected, &actual, tol(1e-3)).unwrap().passed());
        }
    }

    #[test]
    fn an_integer_equal_to_the_poison_is_judged_by_the_tolerance() {
        // int8's poison is 0x5A = 90: a kernel may write 90 where the
        // golden says 89 and atol is 1.
        let expected = Tensor::from_f64s(Dtype::Int8, &[2], &[89.0, 10.0]);
        let mut actual = poisoned(Dtype::Int8, &[2]);
        actual.set_f64(1, 10.0);
        let loose = Tolerance {
            atol: 1.0,
            rtol: 0.0,
            max_mismatch_ratio: 0.0,
        };
        let r = compare(&expected, &actual, loose).unwrap();
        assert!(r.passed(), "{r}");
        let tight = Tolerance {
            atol: 0.0,
            rtol: 0.0,
            max_mismatch_ratio: 0.0,
        };
        assert!(!compare(&expected, &actual, tight).unwrap().passed());
    }

    #[test]
    fn layout_mismatch_is_an_error() {
        let e = f32s(&[1.0, 2.0]);
        let a = Tensor::from_f64s(Dtype::Float16, &[2], &[1.0, 2.0]);
        assert_eq!(
            compare(&e, &a, tol(1e-3)).unwrap_err().to_string(),
            "cannot compare: expected float32 [2] (8 bytes), actual float16 [2] (4 bytes)"
        );
    }
}
