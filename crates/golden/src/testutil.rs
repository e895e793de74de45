//! The test helpers shared by the golden files' unit tests: a spec from
//! op.toml text (loaded with [`crate::BUILTINS`]), its load error, one
//! case's golden outputs, and a tensor's element bits.

use crate::BUILTINS;
use ascendopt_op::golden::golden;
use ascendopt_op::spec::OpSpec;
use ascendopt_op::Tensor;
use std::path::Path;

/// The spec of `text`, which must load.
pub(crate) fn spec(text: &str) -> OpSpec {
    OpSpec::parse(text, Path::new("t/op.toml"), &BUILTINS).unwrap()
}

/// The load error of `text`, which must not load.
pub(crate) fn parse_err(text: &str) -> String {
    OpSpec::parse(text, Path::new("t/op.toml"), &BUILTINS)
        .unwrap_err()
        .to_string()
}

/// The golden outputs of case `case` of `spec` for `inputs`.
pub(crate) fn run(spec: &OpSpec, case: &str, inputs: Vec<Tensor>) -> Vec<Tensor> {
    golden(spec, spec.case(case).unwrap(), &inputs).unwrap()
}

/// Every element's bits.
pub(crate) fn bits(t: &Tensor) -> Vec<u64> {
    (0..t.numel()).map(|i| t.bits(i)).collect()
}
