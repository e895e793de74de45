//! How a case's tensors become the kernel's arguments.
//!
//! A kernel takes one argument per input and per output of its OpDef, in
//! declaration order. A case's tensors are flat (`Case::inputs`,
//! `Case::outputs`): one per tensor, a tensor list contributing one per
//! element. [`ArgLayout`] maps them back: each argument is one tensor, a
//! tensor list (the kernel gets the list's descriptor, guide 2.10.9.1 and
//! 6.2.6.2 ListTensorDesc), or absent (an optional input the case omits:
//! the kernel gets a null address). An in-place output shares its input's
//! memory: the kernel's input and output arguments are the same address.
//! An in-place output may have no argument at all (an OpDef without that
//! output, whose kernel writes into the input): it is in no output slot
//! and is read back from the memory the input argument points at.
//!
//! The same mapping tells the host tiling which OpDef parameter each tensor
//! instantiates (GetDynamicInputShape, GetOptionalInputShape, ...).

use serde::{Deserialize, Serialize};

/// One kernel argument.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ArgSlot {
    /// One tensor: its index among the case's inputs (or outputs).
    One(usize),
    /// A tensor list: the indices of its elements, in order.
    List(Vec<usize>),
    /// An optional input the case leaves out.
    Absent,
}

impl ArgSlot {
    /// The tensor indices of this argument.
    pub fn tensors(&self) -> &[usize] {
        match self {
            ArgSlot::One(i) => std::slice::from_ref(i),
            ArgSlot::List(list) => list,
            ArgSlot::Absent => &[],
        }
    }
}

/// The kernel arguments of a launch: one slot per OpDef input, one per
/// OpDef output, and which outputs share an input's memory.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ArgLayout {
    /// One per OpDef input, indices into the launch's inputs.
    pub inputs: Vec<ArgSlot>,
    /// One per OpDef output, indices into the launch's outputs.
    pub outputs: Vec<ArgSlot>,
    /// (output tensor, input tensor): the output is the input, in place.
    pub in_place: Vec<(usize, usize)>,
    /// Input tensors whose values the host tiling reads (value-depend
    /// inputs: `Tensor::GetData` in the tiling).
    #[serde(default)]
    pub host_values: Vec<usize>,
}

impl ArgLayout {
    /// Each of `inputs` inputs and `outputs` outputs its own argument, in
    /// order: the layout of an operator without lists, optional inputs or
    /// in-place outputs.
    pub fn plain(inputs: usize, outputs: usize) -> ArgLayout {
        ArgLayout {
            inputs: (0..inputs).map(ArgSlot::One).collect(),
            outputs: (0..outputs).map(ArgSlot::One).collect(),
            in_place: Vec::new(),
            host_values: Vec::new(),
        }
    }

    /// True when this is [`ArgLayout::plain`] for its tensor counts.
    pub fn is_plain(&self) -> bool {
        self.in_place.is_empty()
            && self.host_values.is_empty()
            && self
                .inputs
                .iter()
                .enumerate()
                .all(|(i, s)| *s == ArgSlot::One(i))
            && self
                .outputs
                .iter()
                .enumerate()
                .all(|(i, s)| *s == ArgSlot::One(i))
    }

    /// The OpDef input each input tensor instantiates, by tensor index.
    pub fn input_params(&self, tensors: usize) -> Vec<Option<usize>> {
        params_of(&self.inputs, tensors)
    }

    /// The OpDef output each output tensor instantiates.
    pub fn output_params(&self, tensors: usize) -> Vec<Option<usize>> {
        params_of(&self.outputs, tensors)
    }

    /// The input an output shares its memory with.
    pub fn in_place_input(&self, output: usize) -> Option<usize> {
        self.in_place
            .iter()
            .find(|(o, _)| *o == output)
            .map(|(_, i)| *i)
    }

    /// The output an input shares its memory with.
    pub fn in_place_input_of(&self, input: usize) -> Option<usize> {
        self.in_place
            .iter()
            .find(|(_, i)| *i == input)
            .map(|(o, _)| *o)
    }

    /// The dtype of each kernel argument (inputs, then outputs): its first
    /// tensor's; None for an absent input.
    pub fn param_dtypes<T: Copy>(&self, inputs: &[T], outputs: &[T]) -> Vec<Option<T>> {
        let side = |slots: &[ArgSlot], tensors: &[T]| -> Vec<Option<T>> {
            slots
                .iter()
                .map(|s| s.tensors().first().and_then(|&i| tensors.get(i).copied()))
                .collect()
        };
        let mut out = side(&self.inputs, inputs);
        out.extend(side(&self.outputs, outputs));
        out
    }

