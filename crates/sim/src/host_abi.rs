//! `#[repr(C)]` mirrors of `include/ascendopt/host_abi.h`, the call from the
//! worker into a compiled host (op_host) library.
