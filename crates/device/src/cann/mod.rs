//! The CANN side of the device layer: what can be known of an Ascend NPU
//! machine ([`doctor`], [`npu_smi`]), how an operator package is built for
//! a chip ([`build`], a plan of the documented msopgen flow), the aclnn
//! program that runs and times one case ([`runner`], [`job`]), what
//! `msprof op` leaves behind ([`msprof`], [`chip_profile`]), and the
//! [`device::CannDevice`] that ties them together. None of it has run on
//! a chip.

pub mod build;
pub mod child;
pub mod chip_profile;
pub mod device;
pub mod diagnostics;
pub mod doctor;
pub mod job;
pub mod msprof;
pub mod npu_smi;
pub mod runner;