    /// Checks that every tensor index is in range and used once; Err names
    /// the first problem.
    pub fn check(&self, inputs: usize, outputs: usize) -> Result<(), LayoutError> {
        for (side, slots, n) in [
            ("input", &self.inputs, inputs),
            ("output", &self.outputs, outputs),
        ] {
            let mut seen = vec![false; n];
            for slot in slots {
                for &t in slot.tensors() {
                    if t >= n {
                        return Err(LayoutError::OutOfRange {
                            side,
                            tensor: t,
                            count: n,
                        });
                    }
                    if std::mem::replace(&mut seen[t], true) {
                        return Err(LayoutError::Twice { side, tensor: t });
                    }
                }
            }
            let argless_in_place =
                |t: usize| side == "output" && self.in_place.iter().any(|&(o, _)| o == t);
            if let Some(t) = (0..n).find(|&t| !seen[t] && !argless_in_place(t)) {
                return Err(LayoutError::Unused { side, tensor: t });
            }
        }
        if let Some(&i) = self.host_values.iter().find(|&&i| i >= inputs) {
            return Err(LayoutError::HostValuesOutOfRange { input: i, inputs });
        }
        for &(o, i) in &self.in_place {
            if o >= outputs || i >= inputs {
                return Err(LayoutError::InPlaceOutOfRange {
                    output: o,
                    input: i,
                });
            }
        }
        Ok(())
    }
}

fn params_of(slots: &[ArgSlot], tensors: usize) -> Vec<Option<usize>> {
    let mut out = vec![None; tensors];
    for (param, slot) in slots.iter().enumerate() {
        for &t in slot.tensors() {
            if let Some(o) = out.get_mut(t) {
                *o = Some(param);
            }
        }
    }
    out
}

/// What is wrong with an argument layout, naming the tensor.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LayoutError {
    /// A slot names a tensor the operator does not have.
    #[error("{side} tensor {tensor} of {count} in the argument layout")]
    OutOfRange {
        /// `input` or `output`.
        side: &'static str,
        /// The tensor index.
        tensor: usize,
        /// How many tensors of that side the operator has.
        count: usize,
    },
    /// A tensor is in two kernel arguments.
    #[error("{side} tensor {tensor} is in two kernel arguments")]
    Twice {
        /// `input` or `output`.
        side: &'static str,
        /// The tensor index.
        tensor: usize,
    },
    /// A tensor is in no kernel argument (and is not an in-place output).
    #[error("{side} tensor {tensor} is in no kernel argument")]
    Unused {
        /// `input` or `output`.
        side: &'static str,
        /// The tensor index.
        tensor: usize,
    },
    /// Host values are declared for an input the operator does not have.
    #[error("input tensor {input} of {inputs} has host values")]
    HostValuesOutOfRange {
        /// The input index.
        input: usize,
        /// How many inputs the operator has.
        inputs: usize,
    },
    /// An in-place pair names a tensor the operator does not have.
    #[error("in-place pair (output {output}, input {input}) is out of range")]
    InPlaceOutOfRange {
        /// The output index.
        output: usize,
        /// The input index.
        input: usize,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_layout_maps_tensors_to_parameters_and_checks_itself() {
        let layout = ArgLayout {
            inputs: vec![ArgSlot::List(vec![0, 1]), ArgSlot::Absent, ArgSlot::One(2)],
            outputs: vec![ArgSlot::List(vec![0, 1])],
            in_place: vec![(0, 0), (1, 1)],
            host_values: vec![2],
        };
        assert_eq!(layout.input_params(3), [Some(0), Some(0), Some(2)]);
        assert_eq!(layout.output_params(2), [Some(0), Some(0)]);
        assert_eq!(layout.in_place_input(1), Some(1));
        assert!(layout.check(3, 2).is_ok());
        assert!(!layout.is_plain());
        assert!(layout
            .check(4, 2)
            .unwrap_err()
            .to_string()
            .contains("input tensor 3"));
        assert!(ArgLayout::plain(2, 1).is_plain());
        let twice = ArgLayout {
            inputs: vec![ArgSlot::One(0), ArgSlot::One(0)],
            outputs: vec![],
            in_place: vec![],
            host_values: vec![],
        };
        assert!(twice
            .check(1, 0)
            .unwrap_err()
            .to_string()
            .contains("two kernel arguments"));
    }
}
