//! Faults a kernel can commit, found by the runtime while executing an API
//! call. The runtime attaches the call's source location and ends the run.

use crate::trace::Mem;
use thiserror::Error;

/// What went wrong inside one API call.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum Fault {
    /// An operand's on-chip address is not aligned as the API requires.
    #[error("{operand} address {addr:#x} in {mem} is not {align}-byte aligned")]
    Unaligned {
        /// Which operand (`dst`, `src0`, ...).
        operand: &'static str,
        /// The memory.
        mem: &'static str,
        /// The byte address.
        addr: u64,
        /// Required alignment in bytes.
        align: u64,
    },
    /// An access past the end of an on-chip memory.
    #[error("{operand} accesses {mem} bytes [{start:#x}, {end:#x}) beyond its {cap} bytes")]
    LocalOutOfRange {
        /// Which operand.
        operand: &'static str,
        /// The memory.
        mem: &'static str,
        /// First byte.
        start: u64,
        /// One past the last byte.
        end: u64,
        /// Size of the memory.
        cap: u64,
    },
    /// A GM access outside every allocation.
    #[error("{operand} accesses GM bytes [{addr:#x}, +{len}) outside any allocation{near}")]
    GmOutOfBounds {
        /// Which operand.
        operand: &'static str,
        /// Address of the first byte.
        addr: u64,
        /// Length in bytes.
        len: u64,
        /// Description of the nearest allocation, if any.
        near: String,
    },
    /// An on-chip memory is full.
    #[error("{mem} overflow: {what} needs {need} bytes but only {have} of {cap} are free")]
    Overflow {
        /// The memory.
        mem: &'static str,
        /// What asked.
        what: String,
        /// Bytes asked.
        need: u64,
        /// Bytes free.
        have: u64,
        /// Capacity.
        cap: u64,
    },
    /// An operation with an element type or memory it does not support.
    #[error("{api} does not support {what}")]
    Unsupported {
        /// The API.
        api: &'static str,
        /// What is not supported.
        what: String,
    },
    /// A parameter outside its documented range.
    #[error("invalid argument to {api}: {what}")]
    InvalidArg {
        /// The API.
        api: &'static str,
        /// What is wrong.
        what: String,
    },
    /// Would block forever on hardware (empty DeQue, full AllocTensor, ...).
    #[error("deadlock: {what}")]
    Deadlock {
        /// What would block.
        what: String,
    },
    /// An access to a buffer that was never backed by on-chip memory: one
    /// InitBuffer placed past the memory's end, or a TBuf never
    /// initialised. Allocating it is no fault (the device's TPipe does not
    /// check, and kernels allocate such buffers for dtypes that never use
    /// them); using it is.
    #[error("{origin}; the kernel uses it: {access}")]
    UnbackedUse {
        /// How the buffer came about (an `Overflow` message, or the TBuf
        /// story).
        origin: String,
        /// The access (a `LocalOutOfRange` message).
        access: String,
    },
    /// The kernel's own code called code outside the kernel library
    /// through a pointer (the host library, the C library, the runtime):
    /// that code is not instrumented, so its work would go uncounted.
    #[error("the kernel's code calls {what} at {target:#x} through a pointer: code outside the kernel library is not counted by the timing model")]
    StrayCall {
        /// The call's target.
        target: u64,
        /// The object and offset of the target, or what it is.
        what: String,
    },
    /// The kernel called `trap`/`ASSERT`.
    #[error("kernel trap: {message}")]
    Trap {
        /// The message.
        message: String,
    },
}

impl Fault {
    /// Name of a memory for messages.
    pub fn mem_name(mem: Mem) -> &'static str {
        mem.name()
    }
}
