//! The device layer: where an operator is built, run and profiled.
#![deny(missing_docs)]
