//! Vector instructions (PIPE_V): functional semantics of every vector API on
//! a core's unified buffer.
//!
//! Entry point: [`execute`]. It decodes an [`AscVecOp`], checks alignment and
//! bounds of every operand, computes the result into `ub`, and returns what
//! the hardware did ([`VecEffect`]) for the trace.

use crate::abi::AscVecOp;
use crate::runtime::fault::Fault;
use crate::trace::{Region, VecOp};

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

/// Executes one vector instruction on `ub`: dispatches by op code to the
/// family that implements it (arithmetic, Cast, compare/select,
/// reductions, gather/fill). Every family checks its operands (in UB,
/// 32-byte aligned, in bounds) through [`lanes::plan`] before it writes.
pub fn execute(ub: &mut [u8], mask: &MaskState, op: &AscVecOp) -> Result<VecEffect, Fault> {
    use VecOp::*;
    let kind = VecOp::from_code(op.op).ok_or_else(|| Fault::InvalidArg {
        api: "vector",
        what: format!("unknown vector op code {}", op.op),
    })?;
    match kind {
        Compare | Compares | Select => compare::execute(ub, mask, op),
        ReduceSum | ReduceMax | ReduceMin | WholeReduceSum | WholeReduceMax | WholeReduceMin
        | BlockReduceSum | BlockReduceMax | BlockReduceMin | PairReduceSum => reduce::execute(ub, mask, op),
        Brcb | Gather | CreateVecIndex => gather::execute(ub, mask, op),
        Cast => cast::execute(ub, mask, op),
        Add | Sub | Mul | Div | Max | Min | And | Or | AddRelu | FusedMulAdd | MulAddDst | SubRelu
        | Exp | Ln | Abs | Reciprocal | Sqrt | Rsqrt | Relu | Not | Neg | Adds | Muls | Maxs | Mins
        | Subs | Divs | LeakyRelu | Axpy | ShiftLeft | ShiftRight | Duplicate => arith::execute(ub, mask, op),
    }
}

pub mod arith;
pub mod cast;
pub mod compare;
pub mod gather;
pub mod lanes;
pub mod reduce;
