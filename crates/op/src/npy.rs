//! Minimal `.npy` (NumPy array file, format versions 1-3) reading and
//! writing for golden scripts: little-endian, C order, the dtypes of
//! [`Dtype`] except bfloat16, which NumPy lacks and is written as float32
//! (exactly).

use crate::error::OpError;
use crate::tensor::{numel, Tensor};
use crate::Dtype;

const MAGIC: &[u8] = b"\x93NUMPY";

fn descr(dtype: Dtype) -> &'static str {
    match dtype {
        Dtype::Float16 => "<f2",
        Dtype::Bfloat16 | Dtype::Float32 => "<f4",
        Dtype::Float64 => "<f8",
        Dtype::Int8 => "|i1",
        Dtype::Uint8 => "|u1",
        Dtype::Int16 => "<i2",
        Dtype::Uint16 => "<u2",
        Dtype::Int32 => "<i4",
        Dtype::Uint32 => "<u4",
        Dtype::Int64 => "<i8",
        Dtype::Uint64 => "<u8",
        Dtype::Bool => "|b1",
        Dtype::Complex64 => "<c8",
    }
}

fn dtype_of_descr(d: &str) -> Option<Dtype> {
    let (order, code) = d.split_at(1.min(d.len()));
    if !matches!(order, "<" | "|" | "=") {
        return None;
    }
    Some(match code {
        "f2" | "e" => Dtype::Float16,
        "f4" => Dtype::Float32,
        "f8" => Dtype::Float64,
        "i1" => Dtype::Int8,
        "u1" => Dtype::Uint8,
        "i2" => Dtype::Int16,
        "u2" => Dtype::Uint16,
        "i4" => Dtype::Int32,
        "u4" => Dtype::Uint32,
        "i8" => Dtype::Int64,
        "u8" => Dtype::Uint64,
        "b1" => Dtype::Bool,
        "c8" => Dtype::Complex64,
        _ => return None,
    })
}

/// The `.npy` bytes of a tensor (format 1.0; bfloat16 becomes float32).
pub fn write_npy(t: &Tensor) -> Vec<u8> {
    let t = if t.dtype == Dtype::Bfloat16 {
        let mut f = Tensor::zeros(Dtype::Float32, &t.shape);
        for i in 0..t.numel() {
            f.set_f64(i, t.get_f64(i));
        }
        std::borrow::Cow::Owned(f)
    } else {
        std::borrow::Cow::Borrowed(t)
    };
    let shape = match t.shape.len() {
        0 => "()".to_string(),
        1 => format!("({},)", t.shape[0]),
        _ => {
            let dims: Vec<String> = t.shape.iter().map(|d| d.to_string()).collect();
            format!("({})", dims.join(", "))
        }
    };
    let mut header = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': {shape}, }}",
        descr(t.dtype)
    );
    // Pad so that magic + version + length + header is a multiple of 64.
    let unpadded = MAGIC.len() + 2 + 2 + header.len() + 1;
    header.push_str(&" ".repeat((64 - unpadded % 64) % 64));
    header.push('\n');
    let mut out = Vec::with_capacity(MAGIC.len() + 4 + header.len() + t.data.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[1, 0]);
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(&t.data);
    out
}

