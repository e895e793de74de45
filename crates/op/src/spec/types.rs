//! The validated op.toml spec types: the operator ([`OpSpec`]), its
//! tensors, attributes, tolerances and golden, and its fully resolved test
//! cases ([`Case`]). Parsing and validation, which build them, are in the
//! parent module.

use crate::layout::ArgLayout;
use crate::tiling::Constraint;
use crate::Dtype;
use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use crate::tensor::Tensor;

/// A validated op.toml.
#[derive(Debug, Clone)]
pub struct OpSpec {
    /// The op.toml file, as given to the loader.
    pub file: PathBuf,
    /// Operator name (the package folder name by convention).
    pub name: String,
    /// Benchmark level, 1 to 3.
    pub level: u8,
    /// OpDef class name in the host code (`AddCustom`).
    pub op_type: String,
    /// Kernel entry symbol (defaults to `name`).
    pub kernel: String,
    /// One-line description.
    pub description: String,
    /// Host sources relative to the package, when listed explicitly.
    pub host_sources: Option<Vec<PathBuf>>,
    /// Kernel sources relative to the package, when listed explicitly.
    pub kernel_sources: Option<Vec<PathBuf>>,
    /// Tiling header relative to the package, when given explicitly.
    pub tiling_header: Option<PathBuf>,
    /// The chip the operator is written for and judged on (`chip =
    /// "ascend310b"`): a device profile name, which the device checks;
    /// None: the device's default chip.
    pub chip: Option<String>,
    /// Inputs in kernel argument order.
    pub inputs: Vec<TensorSpec>,
    /// Outputs in kernel argument order.
    pub outputs: Vec<TensorSpec>,
    /// Attributes.
    pub attrs: Vec<AttrSpec>,
    /// Operator-wide tolerance overrides per dtype.
    pub tolerances: BTreeMap<Dtype, Tolerance>,
    /// How the expected outputs are computed.
    pub golden: GoldenSpec,
    /// Constraints between tiling knobs (`[tiling] constraints`).
    pub constraints: Vec<Constraint>,
    /// Test cases, in file order.
    pub cases: Vec<Case>,
    /// The op.toml text, for positioning errors found later.
    pub(crate) text: String,
}

/// An input or output tensor of the operator.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorSpec {
    /// Name as in the OpDef (`x`).
    pub name: String,
    /// Dtypes allowed; empty for an output means "whatever the rule gives".
    pub dtypes: Vec<Dtype>,
    /// How the dtype follows from others (required for outputs).
    pub rule: Option<DtypeRule>,
    /// A tensor list (an OpDef `DYNAMIC` parameter, `kind = "list"`): a
    /// case gives it any number of tensors, the kernel gets the list.
    pub list: bool,
    /// An input a case may leave out (`OPTIONAL`; `optional = true`).
    pub optional: bool,
    /// An input whose values the host tiling reads (`value_depend = true`).
    pub value_depend: bool,
    /// An output that is this input, in place (`inplace = "x"`).
    pub inplace: Option<String>,
    /// The kernel has an argument for this output (`argument = false`: it
    /// has none; the OpDef declares no such output and the kernel writes
    /// into the `inplace` input, whose memory is read after the launch).
    pub argument: bool,
    /// The output is compared with the golden (`check = false`: not).
    pub checked: bool,
    /// A list output: the list input whose length it has (`length_of`;
    /// default the first list input).
    pub length_of: Option<String>,
}

/// How a tensor's dtype is determined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DtypeRule {
    /// The same dtype as the named input.
    SameAs(String),
    /// The dtype of the named input, or of its parts when it is complex
    /// (complex64 gives float32); outputs only.
    RealOf(String),
    /// Always this dtype.
    Fixed(Dtype),
    /// Given by an attribute: an int attr holds a `ge::DataType` code, a str
    /// attr a dtype name.
    FromAttr(String),
    /// The named input's dtype looked up in a table (`by` and `table`;
    /// outputs only): CANN OpDefs whose output dtype column follows an
    /// input's by no single rule (uint8 -> float32 beside float16 ->
    /// float16). An input dtype the table lacks is an error of the case.
    Map {
        /// The input whose dtype is looked up.
        input: String,
        /// Input dtype -> output dtype, each input dtype once.
        table: Vec<(Dtype, Dtype)>,
    },
}

/// Attribute types of the OpDef.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttrType {
    /// `int` (i64).
    Int,
    /// `float`.
    Float,
    /// `bool`.
    Bool,
    /// `str`.
    Str,
    /// `list_int`.
    ListInt,
    /// `list_float`.
    ListFloat,
}

