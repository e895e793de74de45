//! The job folder of one runner process ([`super::runner`]): `job.txt`
//! and one raw file per tensor, written from a [`RunRequest`]; the
//! outputs read back after the run.
//!
//! Every argument the request's [`ArgLayout`] describes is written: plain
//! tensors, tensor lists, absent optional inputs (nullptr), in-place
//! outputs (an argument over the input's memory, or a read-back of it when
//! the output has no argument), and integer, float, bool, string and list
//! attributes; the format is [`super::runner`]'s. A launch it cannot
//! express (an absent output) is refused with a message naming what.

use crate::launch::AttrValue;
use crate::{RunRequest, SharedError};
use ascendopt_op::layout::{ArgLayout, ArgSlot};
use ascendopt_op::Tensor;
use std::path::{Path, PathBuf};

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
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why (an `io::Error`, shared so that the error stays `Clone`).
        source: SharedError,
    },
    /// An output file the runner wrote has the wrong size.
    #[error("{}: {read} bytes, the output has {expected}", path.display())]
    OutputSize {
        /// The file.
        path: PathBuf,
        /// Its size.
        read: usize,
        /// The output's size.
        expected: usize,
    },
}

fn io(path: &Path, e: std::io::Error) -> JobError {
    JobError::Io {
        path: path.to_path_buf(),
        source: SharedError::new(e),
    }
}

fn tensor_line(kind: &str, t: &Tensor, file: &str) -> String {
    let mut line = format!("{kind} {} {}", acl_dtype(t.dtype), t.shape.len());
    for d in &t.shape {
        line.push_str(&format!(" {d}"));
    }
    line.push_str(&format!(" {file}\n"));
    line
}

/// The `attr` line of one value.
fn attr_line(a: &crate::launch::JobAttr) -> String {
    let list =
        |kind: &str, items: Vec<String>| format!("attr {kind} {} {}", items.len(), items.join(" "));
    match &a.value {
        AttrValue::Int(v) => format!("attr int {v}"),
        AttrValue::Float(v) => format!("attr float {v:e}"),
        AttrValue::Bool(v) => format!("attr bool {v}"),
        AttrValue::Str(v) => {
            let mut hex = String::from("attr str x");
            for b in v.as_bytes() {
                hex.push_str(&format!("{b:02x}"));
            }
            hex
        }
        AttrValue::ListInt(v) => list("ints", v.iter().map(|x| x.to_string()).collect()),
        AttrValue::ListFloat(v) => list("floats", v.iter().map(|x| format!("{x:e}")).collect()),
    }
    .trim_end()
    .to_string()
}

