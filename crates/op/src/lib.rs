//! Operator packages: the `op.toml` spec, test cases, tensors and golden
//! references.
//!
//! An operator package (`ops/<name>/`) holds an `op.toml`, msopgen-style
//! `op_host/` and `op_kernel/` sources and optionally a golden script; the
//! schema is documented in `ops/README-schema.md`. This crate loads and
//! validates packages ([`OpPackage::load`]), generates fresh inputs for a
//! case ([`gen_inputs`]), computes the expected outputs ([`golden()`]),
//! compares a kernel's outputs with them ([`compare::compare`]) and reads and
//! rewrites the tunable tiling knobs of the host code ([`tiling`]). The
//! builtin goldens are not here: the loader is given them as a
//! [`golden::Builtins`] registry (every built-in operator's is
//! `ascendopt_golden::BUILTINS`, a crate above this one).
//!
//! ```
//! use ascendopt_op::golden::{Builtin, Builtins, GoldenError, Reject};
//! use ascendopt_op::{compare, gen_inputs, Case, OpSpec, Tensor};
//! use std::path::Path;
//!
//! // A builtin golden: the output is the input.
//! fn same(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
//!     Ok(vec![case.inputs[0].shape.clone()])
//! }
//! fn copy(_: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
//!     Ok(vec![inputs[0].clone()])
//! }
//! static BUILTINS: Builtins =
//!     Builtins::new(&[&[Builtin { name: "copy", infer: same, compute: copy }]]);
//!
//! let text = r#"
//! [op]
//! name = "copy"
//! level = 1
//! op_type = "Copy"
//! [[inputs]]
//! name = "x"
//! dtypes = ["float32"]
//! [[outputs]]
//! name = "y"
//! dtype = { same_as = "x" }
//! [[cases]]
//! name = "f32_7"
//! shapes = [[7]]
//! dtype = "float32"
//! "#;
//! let spec = OpSpec::parse(text, Path::new("copy/op.toml"), &BUILTINS).unwrap();
//! let case = spec.case("f32_7").unwrap();
//! let inputs = gen_inputs(case, 42);
//! let expected = ascendopt_op::golden(&spec, case, &inputs).unwrap();
//! // A kernel that never wrote its output:
//! let out = compare::poisoned(expected[0].dtype, &expected[0].shape);
//! let report = compare::compare(&expected[0], &out, case.outputs[0].tolerance).unwrap();
//! assert!(!report.passed());
//! assert_eq!(report.unwritten, 7);
//! ```
//!
//! Invariant: this crate knows nothing of the simulator, the device or the
//! agent; it only describes operators and computes what they should output.
#![deny(missing_docs)]

pub mod compare;
pub mod dtype;
pub mod error;
pub mod float;
pub mod gen;
pub mod golden;
pub mod import;
pub mod layout;
pub mod npy;
pub mod opdef;
pub mod package;
pub mod spec;
pub mod tensor;
pub mod tiling;

pub use compare::{compare, CompareReport};
pub use dtype::Dtype;
pub use error::{KeyPath, OpError, PathSeg, SpecError};
pub use gen::gen_inputs;
pub use golden::golden;
pub use package::{builtin_ops_dir, OpPackage};
pub use spec::{Case, OpSpec};
pub use tensor::Tensor;
