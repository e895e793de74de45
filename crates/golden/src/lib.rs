//! The builtin golden references: one `infer` + `compute` pair per built-in
//! operator, in Rust, and [`BUILTINS`], the registry of all of them that
//! the op.toml loader is given (`OpPackage::load(dir, &BUILTINS)`).
//!
//! `ascendopt-op` defines what a builtin golden is
//! ([`ascendopt_op::golden::Builtin`]) and how a spec names and runs one;
//! this crate holds the goldens themselves, so adding an operator's golden
//! is a file (or a row) here and one line in [`TABLES`], never an edit of
//! the op crate.
//!
//! ```
//! use ascendopt_golden::BUILTINS;
//! use ascendopt_op::{builtin_ops_dir, gen_inputs, OpPackage};
//!
//! let pkg = OpPackage::load(&builtin_ops_dir().join("add_custom"), &BUILTINS).unwrap();
//! let case = pkg.case("f32_7").unwrap();
//! let expected = pkg.golden(case, &gen_inputs(case, 42)).unwrap();
//! assert_eq!(expected[0].shape, vec![7]);
//! ```
//!
//! Invariant: knows nothing of devices, the harness or the agent; a golden
//! is a pure function of the case and its inputs.
#![deny(missing_docs)]

mod builtins;
mod common;
mod level1_math;
mod level1_misc;
mod level2_foreach;
mod level2_fused;
mod level2_math;
mod level2_move;
mod level3;
mod level3_attention;
mod level3_cube;
mod level3_image;
mod level3_math;
mod level3_resample;
#[cfg(test)]
mod tests_packages;
#[cfg(test)]
mod testutil;

use ascendopt_op::golden::{Builtin, Builtins};

/// The builtin tables, one per source file of goldens. Adding a file of
/// goldens is one line here.
pub const TABLES: &[&[Builtin]] = &[
    builtins::TABLE,
    level1_math::TABLE,
    level1_misc::TABLE,
    level2_math::TABLE,
    level2_fused::TABLE,
    level2_move::TABLE,
    level2_foreach::TABLE,
    level3::TABLE,
    level3_attention::TABLE,
    level3_math::TABLE,
    level3_image::TABLE,
    level3_cube::TABLE,
    level3_resample::TABLE,
];

/// Every builtin golden of the built-in operators.
pub static BUILTINS: Builtins = Builtins::new(TABLES);
