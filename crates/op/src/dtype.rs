//! Element types of operator tensors, with their op.toml names, sizes and
//! the codes of the simulator ABI (`AscDtype` in `abi.h`).

use serde::{Deserialize, Serialize};
use std::fmt;

/// An element type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Dtype {
    /// IEEE binary16 (`half`).
    Float16,
    /// bfloat16 (`bfloat16_t`).
    Bfloat16,
    /// IEEE binary32.
    Float32,
    /// Signed 8-bit integer.
    Int8,
    /// Unsigned 8-bit integer.
    Uint8,
    /// Signed 16-bit integer.
    Int16,
    /// Unsigned 16-bit integer.
    Uint16,
    /// Signed 32-bit integer.
    Int32,
    /// Unsigned 32-bit integer.
    Uint32,
    /// Signed 64-bit integer.
    Int64,
    /// Unsigned 64-bit integer.
    Uint64,
    /// Boolean, one byte (0 or 1).
    Bool,
    /// IEEE binary64.
    Float64,
    /// Complex number of two IEEE binary32, real part first (8 bytes,
    /// interleaved `re, im`). Kernels address it as float pairs.
    Complex64,
}

impl Dtype {
    /// Every dtype, in ABI code order.
    pub const ALL: [Dtype; 14] = [
        Dtype::Float16,
        Dtype::Bfloat16,
        Dtype::Float32,
        Dtype::Int8,
        Dtype::Uint8,
        Dtype::Int16,
        Dtype::Uint16,
        Dtype::Int32,
        Dtype::Uint32,
        Dtype::Int64,
        Dtype::Uint64,
        Dtype::Bool,
        Dtype::Float64,
        Dtype::Complex64,
    ];

    /// Size of one element in bytes.
    pub fn size(self) -> usize {
        match self {
            Dtype::Int8 | Dtype::Uint8 | Dtype::Bool => 1,
            Dtype::Float16 | Dtype::Bfloat16 | Dtype::Int16 | Dtype::Uint16 => 2,
            Dtype::Float32 | Dtype::Int32 | Dtype::Uint32 => 4,
            Dtype::Int64 | Dtype::Uint64 | Dtype::Float64 | Dtype::Complex64 => 8,
        }
    }

