//! Builtin goldens of the level1_misc operators (issue: operator suite).

use super::Builtin;

/// This file's goldens.
pub(super) const TABLE: &[Builtin] = &[];
