//! The CANN side of the device layer: what can be known of an Ascend NPU
//! machine ([`doctor`], [`npu_smi`]) and what `msprof op` leaves behind
//! ([`msprof`]). Building, running and profiling on the chip is not here
//! yet.

pub mod doctor;
pub mod msprof;
pub mod npu_smi;
