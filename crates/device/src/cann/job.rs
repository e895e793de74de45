//! The job folder of one runner process ([`super::runner`]): `job.txt`
//! and one raw file per tensor, written from a [`RunRequest`]; the
//! outputs read back after the run.
//!
//! Only plain launches are written: each input, then each attribute, then
//! each output is one argument of `aclnn<Op>GetWorkspaceSize`. Tensor
//! lists, absent optional inputs, in-place outputs and string or list
//! attributes are refused with a message naming what (the runner does not
//! build `aclTensorList`s or `aclIntArray`s yet).

use crate::launch::AttrValue;
use crate::RunRequest;
use ascendopt_op::layout::ArgLayout;
use ascendopt_op::Tensor;
use std::path::Path;

use super::runner::acl_dtype;

/// Why a request cannot be written as a job.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JobError {
    /// The launch needs what the runner does not pass.
    #[error("the CANN runner cannot pass {what} yet")]
    Unsupported {
        /// What.
        what: String,
    },
    /// A file could not be written or read.
    #[error("{0}")]
    Io(String),
}

fn io(path: &Path, e: std::io::Error) -> JobError {
    JobError::Io(format!("{}: {e}", path.display()))
}

fn tensor_line(kind: &str, t: &Tensor, file: &str) -> String {
    let mut line = format!("{kind} {} {}", acl_dtype(t.dtype), t.shape.len());
    for d in &t.shape {
        line.push_str(&format!(" {d}"));
    }
    line.push_str(&format!(" {file}\n"));
    line
}

/// Writes `request` into `dir` (created): `in<k>.bin`, `out<k>.bin` (the
/// poisoned initial contents) and `job.txt`, the attributes in the order
/// of `attr_order` (the OpDef's, which the aclnn call follows).
pub fn write(dir: &Path, request: &RunRequest, attr_order: &[String]) -> Result<(), JobError> {
    if let Some(layout) = &request.layout {
        let plain = ArgLayout::plain(request.inputs.len(), request.outputs.len());
        if *layout != plain {
            return Err(JobError::Unsupported {
                what: "tensor lists, absent optional inputs or in-place outputs".into(),
            });
        }
    }
    std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    let mut text = String::new();
    for (k, t) in request.inputs.iter().enumerate() {
        let file = format!("in{k}.bin");
        std::fs::write(dir.join(&file), &t.data).map_err(|e| io(&dir.join(&file), e))?;
        text.push_str(&tensor_line("in", t, &file));
    }
    for name in attr_order {
        let a = request
            .attrs
            .iter()
            .find(|a| &a.name == name)
            .ok_or_else(|| JobError::Unsupported {
                what: format!("a launch without a value for attribute `{name}`"),
            })?;
        let (ty, value) = match &a.value {
            AttrValue::Int(v) => ("int", v.to_string()),
            AttrValue::Float(v) => ("float", format!("{v:e}")),
            AttrValue::Bool(v) => ("bool", v.to_string()),
            other => {
                return Err(JobError::Unsupported {
                    what: format!("attribute `{}` ({other:?})", a.name),
                })
            }
        };
        text.push_str(&format!("attr {ty} {value}\n"));
    }
    for (k, t) in request.outputs.iter().enumerate() {
        let file = format!("out{k}.bin");
        std::fs::write(dir.join(&file), &t.data).map_err(|e| io(&dir.join(&file), e))?;
        text.push_str(&tensor_line("out", t, &file));
    }
    std::fs::write(dir.join("job.txt"), text).map_err(|e| io(&dir.join("job.txt"), e))
}

/// The outputs the runner wrote back, with the request's dtypes and
/// shapes; a file of the wrong size is an error naming it.
pub fn read_outputs(dir: &Path, request: &RunRequest) -> Result<Vec<Tensor>, JobError> {
    request
        .outputs
        .iter()
        .enumerate()
        .map(|(k, t)| {
            let path = dir.join(format!("out{k}.bin"));
            let data = std::fs::read(&path).map_err(|e| io(&path, e))?;
            if data.len() != t.data.len() {
                return Err(JobError::Io(format!(
                    "{}: {} bytes, the output has {}",
                    path.display(),
                    data.len(),
                    t.data.len()
                )));
            }
            Ok(Tensor {
                dtype: t.dtype,
                shape: t.shape.clone(),
                data,
            })
        })
        .collect()
}
