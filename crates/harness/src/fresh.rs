//! Shapes a kernel has not seen: cases drawn near the op.toml's, so that a
//! kernel right only on the listed shapes fails its final judgement.
//!
//! [`proposals`] perturbs the two smallest cases of the operator within
//! the spec's rules: the last dimension grows by one (a tail that is not a
//! multiple of anything the listed cases used) and, for inputs of two or
//! more dimensions, the first one grows by one (another row count). A
//! dimension is changed on every input that has it at the same place
//! (aligned from the right, as broadcasting aligns them; an input with 1
//! there keeps its 1); a dimension whose size appears in an attribute
//! (`size`, `pads`, a reshape target) is left alone, and a perturbed case
//! whose golden rejects the shapes is dropped.
//!
//! The spec cannot say everything a kernel supports (an operator may
//! require aligned rows): [`validated`] keeps only the proposals the
//! operator as given (the user's input) passes, and [`check`] holds a
//! candidate to those.

use crate::eval::{check_case, CheckConfig};
use ascendopt_device::{Artifact, Device};
use ascendopt_op::golden::output_shapes;
use ascendopt_op::package::OpPackage;
use ascendopt_op::spec::{AttrValue, Case};

/// At most this many fresh cases.
pub const MAX_FRESH: usize = 3;

/// Every integer an attribute of `case` holds.
fn attr_ints(case: &Case) -> Vec<i64> {
    let mut out = Vec::new();
    for (_, v) in &case.attrs {
        match v {
            AttrValue::Int(i) => out.push(*i),
            AttrValue::ListInt(l) => out.extend(l.iter().copied()),
            _ => {}
        }
    }
    out
}

/// `case` with the dimension `from_right` places from the end (of the
/// input with the most dimensions) grown by one on every input that has
/// that size there; None when there is no such dimension or an attribute
/// holds its size.
fn grow(case: &Case, from_right: usize, tag: &str) -> Option<Case> {
    let rank = case.inputs.iter().map(|i| i.shape.len()).max()?;
    if from_right >= rank {
        return None;
    }
    // The size there of the first input of full rank that is not a
    // broadcast 1.
    let old = case
        .inputs
        .iter()
        .filter(|i| i.shape.len() == rank)
        .map(|i| i.shape[rank - 1 - from_right])
        .find(|&d| d > 1)?;
    if attr_ints(case).contains(&(old as i64)) {
        return None;
    }
    let new = old + 1;
    let mut out = case.clone();
    out.name = format!("{}~{tag}{new}", case.name);
    let mut changed = false;
    for input in &mut out.inputs {
        let r = input.shape.len();
        if from_right < r {
            let d = &mut input.shape[r - 1 - from_right];
            if *d == old {
                *d = new;
                changed = true;
            }
        }
    }
    changed.then_some(out)
}

/// Cases near the operator's smallest two, within its spec's rules (see
/// the module docs): at most [`MAX_FRESH`], each one its golden accepts.
pub fn proposals(package: &OpPackage) -> Vec<Case> {
    let mut bases: Vec<&Case> = package.cases().iter().collect();
    bases.sort_by_key(|c| c.input_elements());
    let mut out: Vec<Case> = Vec::new();
    for base in bases.iter().take(2) {
        for (from_right, tag) in [(0usize, "tail"), (usize::MAX, "rows")] {
            let rank = base.inputs.iter().map(|i| i.shape.len()).max().unwrap_or(0);
            let from_right = if from_right == usize::MAX {
                if rank < 2 {
                    continue;
                }
                rank - 1
            } else {
                from_right
            };
            let Some(case) = grow(base, from_right, tag) else {
                continue;
            };
            let same_shapes = |c: &Case| {
                c.inputs
                    .iter()
                    .zip(&case.inputs)
                    .all(|(a, b)| a.shape == b.shape)
            };
            if package.cases().iter().any(same_shapes) || out.iter().any(same_shapes) {
                continue;
            }
            // The golden must accept the shapes (a builtin tells up front;
            // a script golden is tried when the case runs).
            if output_shapes(&package.spec, &case).is_err() {
                continue;
            }
            out.push(case);
        }
    }
    out.truncate(MAX_FRESH);
    out
}

