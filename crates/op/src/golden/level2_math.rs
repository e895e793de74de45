//! Builtin goldens of the level2_math operators (issue: operator suite).

use super::Builtin;

/// This file's goldens.
pub(super) const TABLE: &[Builtin] = &[];
