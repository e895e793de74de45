//! The experience bank (issue 6, items 1, 2 and 5): verified slow → fast
//! edits with the evidence that they matter, stored in SQLite, found again
//! by bottleneck text, profile signature and code features.
#![deny(missing_docs)]

pub mod diff;
pub mod entry;
pub mod error;
pub mod signature;
pub mod store;
pub mod text;
