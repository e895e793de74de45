//! (in progress)

use crate::abi::AscVecOp;
use crate::runtime::fault::Fault;
use super::{MaskState, VecEffect};

/// Executes one instruction of this family.
pub fn execute(ub: &mut [u8], mask: &MaskState, op: &AscVecOp) -> Result<VecEffect, Fault> {
    let _ = (ub, mask);
    Err(Fault::Unsupported { api: "vector", what: format!("op code {} is not implemented yet", op.op) })
}
