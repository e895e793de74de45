//! Timing model of the Ascend 910B2 (in progress).