/// Writes `request` into `dir` (created): `in<k>.bin` per input tensor,
/// `out<k>.bin` per output tensor with memory of its own (the poisoned
/// initial contents) and `job.txt`, the attributes in the order of
/// `attr_order` (the OpDef's, which the aclnn call follows).
pub fn write(dir: &Path, request: &RunRequest, attr_order: &[String]) -> Result<(), JobError> {
    let plain = ArgLayout::plain(request.inputs.len(), request.outputs.len());
    let layout = request.layout.as_ref().unwrap_or(&plain);
    layout
        .check(request.inputs.len(), request.outputs.len())
        .map_err(|e| JobError::Unsupported {
            what: format!("this argument layout ({e})"),
        })?;
    std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    let mut text = String::new();
    // Input tensor index -> its position among the input tensors of the file.
    let mut position = vec![usize::MAX; request.inputs.len()];
    let mut next = 0;
    let mut input = |k: usize, kind: &str, text: &mut String| -> Result<(), JobError> {
        let t = &request.inputs[k];
        let file = format!("in{k}.bin");
        std::fs::write(dir.join(&file), &t.data).map_err(|e| io(&dir.join(&file), e))?;
        text.push_str(&tensor_line(kind, t, &file));
        position[k] = next;
        next += 1;
        Ok(())
    };
    for slot in &layout.inputs {
        match slot {
            ArgSlot::One(k) => input(*k, "in", &mut text)?,
            ArgSlot::List(items) => {
                text.push_str(&format!("in_list {}\n", items.len()));
                for &k in items {
                    input(k, "item", &mut text)?;
                }
            }
            ArgSlot::Absent => text.push_str("in_absent\n"),
        }
    }
    for name in attr_order {
        let a = request
            .attrs
            .iter()
            .find(|a| &a.name == name)
            .ok_or_else(|| JobError::Unsupported {
                what: format!("a launch without a value for attribute `{name}`"),
            })?;
        text.push_str(&attr_line(a));
        text.push('\n');
    }
    let output = |k: usize, kind: &str, alias: &str, text: &mut String| -> Result<(), JobError> {
        let file = format!("out{k}.bin");
        match layout.in_place_input(k) {
            Some(i) => text.push_str(&format!("{alias} {} {file}\n", position[i])),
            None => {
                let t = &request.outputs[k];
                std::fs::write(dir.join(&file), &t.data).map_err(|e| io(&dir.join(&file), e))?;
                text.push_str(&tensor_line(kind, t, &file));
            }
        }
        Ok(())
    };
    for slot in &layout.outputs {
        match slot {
            ArgSlot::One(k) => output(*k, "out", "out_alias", &mut text)?,
            ArgSlot::List(items) => {
                text.push_str(&format!("out_list {}\n", items.len()));
                for &k in items {
                    output(k, "item", "item_alias", &mut text)?;
                }
            }
            ArgSlot::Absent => {
                return Err(JobError::Unsupported {
                    what: "an absent output".into(),
                })
            }
        }
    }
    // In-place outputs without an argument: read back from the input.
    for k in 0..request.outputs.len() {
        let argument = layout.outputs.iter().any(|s| s.tensors().contains(&k));
        if let (false, Some(i)) = (argument, layout.in_place_input(k)) {
            text.push_str(&format!("readback {} out{k}.bin\n", position[i]));
        }
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
                return Err(JobError::OutputSize {
                    path,
                    read: data.len(),
                    expected: t.data.len(),
                });
            }
            Ok(Tensor {
                dtype: t.dtype,
                shape: t.shape.clone(),
                data,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::launch::JobAttr;
    use ascendopt_op::Dtype;

    /// A list, an absent optional input, an in-place tensor with an
    /// argument and one without, every attribute kind: the exact job.
    #[test]
    fn every_argument_kind_is_written_in_the_call_order() {
        let dir = tempfile::tempdir().unwrap();
        let t = |n: usize| Tensor::from_f64s(Dtype::Float32, &[n], &vec![1.0; n]);
        let attr = |name: &str, value: AttrValue| JobAttr {
            name: name.into(),
            value,
        };
        let request = RunRequest {
            // xs = [in0, in1], state = in2, alpha = in3
            inputs: vec![t(2), t(3), t(4), t(1)],
            // ys = [out0, out1 (in place of in1)], out2 = state (no argument)
            outputs: vec![t(2), t(3), t(4)],
            attrs: vec![
                attr("axes", AttrValue::ListInt(vec![0, -1])),
                attr("mode", AttrValue::Str("a b".into())),
                attr("scales", AttrValue::ListFloat(vec![0.5])),
                attr("eps", AttrValue::Float(1e-5)),
                attr("keep", AttrValue::Bool(true)),
            ],
            seed: 1,
            keep_trace: false,
            layout: Some(ArgLayout {
                inputs: vec![
                    ArgSlot::List(vec![0, 1]),
                    ArgSlot::Absent,
                    ArgSlot::One(2),
                    ArgSlot::One(3),
                ],
                outputs: vec![ArgSlot::List(vec![0, 1])],
                in_place: vec![(1, 1), (2, 2)],
                host_values: Vec::new(),
            }),
        };
        let order: Vec<String> = ["mode", "axes", "scales", "keep", "eps"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        write(dir.path(), &request, &order).unwrap();
        let job = std::fs::read_to_string(dir.path().join("job.txt")).unwrap();
        assert_eq!(
            job,
            "in_list 2\nitem 0 1 2 in0.bin\nitem 0 1 3 in1.bin\nin_absent\nin 0 1 4 in2.bin\nin 0 1 1 in3.bin\n\
             attr str x612062\nattr ints 2 0 -1\nattr floats 1 5e-1\nattr bool true\nattr float 1e-5\n\
             out_list 2\nitem 0 1 2 out0.bin\nitem_alias 1 out1.bin\nreadback 2 out2.bin\n"
        );
        // Only an output with memory of its own gets a poisoned file.
        assert!(dir.path().join("out0.bin").is_file());
        assert!(!dir.path().join("out1.bin").exists());
        // A missing attribute value and a bad layout are refused by name.
        let mut missing = request.clone();
        missing.attrs.remove(0);
        let err = write(dir.path(), &missing, &order).unwrap_err().to_string();
        assert!(err.contains("attribute `axes`"), "{err}");
        let mut bad = request.clone();
        bad.layout.as_mut().unwrap().inputs[2] = ArgSlot::One(0);
        let err = write(dir.path(), &bad, &order).unwrap_err().to_string();
        assert!(err.contains("two kernel arguments"), "{err}");
    }
}