impl AttrType {
    /// The op.toml name.
    pub fn name(self) -> &'static str {
        match self {
            AttrType::Int => "int",
            AttrType::Float => "float",
            AttrType::Bool => "bool",
            AttrType::Str => "str",
            AttrType::ListInt => "list_int",
            AttrType::ListFloat => "list_float",
        }
    }

    pub(super) fn parse(name: &str) -> Option<AttrType> {
        [
            AttrType::Int,
            AttrType::Float,
            AttrType::Bool,
            AttrType::Str,
            AttrType::ListInt,
            AttrType::ListFloat,
        ]
        .into_iter()
        .find(|t| t.name() == name)
    }
}

/// An attribute value.
#[derive(Debug, Clone, PartialEq)]
pub enum AttrValue {
    /// Integer.
    Int(i64),
    /// Floating point.
    Float(f64),
    /// Boolean.
    Bool(bool),
    /// String.
    Str(String),
    /// List of integers.
    ListInt(Vec<i64>),
    /// List of floats.
    ListFloat(Vec<f64>),
}

impl AttrValue {
    /// The value as f64 for `Int` and `Float`.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            AttrValue::Int(v) => Some(*v as f64),
            AttrValue::Float(v) => Some(*v),
            _ => None,
        }
    }

    /// The value for `Int`.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            AttrValue::Int(v) => Some(*v),
            _ => None,
        }
    }
}

impl fmt::Display for AttrValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AttrValue::Int(v) => write!(f, "{v}"),
            AttrValue::Float(v) => write!(f, "{v:?}"),
            AttrValue::Bool(v) => write!(f, "{v}"),
            AttrValue::Str(v) => write!(f, "{v:?}"),
            AttrValue::ListInt(v) => write!(f, "{v:?}"),
            AttrValue::ListFloat(v) => write!(f, "{v:?}"),
        }
    }
}

/// An attribute of the operator.
#[derive(Debug, Clone, PartialEq)]
pub struct AttrSpec {
    /// Name as in the OpDef `Attr("name")`.
    pub name: String,
    /// Type.
    pub ty: AttrType,
    /// Value used when a case does not give one (None iff required).
    pub default: Option<AttrValue>,
    /// True when every case must give a value.
    pub required: bool,
}

/// Element-wise tolerance: an element fails only when both its absolute
/// error exceeds `atol` and its relative error exceeds `rtol`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerance {
    /// Absolute tolerance.
    pub atol: f64,
    /// Relative tolerance (relative to |expected|).
    pub rtol: f64,
    /// The share of an output's elements that may fail while the output
    /// still passes (0: none). CANN's sample checks (`verify_result.py`)
    /// fail a case only when more than 0.1% of its elements fail
    /// (shared/ref/operators-l1-l3.md "Common rules" [C];
    /// peers-and-pitfalls.md); an op.toml imported from such a project can
    /// say so. Only an explicit setting allows any.
    pub max_mismatch_ratio: f64,
}

/// The default tolerance of a dtype, CANN style.
///
/// - float16: atol = rtol = 1e-3 (the cann-ops example check and
///   NPUKernelBench, shared/ref/operators-l1-l3.md "Common rules"). 1e-3 is
///   about one fp16 ulp relative (2^-10 = 9.8e-4).
/// - bfloat16: 4e-3: NPUKernelBench uses rtol = 1/256 + 1/16384 = 3.97e-3
///   for bf16 (operators-l2.md, Foreach "tolerance"); 2^-8 = 3.9e-3 is the
///   bf16 unit roundoff, the error of the one final rounding.
/// - float32: 1e-4 (the fp32 setting of KernelBench-style checks,
///   shared/ref/peers-and-pitfalls.md).
/// - float64: 1e-9 (no NPU reference; the golden computes in f64).
/// - complex64: float32's, on each part.
/// - integers and bool: exact (0, 0).
pub fn default_tolerance(dtype: Dtype) -> Tolerance {
    let t = match dtype {
        Dtype::Float16 => 1e-3,
        Dtype::Bfloat16 => 4e-3,
        Dtype::Float32 | Dtype::Complex64 => 1e-4,
        Dtype::Float64 => 1e-9,
        _ => 0.0,
    };
    Tolerance {
        atol: t,
        rtol: t,
        max_mismatch_ratio: 0.0,
    }
}

/// How the expected outputs are computed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GoldenSpec {
    /// A Rust function, resolved by name when the spec loads from the
    /// [`crate::golden::Builtins`] the loader was given.
    Builtin(crate::golden::Builtin),
    /// A Python script (python3 + numpy), relative to the package.
    Script(PathBuf),
    /// Expected-output files the user already has (`[golden] files =
    /// true`; each case's `expected`): case name -> outputs in order.
    Files(BTreeMap<String, Vec<Arc<Tensor>>>),
}

