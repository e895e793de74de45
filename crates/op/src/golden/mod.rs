//! Golden references: what an operator must output for a case and inputs.
//!
//! A golden is either a builtin (a Rust function registered in
//! [`builtins`]) or a Python script run with python3 + numpy ([`script`]).
//! Builtins also infer output shapes without data, so that op.toml cases
//! are checked when the spec loads and outputs can be allocated before a
//! launch.

mod builtins;
mod common;
mod level1_math;
mod level1_misc;
mod level2_foreach;
mod level2_fused;
mod level2_math;
mod level2_move;
mod level3;
pub mod script;

/// The builtin tables, one per source file of goldens. Adding a file of
/// goldens is one line here.
const TABLES: &[&[Builtin]] = &[
    builtins::TABLE,
    level1_math::TABLE,
    level1_misc::TABLE,
    level2_math::TABLE,
    level2_fused::TABLE,
    level2_move::TABLE,
    level2_foreach::TABLE,
    level3::TABLE,
];

use crate::error::OpError;
use crate::spec::{Case, GoldenSpec, OpSpec};
use crate::tensor::{shape_str, Tensor};

/// Why a builtin rejects a case: the case key to point at (`shapes`,
/// `dtype`, `attrs`) and the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reject {
    /// Key of the case table the problem is about.
    pub key: &'static str,
    /// What is wrong.
    pub message: String,
}

impl Reject {
    /// A rejection about `key`.
    pub fn new(key: &'static str, message: impl Into<String>) -> Reject {
        Reject {
            key,
            message: message.into(),
        }
    }
}

/// Output shapes of a case, computed from input shapes, dtypes and attrs.
pub type InferFn = fn(&Case) -> Result<Vec<Vec<usize>>, Reject>;

/// The outputs for inputs that match the case (count, dtype, shape) and an
/// accepted [`InferFn`]. Outputs have the case's output dtypes.
pub type ComputeFn = fn(&Case, &[Tensor]) -> Result<Vec<Tensor>, String>;

/// A golden implemented in Rust.
#[derive(Debug, Clone, Copy)]
pub struct Builtin {
    /// Name used by `[golden] builtin = "..."`.
    pub name: &'static str,
    /// Shape and dtype checking.
    pub infer: InferFn,
    /// The computation.
    pub compute: ComputeFn,
}

/// Every builtin golden.
pub fn builtins() -> impl Iterator<Item = &'static Builtin> {
    TABLES.iter().flat_map(|t| t.iter())
}

/// A builtin golden by name.
pub fn builtin(name: &str) -> Option<&'static Builtin> {
    builtins().find(|b| b.name == name)
}

/// Output shapes of a case when the golden can tell them without running
/// (builtins); `None` for scripts.
pub fn output_shapes(spec: &OpSpec, case: &Case) -> Result<Option<Vec<Vec<usize>>>, OpError> {
    match &spec.golden {
        GoldenSpec::Builtin(name) => {
            let b = builtin(name).ok_or_else(|| {
                OpError::case(&case.name, format!("no builtin golden named `{name}`"))
            })?;
            let shapes = (b.infer)(case)
                .map_err(|r| OpError::case(&case.name, format!("{}: {}", r.key, r.message)))?;
            Ok(Some(shapes))
        }
        GoldenSpec::Script(_) => Ok(None),
        GoldenSpec::Files(map) => Ok(map
            .get(&case.name)
            .map(|ts| ts.iter().map(|t| t.shape.clone()).collect())),
    }
}

/// Checks that `inputs` are what `case` describes.
pub fn check_inputs(case: &Case, inputs: &[Tensor]) -> Result<(), OpError> {
    if inputs.len() != case.inputs.len() {
        return Err(OpError::case(
            &case.name,
            format!(
                "{} input tensors given, the case has {}",
                inputs.len(),
                case.inputs.len()
            ),
        ));
    }
    for (t, ci) in inputs.iter().zip(&case.inputs) {
        if t.dtype != ci.dtype || t.shape != ci.shape || !t.is_consistent() {
            return Err(OpError::case(
                &case.name,
                format!(
                    "input `{}` is {} {} ({} bytes), the case wants {} {}",
                    ci.name,
                    t.dtype,
                    shape_str(&t.shape),
                    t.data.len(),
                    ci.dtype,
                    shape_str(&ci.shape)
                ),
            ));
        }
    }
    Ok(())
}

/// The expected outputs of `case` for `inputs`, in output order, with the
/// case's output dtypes.
pub fn golden(spec: &OpSpec, case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, OpError> {
    check_inputs(case, inputs)?;
    let outputs = match &spec.golden {
        GoldenSpec::Builtin(name) => {
            let b = builtin(name).ok_or_else(|| {
                OpError::case(&case.name, format!("no builtin golden named `{name}`"))
            })?;
            let shapes = (b.infer)(case)
                .map_err(|r| OpError::case(&case.name, format!("{}: {}", r.key, r.message)))?;
            let outputs = (b.compute)(case, inputs).map_err(|m| OpError::case(&case.name, m))?;
            for ((t, co), shape) in outputs.iter().zip(&case.outputs).zip(&shapes) {
                if &t.shape != shape {
                    return Err(OpError::case(
                        &case.name,
                        format!(
                            "builtin `{name}` gave output `{}` the shape {} but inferred {}",
                            co.name,
                            shape_str(&t.shape),
                            shape_str(shape)
                        ),
                    ));
                }
            }
            outputs
        }
        GoldenSpec::Script(rel) => {
            let dir = spec
                .file
                .parent()
                .unwrap_or_else(|| std::path::Path::new("."));
            script::run(&dir.join(rel), case, inputs)?
        }
        GoldenSpec::Files(map) => map
            .get(&case.name)
            .ok_or_else(|| OpError::case(&case.name, "no expected-output files for this case"))?
            .iter()
            .map(|t| (**t).clone())
            .collect(),
    };
    if outputs.len() != case.outputs.len() {
        return Err(OpError::case(
            &case.name,
            format!(
                "the golden gave {} outputs, the operator has {}",
                outputs.len(),
                case.outputs.len()
            ),
        ));
    }
    for (t, co) in outputs.iter().zip(&case.outputs) {
        if t.dtype != co.dtype || !t.is_consistent() {
            return Err(OpError::case(
                &case.name,
                format!(
                    "the golden gave output `{}` as {}, expected {}",
                    co.name, t.dtype, co.dtype
                ),
            ));
        }
    }
    Ok(outputs)
}