    /// The name used in op.toml (`float16`, `float32`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Dtype::Float16 => "float16",
            Dtype::Bfloat16 => "bfloat16",
            Dtype::Float32 => "float32",
            Dtype::Int8 => "int8",
            Dtype::Uint8 => "uint8",
            Dtype::Int16 => "int16",
            Dtype::Uint16 => "uint16",
            Dtype::Int32 => "int32",
            Dtype::Uint32 => "uint32",
            Dtype::Int64 => "int64",
            Dtype::Uint64 => "uint64",
            Dtype::Bool => "bool",
            Dtype::Float64 => "float64",
            Dtype::Complex64 => "complex64",
        }
    }

    /// Parses an op.toml name; also accepts the short forms `half`, `float`,
    /// `fp16`, `fp32`, `bf16`.
    pub fn parse(name: &str) -> Option<Dtype> {
        let d = match name {
            "float16" | "half" | "fp16" => Dtype::Float16,
            "bfloat16" | "bf16" => Dtype::Bfloat16,
            "float32" | "float" | "fp32" => Dtype::Float32,
            "int8" => Dtype::Int8,
            "uint8" => Dtype::Uint8,
            "int16" => Dtype::Int16,
            "uint16" => Dtype::Uint16,
            "int32" => Dtype::Int32,
            "uint32" => Dtype::Uint32,
            "int64" => Dtype::Int64,
            "uint64" => Dtype::Uint64,
            "bool" => Dtype::Bool,
            "float64" | "double" => Dtype::Float64,
            "complex64" => Dtype::Complex64,
            _ => return None,
        };
        Some(d)
    }

    /// The `AscDtype` code of the simulator ABI.
    pub fn abi_code(self) -> u8 {
        match self {
            Dtype::Float16 => 1,
            Dtype::Bfloat16 => 2,
            Dtype::Float32 => 3,
            Dtype::Int8 => 4,
            Dtype::Uint8 => 5,
            Dtype::Int16 => 6,
            Dtype::Uint16 => 7,
            Dtype::Int32 => 8,
            Dtype::Uint32 => 9,
            Dtype::Int64 => 10,
            Dtype::Uint64 => 11,
            Dtype::Bool => 12,
            Dtype::Float64 => 13,
            Dtype::Complex64 => 14,
        }
    }

    /// Inverse of [`Dtype::abi_code`].
    pub fn from_abi_code(code: u8) -> Option<Dtype> {
        Dtype::ALL.iter().copied().find(|d| d.abi_code() == code)
    }

    /// True for floating-point types.
    pub fn is_float(self) -> bool {
        matches!(
            self,
            Dtype::Float16 | Dtype::Bfloat16 | Dtype::Float32 | Dtype::Float64
        )
    }

    /// True for signed integer types.
    pub fn is_signed_int(self) -> bool {
        matches!(
            self,
            Dtype::Int8 | Dtype::Int16 | Dtype::Int32 | Dtype::Int64
        )
    }

    /// True for signed and unsigned integer types (not bool).
    pub fn is_int(self) -> bool {
        !self.is_float() && !self.is_complex() && self != Dtype::Bool
    }

    /// True for complex types.
    pub fn is_complex(self) -> bool {
        self == Dtype::Complex64
    }

    /// The dtype of each part of a complex type (`float32` for
    /// `complex64`); None for real types.
    pub fn complex_part(self) -> Option<Dtype> {
        match self {
            Dtype::Complex64 => Some(Dtype::Float32),
            _ => None,
        }
    }

    /// The `ge::DataType` code of this dtype, as used by attributes such as
    /// cast's `dst_type`. Source: the `ge::DataType` enum of the CANN graph
    /// headers (DT_FLOAT = 0, DT_FLOAT16 = 1, DT_INT8 = 2, DT_INT32 = 3,
    /// DT_UINT8 = 4, DT_INT16 = 6, DT_UINT16 = 7, DT_UINT32 = 8, DT_INT64 = 9,
    /// DT_UINT64 = 10, DT_DOUBLE = 11, DT_BOOL = 12, DT_COMPLEX64 = 16,
    /// DT_BF16 = 27); the
    /// codes used by the benchmark operators are listed in
    /// shared/ref/operators-l1-l3.md ("cast").
    pub fn ge_code(self) -> i64 {
        match self {
            Dtype::Float32 => 0,
            Dtype::Float16 => 1,
            Dtype::Int8 => 2,
            Dtype::Int32 => 3,
            Dtype::Uint8 => 4,
            Dtype::Int16 => 6,
            Dtype::Uint16 => 7,
            Dtype::Uint32 => 8,
            Dtype::Int64 => 9,
            Dtype::Uint64 => 10,
            Dtype::Float64 => 11,
            Dtype::Bool => 12,
            Dtype::Complex64 => 16,
            Dtype::Bfloat16 => 27,
        }
    }

    /// Inverse of [`Dtype::ge_code`].
    pub fn from_ge_code(code: i64) -> Option<Dtype> {
        Dtype::ALL.iter().copied().find(|d| d.ge_code() == code)
    }

    /// The value range of an integer dtype (bool: 0..=1); None for floats
    /// and complex.
    pub fn int_range(self) -> Option<(i128, i128)> {
        if self.is_float() || self.is_complex() {
            return None;
        }
        if self == Dtype::Bool {
            return Some((0, 1));
        }
        let bits = self.size() as u32 * 8;
        Some(if self.is_signed_int() {
            (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
        } else {
            (0, (1i128 << bits) - 1)
        })
    }

    /// The names accepted by [`Dtype::parse`] for every dtype, for messages.
    pub fn all_names() -> String {
        Dtype::ALL
            .iter()
            .map(|d| d.name())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl fmt::Display for Dtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abi_codes_round_trip() {
        for d in Dtype::ALL {
            assert_eq!(Dtype::from_abi_code(d.abi_code()), Some(d));
            assert_eq!(Dtype::parse(d.name()), Some(d));
        }
        assert_eq!(Dtype::from_abi_code(0), None);
        for d in Dtype::ALL {
            assert_eq!(Dtype::from_ge_code(d.ge_code()), Some(d));
        }
        assert_eq!(Dtype::from_ge_code(27), Some(Dtype::Bfloat16));
        assert_eq!(Dtype::from_ge_code(3), Some(Dtype::Int32));
        assert_eq!(Dtype::from_ge_code(5), None);
        assert_eq!(Dtype::Int8.int_range(), Some((-128, 127)));
        assert_eq!(Dtype::Uint16.int_range(), Some((0, 65535)));
        assert_eq!(Dtype::Uint64.int_range(), Some((0, i128::from(u64::MAX))));
        assert_eq!(Dtype::Float16.int_range(), None);
        assert_eq!(Dtype::parse("complex64"), Some(Dtype::Complex64));
        assert_eq!(Dtype::Complex64.size(), 8);
        assert_eq!(Dtype::Complex64.int_range(), None);
        assert!(!Dtype::Complex64.is_int() && !Dtype::Complex64.is_float());
        assert_eq!(Dtype::Complex64.complex_part(), Some(Dtype::Float32));
        assert_eq!(Dtype::parse("complex128"), None);
    }
}
