//! Operator packages: the `op.toml` spec, test cases, tensors and golden
//! references.
//!
//! Invariant: this crate knows nothing of the simulator, the device or the
//! agent; it only describes operators and computes what they should output.
#![deny(missing_docs)]

pub mod dtype;
pub mod error;
pub mod float;
pub mod spec;
pub mod tensor;

pub use dtype::Dtype;
pub use error::{KeyPath, OpError, PathSeg, SpecError};
pub use tensor::Tensor;
