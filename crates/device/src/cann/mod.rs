//! The CANN side of the device layer: what can be known of an Ascend NPU
//! machine without running on the chip ([`doctor`], [`npu_smi`]). Building,
//! running and profiling on the chip is not here yet.

pub mod doctor;
pub mod npu_smi;
