//! The CANN side of the device layer: what can be known of an Ascend NPU
//! machine ([`doctor`], [`npu_smi`]), how an operator package is built for
//! a chip ([`build`], a plan of the documented msopgen flow), the aclnn
//! program that runs and times one case ([`runner`]) and what `msprof op`
//! leaves behind ([`msprof`]). A `Device` that ties them together, and
//! any run on a real chip, are not here yet.

pub mod build;
pub mod doctor;
pub mod msprof;
pub mod npu_smi;
pub mod runner;
