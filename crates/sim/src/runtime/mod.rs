//! The functional runtime behind the AscendC emulation headers: per-block
//! on-chip memories, GM allocations, queues, DMA, vector and scalar
//! execution, and the recording of the instruction trace.
//!
//! Invariant: the runtime never reads wall-clock time; a launch's outputs
//! and trace depend only on the kernel, its inputs and the seed.

pub mod atomic;
pub mod block;
pub mod copy;
pub mod cube;
pub mod fault;
pub mod fixpipe_quant;
pub mod gm;
pub mod gm_read;
pub mod img2col;
pub mod mix;
pub mod product;
pub mod queue;
pub mod table;
pub mod vec;
