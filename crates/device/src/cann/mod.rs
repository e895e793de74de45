//! The CANN side of the device layer: what can be known of an Ascend NPU
//! machine ([`doctor`], [`npu_smi`]), how an operator package is built for
//! a chip ([`build`], a plan of the documented msopgen flow) and what
//! `msprof op` leaves behind ([`msprof`]). Running and profiling on the
//! chip, and a `Device` that ties them together, are not here yet.

pub mod build;
pub mod doctor;
pub mod msprof;
pub mod npu_smi;
