//! Numerics of the hardware: element loads and stores by dtype, f16/bf16
//! rounding, the Cast round modes, saturation and integer wrap-around.
