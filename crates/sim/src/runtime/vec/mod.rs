//! Vector instructions (PIPE_V): functional semantics of every vector API on
//! a core's unified buffer.
//!
//! Entry point: [`execute`]. It decodes an [`AscVecOp`], checks alignment and
//! bounds of every operand, computes the result into `ub`, and returns what
//! the hardware did ([`VecEffect`]) for the trace.

use crate::abi::AscVecOp;
use crate::runtime::fault::Fault;
use crate::trace::Region;

/// The vector mask registers of a core.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MaskState {
    /// true after SetMaskCount (counter mode), false in normal mode.
    pub counter: bool,
    /// Low 64 lanes (normal mode) or the element count (counter mode).
    pub lo: u64,
    /// High 64 lanes (normal mode, 16-bit types).
    pub hi: u64,
}

impl MaskState {
    /// The state after reset: normal mode, all lanes on.
    pub fn reset() -> MaskState {
        MaskState {
            counter: false,
            lo: u64::MAX,
            hi: u64::MAX,
        }
    }
}

/// What one vector instruction did, for the trace.
#[derive(Debug, Clone, PartialEq)]
pub struct VecEffect {
    /// Hardware repeats issued.
    pub repeats: u32,
    /// Active elements processed.
    pub elems: u64,
    /// UB regions read (bounding ranges).
    pub reads: Vec<Region>,
    /// UB regions written (bounding ranges).
    pub writes: Vec<Region>,
}

/// Executes one vector instruction on `ub`.
pub fn execute(ub: &mut [u8], mask: &MaskState, op: &AscVecOp) -> Result<VecEffect, Fault> {
    let _ = (ub, mask, op);
    Err(Fault::Unsupported {
        api: "vector",
        what: "vector instructions are not implemented yet".into(),
    })
}

pub mod arith;
pub mod cast;
pub mod compare;
pub mod gather;
pub mod lanes;
pub mod reduce;
