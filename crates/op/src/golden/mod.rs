//! Golden references: what an operator must output for a case and inputs.
//!
//! A golden is a builtin (a Rust function, [`Builtin`]), a Python script run
//! with python3 + numpy ([`script`]) or the expected-output files a package
//! ships. This crate defines what a builtin is and runs it; the builtins
//! themselves live above it (the `ascendopt-golden` crate), and the loader
//! gets them as a [`Builtins`] registry passed in
//! ([`crate::OpPackage::load`]), so adding an operator never edits this
//! crate. Builtins also infer output shapes without data, so that op.toml
//! cases are checked when the spec loads and outputs can be allocated
//! before a launch.

pub mod script;

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

/// Why a builtin cannot compute a case and its inputs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GoldenError {
    /// The case breaks a rule of the golden (the shared guards its
    /// [`InferFn`] also applies, or a check of the input values): names the
    /// case key the problem is about.
    #[error("{}: {}", .0.key, .0.message)]
    Rejected(Reject),
}

impl From<Reject> for GoldenError {
    fn from(reject: Reject) -> GoldenError {
        GoldenError::Rejected(reject)
    }
}

/// Output shapes of a case, computed from input shapes, dtypes and attrs.
pub type InferFn = fn(&Case) -> Result<Vec<Vec<usize>>, Reject>;

/// The outputs for inputs that match the case (count, dtype, shape) and an
/// accepted [`InferFn`]. Outputs have the case's output dtypes.
pub type ComputeFn = fn(&Case, &[Tensor]) -> Result<Vec<Tensor>, GoldenError>;

/// A golden implemented in Rust.
#[derive(Clone, Copy)]
pub struct Builtin {
    /// Name used by `[golden] builtin = "..."`.
    pub name: &'static str,
    /// Shape and dtype checking.
    pub infer: InferFn,
    /// The computation.
    pub compute: ComputeFn,
}

/// A builtin is its name: the registry holds one builtin per name.
impl PartialEq for Builtin {
    fn eq(&self, other: &Builtin) -> bool {
        self.name == other.name
    }
}

impl Eq for Builtin {}

impl std::fmt::Debug for Builtin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Builtin({:?})", self.name)
    }
}

/// The builtin goldens a spec may name, looked up by name: tables of
/// [`Builtin`]s that the layer owning them passes to the loader
/// (`ascendopt_golden::BUILTINS` holds every built-in operator's).
#[derive(Debug, Clone, Copy)]
pub struct Builtins {
    tables: &'static [&'static [Builtin]],
}

impl Builtins {
    /// A registry over `tables`, searched in order.
    pub const fn new(tables: &'static [&'static [Builtin]]) -> Builtins {
        Builtins { tables }
    }

    /// No builtins: specs must name a script or expected-output files.
    pub const NONE: Builtins = Builtins { tables: &[] };

    /// Every builtin, in table order.
    pub fn iter(&self) -> impl Iterator<Item = &'static Builtin> {
        self.tables.iter().flat_map(|t| t.iter())
    }

    /// A builtin by name.
    pub fn get(&self, name: &str) -> Option<&'static Builtin> {
        self.iter().find(|b| b.name == name)
    }
}

/// Output shapes of a case when the golden can tell them without running
/// (builtins); `None` for scripts.
pub fn output_shapes(spec: &OpSpec, case: &Case) -> Result<Option<Vec<Vec<usize>>>, OpError> {
    match &spec.golden {
        GoldenSpec::Builtin(b) => {
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
        GoldenSpec::Builtin(b) => {
            let name = b.name;
            let shapes = (b.infer)(case)
                .map_err(|r| OpError::case(&case.name, format!("{}: {}", r.key, r.message)))?;
            let outputs = (b.compute)(case, inputs).map_err(|source| OpError::Golden {
                case: case.name.clone(),
                builtin: name,
                source,
            })?;
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

/// Stand-in builtins for this crate's unit tests: the real goldens live
/// above this crate (`ascendopt-golden`, whose tests run them on the
/// built-in packages). A stand-in accepts any case, gives each output the
/// first input's shape, and computes nothing.
#[cfg(test)]
pub(crate) mod testing {
    use super::{Builtin, Builtins, GoldenError, Reject};
    use crate::spec::Case;
    use crate::tensor::Tensor;

    fn first_shape(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
        let shape = case
            .inputs
            .first()
            .map(|i| i.shape.clone())
            .unwrap_or_default();
        Ok(vec![shape; case.outputs.len()])
    }

    fn nothing(_: &Case, _: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
        Err(Reject::new("golden", "a stand-in builtin computes nothing").into())
    }

    const fn stand_in(name: &'static str) -> Builtin {
        Builtin {
            name,
            infer: first_shape,
            compute: nothing,
        }
    }

    /// `add_custom`, `muls`, `sqrt`, `angle_v2` and `logical_or`.
    pub(crate) static BUILTINS: Builtins = Builtins::new(&[&[
        stand_in("add_custom"),
        stand_in("muls"),
        stand_in("sqrt"),
        stand_in("angle_v2"),
        stand_in("logical_or"),
    ]]);
}
