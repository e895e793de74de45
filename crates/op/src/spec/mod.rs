//! The op.toml schema: parsing, validation and the validated spec types.

pub(crate) mod locate;
