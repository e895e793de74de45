//! Helpers shared by the builtin golden files: arity and attribute checks,
//! NumPy-style broadcasting of shapes, and rejection messages.

use super::Reject;
use crate::spec::{AttrValue, Case};

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
pub(super) fn float_attr(case: &Case, name: &str) -> Result<f64, String> {
    case.attr(name)
        .and_then(AttrValue::as_f64)
        .ok_or_else(|| format!("attr `{name}` has no numeric value"))
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

/// A rejection as a compute error message.
pub(super) fn msg(r: Reject) -> String {
    format!("{}: {}", r.key, r.message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcasts_like_numpy() {
        assert_eq!(broadcast_shape(&[4, 1, 3], &[5, 1]), Some(vec![4, 5, 3]));
        assert_eq!(broadcast_shape(&[], &[2, 3]), Some(vec![2, 3]));
        assert_eq!(broadcast_shape(&[1, 0], &[3, 1]), Some(vec![3, 0]));
        assert_eq!(broadcast_shape(&[2, 3], &[3, 2]), None);
    }
}
