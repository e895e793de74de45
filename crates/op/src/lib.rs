//! Operator packages: the `op.toml` spec, test cases, tensors and golden
//! references.
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
pub mod npy;
pub mod package;
pub mod spec;
pub mod tensor;
pub mod tiling;

pub use dtype::Dtype;
pub use error::{KeyPath, OpError, PathSeg, SpecError};
pub use gen::gen_inputs;
pub use golden::golden;
pub use package::{builtin_ops_dir, OpPackage};
pub use spec::{Case, OpSpec};
pub use tensor::Tensor;