fn config(seed: u64) -> CheckConfig {
    CheckConfig {
        case: None,
        seed,
        profile: false,
        deterministic: true,
        timeline: false,
    }
}

/// The proposals the operator as given (`input`, built as `artifact`)
/// passes: the fresh cases its candidates are held to.
pub fn validated(
    device: &dyn Device,
    input: &OpPackage,
    artifact: &Artifact,
    seed: u64,
) -> Vec<Case> {
    proposals(input)
        .into_iter()
        .enumerate()
        .filter(|(i, case)| {
            check_case(
                device,
                artifact,
                input,
                case,
                seed.wrapping_add(*i as u64),
                &config(seed),
            )
            .verdict
            .passed()
        })
        .map(|(_, case)| case)
        .collect()
}

/// A candidate wrong on a fresh shape: the case and how it failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("wrong on a shape it was not tuned for: case {case} ({signature}): {detail}")]
pub struct FreshFailure {
    /// The fresh case.
    pub case: String,
    /// Its shapes and dtypes.
    pub signature: String,
    /// How it failed: the first wrong output with its comparison, or the
    /// launch's or golden's failure.
    pub detail: String,
}

/// Runs `cases` on `candidate` (built as `artifact`) with fresh inputs:
/// Err names the first case it fails and how.
pub fn check(
    device: &dyn Device,
    candidate: &OpPackage,
    artifact: &Artifact,
    cases: &[Case],
    seed: u64,
) -> Result<(), FreshFailure> {
    for (i, case) in cases.iter().enumerate() {
        let got = check_case(
            device,
            artifact,
            candidate,
            case,
            seed.wrapping_add(i as u64),
            &config(seed),
        );
        if !got.verdict.passed() {
            let detail = match &got.verdict {
                crate::eval::CaseVerdict::RunFailed(o) => o.summary(),
                crate::eval::CaseVerdict::GoldenFailed(m)
                | crate::eval::CaseVerdict::Refused(m) => m.clone(),
                _ => got
                    .outputs
                    .iter()
                    .find(|o| !o.report.passed())
                    .map(|o| format!("{}: {}", o.name, o.report))
                    .unwrap_or_else(|| got.verdict.label().to_string()),
            };
            return Err(FreshFailure {
                case: case.name.clone(),
                signature: got.signature.clone(),
                detail,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ascendopt_op::spec::{CaseInput, Dist};
    use ascendopt_op::Dtype;

    fn input(name: &str, shape: &[usize]) -> CaseInput {
        CaseInput {
            name: name.into(),
            list_index: None,
            dtype: Dtype::Float32,
            shape: shape.to_vec(),
            dist: Dist::Uniform {
                low: -1.0,
                high: 1.0,
            },
            specials: Vec::new(),
        }
    }

    fn case(inputs: Vec<CaseInput>, attrs: Vec<(String, AttrValue)>) -> Case {
        Case {
            name: "c".into(),
            layout: ascendopt_op::layout::ArgLayout::plain(inputs.len(), 0),
            inputs,
            outputs: Vec::new(),
            attrs,
            omitted: Vec::new(),
        }
    }

    #[test]
    fn dimensions_grow_on_every_input_that_has_them_and_broadcasts_stay() {
        let c = case(vec![input("x", &[4, 1000]), input("b", &[1, 1000])], vec![]);
        let tail = grow(&c, 0, "tail").unwrap();
        assert_eq!(tail.inputs[0].shape, vec![4, 1001]);
        assert_eq!(tail.inputs[1].shape, vec![1, 1001]);
        let rows = grow(&c, 1, "rows").unwrap();
        assert_eq!(rows.inputs[0].shape, vec![5, 1000]);
        assert_eq!(rows.inputs[1].shape, vec![1, 1000], "a broadcast 1 stays");
        assert_eq!(rows.name, "c~rows5");
        // A size an attribute holds is left alone (a reshape target, pads).
        let linked = case(
            vec![input("x", &[6, 20])],
            vec![("shape".into(), AttrValue::ListInt(vec![120, 20]))],
        );
        assert!(grow(&linked, 0, "tail").is_none());
        assert!(grow(&linked, 1, "rows").is_some());
    }
}
