//! GM atomic accumulation (SetAtomicAdd/Max/Min then a UB->GM copy): the
//! element-wise merge of the bytes already in GM with the bytes written.

use crate::abi::sync_kind;
use ascendopt_op::Dtype;
use half::{bf16, f16};

/// What an atomic accumulation cannot do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AtomicUnsupported {
    /// The ABI element-type code names no dtype.
    #[error("element type code {0}")]
    TypeCode(u8),
    /// Accumulation of this dtype is not emulated.
    #[error("atomic accumulation of {0}")]
    Dtype(Dtype),
    /// The atomic mode code is none of add, max and min.
    #[error("atomic mode {0}")]
    Mode(u32),
}

/// Merges `new` into `old` element-wise for atomic `kind` (an
/// `ASC_SYNC_ATOMIC_*` code) and ABI dtype code `dtype`.
pub fn merge(kind: u32, dtype: u8, old: &[u8], new: &[u8]) -> Result<Vec<u8>, AtomicUnsupported> {
    let dt = Dtype::from_abi_code(dtype).ok_or(AtomicUnsupported::TypeCode(dtype))?;
    let size = dt.size();
    let mut out = Vec::with_capacity(old.len());
    for (o, n) in old.chunks(size).zip(new.chunks(size)) {
        if o.len() < size {
            out.extend_from_slice(n);
            continue;
        }
        match dt {
            Dtype::Float32 => {
                let a = f32::from_le_bytes([o[0], o[1], o[2], o[3]]);
                let b = f32::from_le_bytes([n[0], n[1], n[2], n[3]]);
                out.extend_from_slice(
                    &float_op(kind, a as f64, b as f64)
                        .map(|v| v as f32)?
                        .to_le_bytes(),
                );
            }
            Dtype::Float16 => {
                let a = f16::from_le_bytes([o[0], o[1]]).to_f64();
                let b = f16::from_le_bytes([n[0], n[1]]).to_f64();
                out.extend_from_slice(&f16::from_f64(float_op(kind, a, b)?).to_le_bytes());
            }
            Dtype::Bfloat16 => {
                let a = bf16::from_le_bytes([o[0], o[1]]).to_f64();
                let b = bf16::from_le_bytes([n[0], n[1]]).to_f64();
                out.extend_from_slice(&bf16::from_f64(float_op(kind, a, b)?).to_le_bytes());
            }
            Dtype::Int32 => {
                let a = i32::from_le_bytes([o[0], o[1], o[2], o[3]]);
                let b = i32::from_le_bytes([n[0], n[1], n[2], n[3]]);
                out.extend_from_slice(
                    &int_op(kind, a as i64, b as i64)
                        .map(|v| v as i32)?
                        .to_le_bytes(),
                );
            }
            Dtype::Int16 => {
                let a = i16::from_le_bytes([o[0], o[1]]);
                let b = i16::from_le_bytes([n[0], n[1]]);
                out.extend_from_slice(
                    &int_op(kind, a as i64, b as i64)
                        .map(|v| v as i16)?
                        .to_le_bytes(),
                );
            }
            Dtype::Int8 => {
                let v = int_op(kind, o[0] as i8 as i64, n[0] as i8 as i64)? as i8;
                out.push(v as u8);
            }
            other => return Err(AtomicUnsupported::Dtype(other)),
        }
    }
    Ok(out)
}

fn float_op(kind: u32, a: f64, b: f64) -> Result<f64, AtomicUnsupported> {
    Ok(match kind {
        sync_kind::ATOMIC_ADD => a + b,
        sync_kind::ATOMIC_MAX => a.max(b),
        sync_kind::ATOMIC_MIN => a.min(b),
        k => return Err(AtomicUnsupported::Mode(k)),
    })
}

fn int_op(kind: u32, a: i64, b: i64) -> Result<i64, AtomicUnsupported> {
    Ok(match kind {
        sync_kind::ATOMIC_ADD => a.wrapping_add(b),
        sync_kind::ATOMIC_MAX => a.max(b),
        sync_kind::ATOMIC_MIN => a.min(b),
        k => return Err(AtomicUnsupported::Mode(k)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds_floats_and_wraps_ints() {
        let old = 1.5f32.to_le_bytes();
        let new = 2.25f32.to_le_bytes();
        let out = merge(sync_kind::ATOMIC_ADD, 3, &old, &new).unwrap();
        assert_eq!(f32::from_le_bytes([out[0], out[1], out[2], out[3]]), 3.75);
        let out = merge(
            sync_kind::ATOMIC_ADD,
            6,
            &i16::MAX.to_le_bytes(),
            &1i16.to_le_bytes(),
        )
        .unwrap();
        assert_eq!(i16::from_le_bytes([out[0], out[1]]), i16::MIN);
        let out = merge(
            sync_kind::ATOMIC_MAX,
            8,
            &5i32.to_le_bytes(),
            &(-3i32).to_le_bytes(),
        )
        .unwrap();
        assert_eq!(i32::from_le_bytes([out[0], out[1], out[2], out[3]]), 5);
        assert!(merge(sync_kind::ATOMIC_ADD, 11, &[0; 8], &[0; 8]).is_err());
    }
}