/// Sign restriction of the `mixed` distribution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sign {
    /// Both signs (and both zeros).
    Any,
    /// Non-negative values only (+0 but not -0).
    Positive,
    /// Non-positive values only (-0 but not +0).
    Negative,
}

/// How the values of an input are drawn.
#[derive(Debug, Clone, PartialEq)]
pub enum Dist {
    /// The default: mostly |v| < scale, some tiny (1e-4..1e-2 of scale),
    /// some larger (scale..16·scale), some ±0; random sign unless
    /// restricted. Integers: mostly |v| ≤ scale, some small, some over the
    /// whole dtype range, some 0.
    Mixed {
        /// Magnitude scale.
        scale: f64,
        /// Sign restriction.
        sign: Sign,
    },
    /// Uniform in [low, high) (integers: [low, high]).
    Uniform {
        /// Lower bound.
        low: f64,
        /// Upper bound.
        high: f64,
    },
    /// Normal with the given mean and standard deviation.
    Normal {
        /// Mean.
        mean: f64,
        /// Standard deviation.
        scale: f64,
    },
    /// Integer values uniform in [low, high], in any dtype.
    Int {
        /// Lower bound (inclusive).
        low: i64,
        /// Upper bound (inclusive).
        high: i64,
    },
    /// The values of a file the user already has (`.bin` raw little-endian
    /// elements as gen_data.py writes them with `tofile`, or `.npy`), the
    /// same for every seed; no specials are injected.
    File {
        /// The file, relative to the package.
        path: String,
        /// Its values, with the case input's dtype and shape.
        tensor: Arc<Tensor>,
    },
}

/// Special values that may be injected into an input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Special {
    /// ±infinity (floats only).
    Inf,
    /// NaN (floats only).
    Nan,
    /// ±0 (0 for integers).
    Zero,
    /// Near the largest finite value (integers: min/max).
    Huge,
    /// Smallest normals and subnormals (integers: ±1).
    Tiny,
}

impl Special {
    /// Every special, in order.
    pub const ALL: [Special; 5] = [
        Special::Inf,
        Special::Nan,
        Special::Zero,
        Special::Huge,
        Special::Tiny,
    ];

    /// The op.toml name.
    pub fn name(self) -> &'static str {
        match self {
            Special::Inf => "inf",
            Special::Nan => "nan",
            Special::Zero => "zero",
            Special::Huge => "huge",
            Special::Tiny => "tiny",
        }
    }

    pub(super) fn parse(name: &str) -> Option<Special> {
        Special::ALL.into_iter().find(|s| s.name() == name)
    }
}

/// One input tensor of a case (one element of a tensor list).
#[derive(Debug, Clone, PartialEq)]
pub struct CaseInput {
    /// Input name.
    pub name: String,
    /// Its position in its tensor list; None for a single tensor.
    pub list_index: Option<usize>,
    /// Dtype.
    pub dtype: Dtype,
    /// Shape.
    pub shape: Vec<usize>,
    /// Value distribution.
    pub dist: Dist,
    /// Special values injected (empty: none).
    pub specials: Vec<Special>,
}

/// One output tensor of a case (one element of a tensor list).
#[derive(Debug, Clone, PartialEq)]
pub struct CaseOutput {
    /// Output name.
    pub name: String,
    /// Its position in its tensor list; None for a single tensor.
    pub list_index: Option<usize>,
    /// Dtype.
    pub dtype: Dtype,
    /// Tolerance used to compare it.
    pub tolerance: Tolerance,
    /// Compared with the golden (false: the spec leaves it unchecked).
    pub checked: bool,
    /// In place: the index of the case input whose memory it is (its
    /// initial contents are that input's values).
    pub inplace_of: Option<usize>,
}

/// A resolved test case.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// Case name, unique in the spec.
    pub name: String,
    /// Input tensors in kernel order (a tensor list's elements in order;
    /// an omitted optional input has none).
    pub inputs: Vec<CaseInput>,
    /// Output tensors in kernel order (shapes come from the golden).
    pub outputs: Vec<CaseOutput>,
    /// Every attribute of the operator with its value (defaults filled).
    pub attrs: Vec<(String, AttrValue)>,
    /// Optional inputs this case leaves out.
    pub omitted: Vec<String>,
    /// How the tensors become kernel arguments.
    pub layout: ArgLayout,
}

impl Case {
    /// The value of an attribute.
    pub fn attr(&self, name: &str) -> Option<&AttrValue> {
        self.attrs.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    /// An input by name.
    pub fn input(&self, name: &str) -> Option<&CaseInput> {
        self.inputs.iter().find(|i| i.name == name)
    }

    /// Total number of input elements.
    pub fn input_elements(&self) -> usize {
        self.inputs
            .iter()
            .map(|i| crate::tensor::numel(&i.shape))
            .sum()
    }
}
