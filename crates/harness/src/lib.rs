//! The evaluation harness building blocks.
#![deny(missing_docs)]

pub mod compare;
pub mod eval;
pub mod ledger;
pub mod pool;
pub mod store;
pub mod verdict;
