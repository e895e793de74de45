//! `ascendopt fidelity`: the simulator's timing against figures measured on
//! real Ascend hardware. The points that time hand-written traces come from
//! [`ascendopt_sim::timing::fidelity`]; the points here run real kernels
//! (copies of the built-in add_custom with their kernel edited) through the
//! device, as an evaluation does, and compare them as the hardware's
//! guidance does.
//!
//! `fast` leaves the real kernels out (no compile: what CI runs on every
//! change).

use ascendopt_device::Device;
use ascendopt_harness::pipeline::{evaluate_package, PipelineConfig};
use ascendopt_harness::verdict::Verdict;
use ascendopt_op::package::{builtin_ops_dir, copy_tree, OpPackage};
use ascendopt_op::spec::edit::SpecEdit;
pub use ascendopt_sim::timing::fidelity::{render, Point, Status};

/// What to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Only the points that need no kernel build.
    pub fast: bool,
    /// Seed of the kernels' inputs.
    pub seed: u64,
}

/// Why the table could not be made.
#[derive(Debug, thiserror::Error)]
pub enum FidelityError {
    /// A hand-written trace could not be timed (a bug of the table).
    #[error("timing a fidelity trace: {0}")]
    Timing(#[from] ascendopt_sim::timing::fidelity::FidelityTraceError),
    /// The fixture package could not be prepared.
    #[error("preparing the fixture {what}: {message}")]
    Fixture {
        /// Which fixture.
        what: String,
        /// What went wrong.
        message: String,
    },
    /// A fixture kernel did not evaluate as correct.
    #[error("the fixture {what} did not evaluate as correct: {verdict}")]
    Evaluation {
        /// Which fixture.
        what: String,
        /// Its verdict.
        verdict: String,
    },
}

/// Every point of the table (only the trace-timed ones when `fast`).
pub fn run(device: &dyn Device, options: &Options) -> Result<Vec<Point>, FidelityError> {
    let mut points = ascendopt_sim::timing::fidelity::synthetic_points()?;
    if !options.fast {
        points.extend(kernel_points(device, options.seed)?);
    }
    Ok(points)
}

/// The honest add_custom kernel's Compute with the Add replaced by a loop
/// of GetValue/SetValue over the elements.
const SCALAR_LOOP: &str = "for (uint32_t j = 0; j < length; j++) {\n\
            zLocal.SetValue(j, (T)(xLocal.GetValue(j) + yLocal.GetValue(j)));\n\
        }";

/// add_custom in plain C++ over the GM pointers (only the tiling read is
/// an AscendC call), every core taking its share (also the timing tests'
/// fixture).
pub const PLAIN_ADD: &str = r#"
#include "kernel_operator.h"
using namespace AscendC;

template <typename T>
__aicore__ inline void AddRange(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t total) {
    uint32_t blocks = (uint32_t)GetBlockNum();
    uint32_t per = (total + blocks - 1) / blocks;
    uint32_t start = per * (uint32_t)GetBlockIdx();
    uint32_t end = start + per < total ? start + per : total;
    __gm__ T* xs = (__gm__ T*)x;
    __gm__ T* ys = (__gm__ T*)y;
    __gm__ T* zs = (__gm__ T*)z;
    for (uint32_t i = start; i < end; i++) {
        zs[i] = (T)(xs[i] + ys[i]);
    }
}

extern "C" __global__ __aicore__ void add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    if (TILING_KEY_IS(1)) {
        AddRange<half>(x, y, z, tilingData.totalLength);
    } else if (TILING_KEY_IS(2)) {
        AddRange<float>(x, y, z, tilingData.totalLength);
    } else if (TILING_KEY_IS(3)) {
        AddRange<int32_t>(x, y, z, tilingData.totalLength);
    }
}
"#;

/// The add_custom fixtures' only case: 48 x 8192 halves.
const FIXTURE_CASES: &str = r#"
[[cases]]
name = "f16_48x8192"
shapes = [[48, 8192], [48, 8192]]
dtype = "float16"
"#;

/// The core span (µs) of a copy of add_custom whose kernel source `edit`
/// makes from the built-in one.
fn add_custom_span(
    device: &dyn Device,
    what: &str,
    seed: u64,
    edit: impl Fn(&str) -> Option<String>,
) -> Result<f64, FidelityError> {
    let fixture = |message: String| FidelityError::Fixture {
        what: what.to_string(),
        message,
    };
    let src = builtin_ops_dir().join("add_custom");
    let dir = tempfile::Builder::new()
        .prefix("ascendopt-fidelity")
        .tempdir()
        .map_err(|e| fixture(e.to_string()))?;
    let root = dir.path().join("add_custom");
    copy_tree(&src, &root, &["build"])
        .map_err(|(path, e)| fixture(format!("copying {}: {e}", path.display())))?;
    let kernel_path = root.join("op_kernel/add_custom.cpp");
    let kernel = std::fs::read_to_string(&kernel_path).map_err(|e| fixture(e.to_string()))?;
    let edited =
        edit(&kernel).ok_or_else(|| fixture("the built-in kernel changed shape".into()))?;
    std::fs::write(&kernel_path, edited).map_err(|e| fixture(e.to_string()))?;
    // Only the fixture case: keep the spec, replace the cases.
    let toml_path = root.join("op.toml");
    let mut spec = SpecEdit::read(&toml_path).map_err(|e| fixture(e.to_string()))?;
    spec.replace_cases(FIXTURE_CASES)
        .map_err(|e| fixture(e.to_string()))?;
    spec.write().map_err(|e| fixture(e.to_string()))?;
    let package =
        OpPackage::load(&root, &ascendopt_golden::BUILTINS).map_err(|e| fixture(e.to_string()))?;
    let cfg = PipelineConfig {
        repeats: 1,
        deterministic: true,
        seed,
    };
    let (verdict, _) =
        evaluate_package(device, &package, seed, &cfg).map_err(|e| fixture(e.to_string()))?;
    match &verdict {
        Verdict::Correct { profile, .. } => Ok(profile.core_span_us),
        other => Err(FidelityError::Evaluation {
            what: what.to_string(),
            verdict: other.label(),
        }),
    }
}

/// The points that run real kernels.
fn kernel_points(device: &dyn Device, seed: u64) -> Result<Vec<Point>, FidelityError> {
    const ADD: &str = "Add(zLocal, xLocal, yLocal, length);";
    let vector = add_custom_span(device, "add_custom", seed, |k| Some(k.to_string()))?;
    let scalar_loop = add_custom_span(
        device,
        "add_custom with a GetValue/SetValue loop",
        seed,
        |k| k.contains(ADD).then(|| k.replacen(ADD, SCALAR_LOOP, 1)),
    )?;
    let plain = add_custom_span(device, "add_custom in plain C++", seed, |_| {
        Some(PLAIN_ADD.to_string())
    })?;
    let guide =
        "[G §2.6.1, §2.6.3.2] per-element scalar loops are a bottleneck (hardware-facts §H16)";
    Ok(vec![
        Point {
            group: "scalar",
            name: "GetValue/SetValue loop over the vector Add (>= 10x)".into(),
            unit: "x",
            measured: 10.0,
            model: scalar_loop / vector,
            band: (1.0, f64::INFINITY),
            source: guide,
            known_miss: None,
        },
        Point {
            group: "scalar",
            name: "plain C++ over __gm__ pointers over the vector Add (>= 10x)".into(),
            unit: "x",
            measured: 10.0,
            model: plain / vector,
            band: (1.0, f64::INFINITY),
            source: guide,
            known_miss: None,
        },
    ])
}
