//! The functional runtime behind the AscendC emulation headers: per-block
//! on-chip memories, GM allocations, queues, DMA, vector and scalar
//! execution, and the recording of the instruction trace.

pub mod fault;
pub mod vec;