/// Parses `.npy` bytes; `what` names the array in errors.
pub fn read_npy(bytes: &[u8], what: &str) -> Result<Tensor, OpError> {
    let err = |m: String| OpError::Npy {
        what: what.to_string(),
        message: m,
    };
    if bytes.len() < 10 || &bytes[..6] != MAGIC {
        return Err(err("not an .npy file (bad magic)".to_string()));
    }
    let (header_len, start) = match bytes[6] {
        1 => (usize::from(u16::from_le_bytes([bytes[8], bytes[9]])), 10),
        2 | 3 if bytes.len() >= 12 => (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        ),
        v => return Err(err(format!("unsupported .npy version {v}"))),
    };
    let header = bytes
        .get(start..start + header_len)
        .ok_or_else(|| err("truncated header".to_string()))?;
    let header = std::str::from_utf8(header).map_err(|_| err("header is not text".to_string()))?;
    let value_of = |key: &str| -> Option<&str> {
        let k = format!("'{key}':");
        let p = header.find(&k)? + k.len();
        Some(header[p..].trim_start())
    };
    let d = value_of("descr").ok_or_else(|| err("no descr".to_string()))?;
    let d = d
        .strip_prefix('\'')
        .and_then(|r| r.split('\'').next())
        .ok_or_else(|| err("bad descr".to_string()))?;
    let dtype = dtype_of_descr(d).ok_or_else(|| {
        err(format!(
            "unsupported dtype `{d}` (little-endian numbers and bool only)"
        ))
    })?;
    let fortran = value_of("fortran_order").ok_or_else(|| err("no fortran_order".to_string()))?;
    if fortran.starts_with("True") {
        return Err(err(
            "Fortran-order arrays are not supported; save with np.ascontiguousarray".to_string(),
        ));
    }
    let s = value_of("shape").ok_or_else(|| err("no shape".to_string()))?;
    let inner = s
        .strip_prefix('(')
        .and_then(|r| r.split(')').next())
        .ok_or_else(|| err("bad shape".to_string()))?;
    let mut shape = Vec::new();
    for part in inner.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let part = part.trim_end_matches('L');
        shape.push(
            part.parse::<usize>()
                .map_err(|_| err(format!("bad dimension `{part}`")))?,
        );
    }
    let data = &bytes[start + header_len..];
    let want = numel(&shape) * dtype.size();
    if data.len() != want {
        return Err(err(format!(
            "{} data bytes, the header implies {want}",
            data.len()
        )));
    }
    Ok(Tensor {
        dtype,
        shape,
        data: data.to_vec(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_header_layout() {
        let t = Tensor::from_f64s(
            Dtype::Float16,
            &[2, 3],
            &[1.0, -2.0, 0.5, 0.0, 65504.0, -0.25],
        );
        let bytes = write_npy(&t);
        assert_eq!(&bytes[..8], b"\x93NUMPY\x01\x00");
        let header_len = usize::from(u16::from_le_bytes([bytes[8], bytes[9]]));
        assert_eq!((10 + header_len) % 64, 0);
        let header = std::str::from_utf8(&bytes[10..10 + header_len]).unwrap();
        assert!(header.starts_with("{'descr': '<f2', 'fortran_order': False, 'shape': (2, 3), }"));
        assert!(header.ends_with('\n'));
        assert_eq!(read_npy(&bytes, "t").unwrap(), t);
        let one = Tensor::from_i64s(Dtype::Int32, &[5], &[1, 2, 3, -4, 5]);
        let bytes = write_npy(&one);
        assert!(std::str::from_utf8(&bytes[10..80])
            .unwrap()
            .contains("'shape': (5,)"));
        assert_eq!(read_npy(&bytes, "one").unwrap(), one);
        let b = Tensor::from_i64s(Dtype::Bool, &[], &[1]);
        assert_eq!(read_npy(&write_npy(&b), "b").unwrap(), b);
    }

    #[test]
    fn bf16_is_written_as_f32() {
        let t = Tensor::from_f64s(Dtype::Bfloat16, &[2], &[1.0078125, -3.0]);
        let back = read_npy(&write_npy(&t), "t").unwrap();
        assert_eq!(back.dtype, Dtype::Float32);
        assert_eq!(back.to_f64s(), vec![1.0078125, -3.0]);
    }

    #[test]
    fn bad_files_are_errors() {
        assert!(read_npy(b"hello world", "x")
            .unwrap_err()
            .to_string()
            .contains("bad magic"));
        let mut bytes = write_npy(&Tensor::zeros(Dtype::Float32, &[4]));
        bytes.pop();
        assert_eq!(
            read_npy(&bytes, "x").unwrap_err().to_string(),
            "npy x: 15 data bytes, the header implies 16"
        );
        let big = write_npy(&Tensor::zeros(Dtype::Float32, &[1]))
            .iter()
            .map(|&b| if b == b'<' { b'>' } else { b })
            .collect::<Vec<_>>();
        assert!(read_npy(&big, "x")
            .unwrap_err()
            .to_string()
            .contains("unsupported dtype `>f4`"));
    }
}
