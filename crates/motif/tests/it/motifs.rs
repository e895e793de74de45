//! Every motif in both directions on real built-in kernels, through the
//! real evaluation pipeline (g++ build, hardened correctness, deterministic
//! profile on the simulator): `remove` on the strong kernel must give a
//! kernel that compiles, is correct and is slower; `apply` on that weak
//! kernel must give one that compiles, is correct and is faster again.
//!
//! Each operator runs with a small spec (its own op.toml with the cases
//! replaced by a tail case and one benchmark case), so an evaluation takes
//! about a second; builds are shared through target/ascendopt-test-cache.

use ascendopt_harness::pipeline::{evaluate_package, PipelineConfig};
use ascendopt_harness::verdict::Verdict;
use ascendopt_motif::{by_tag, diff, Motif, Site, SiteState, Sources};
use ascendopt_op::package::OpPackage;
use ascendopt_sim::{SimDevice, SimDeviceConfig};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn device() -> &'static SimDevice {
    static DEVICE: OnceLock<SimDevice> = OnceLock::new();
    DEVICE.get_or_init(|| {
        let mut cfg = SimDeviceConfig::standard().unwrap();
        cfg.cache =
            ascendopt_sim::build::BuildCache::at(repo().join("target/ascendopt-test-cache"));
        cfg.limits.wall_ms = 120_000;
        SimDevice::new(cfg)
    })
}

/// The package's op.toml with its cases replaced by `cases`.
fn small_spec(dir: &Path, cases: &str) -> String {
    let full = std::fs::read_to_string(dir.join("op.toml")).unwrap();
    let head = match full.find("\n[[cases]]") {
        Some(i) => &full[..i + 1],
        None => full.as_str(),
    };
    format!("{head}\n{cases}")
}

/// Latency (us) of `sources` under the small spec; panics with the verdict
/// when the candidate is not correct. Results are memoised per text.
fn latency(op: &str, cases: &str, sources: &Sources, what: &str) -> f64 {
    latency_in(&repo().join("ops").join(op), cases, sources, what)
}

/// Latency (us) of `sources` of the package in `origin` (its op.toml with
/// the cases replaced by `cases`); panics when it is not correct.
pub(crate) fn latency_in(origin: &Path, cases: &str, sources: &Sources, what: &str) -> f64 {
    let op = origin
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("op")
        .to_string();
    static MEMO: OnceLock<Mutex<HashMap<String, f64>>> = OnceLock::new();
    let memo = MEMO.get_or_init(|| Mutex::new(HashMap::new()));
    let files: String = sources
        .files()
        .map(|(p, text)| format!("//== {p}\n{text}"))
        .collect();
    let key = format!("{op}\n{cases}\n{files}");
    if let Some(v) = memo.lock().unwrap().get(&key) {
        return *v;
    }
    let tmp = tempfile::Builder::new().prefix("motif").tempdir().unwrap();
    let dir = tmp.path().join(&op);
    sources.write_to(&dir).unwrap();
    std::fs::write(dir.join("op.toml"), small_spec(origin, cases)).unwrap();
    let pkg = OpPackage::load(&dir, &ascendopt_golden::BUILTINS).unwrap();
    let cfg = PipelineConfig {
        repeats: 1,
        deterministic: true,
        seed: 7,
    };
    let (verdict, _) = evaluate_package(device(), &pkg, 7, &cfg).unwrap();
    let v = match &verdict {
        Verdict::Correct { latency, .. } => latency.median_us,
        other => panic!("{op} {what}: expected a correct kernel, got {other:?}"),
    };
    memo.lock().unwrap().insert(key, v);
    v
}

fn builtin(op: &str) -> Sources {
    Sources::load(&repo().join("ops").join(op)).unwrap()
}

/// What one round trip measured.
#[derive(Debug)]
#[allow(dead_code)] // read through Debug in failure messages
struct RoundTrip {
    strong_us: f64,
    weak_us: f64,
    back_us: f64,
    exact: bool,
}

/// remove at the first Present site `pick` accepts, evaluate, apply at
/// the Absent site of the weak kernel `pick` accepts, evaluate.
fn round_trip(op: &str, cases: &str, tag: &str, pick: impl Fn(&Site, &str) -> bool) -> RoundTrip {
    let motif: Box<dyn Motif> = by_tag(tag).unwrap();
    let strong = builtin(op);
    let sites = motif.detect(&strong);
    let site = sites
        .iter()
        .find(|s| s.state == SiteState::Present && pick(s, strong.get(&s.file).unwrap()))
        .unwrap_or_else(|| panic!("{op}: no present {tag} site among {sites:#?}"));
    let weak = motif
        .remove(&strong, site)
        .unwrap_or_else(|| panic!("{op}: {tag} declined to remove {site:?}"));
    let removal = diff(&strong, &weak);
    let weak_sites = motif.detect(&weak);
    let back_site = weak_sites
        .iter()
        .filter(|s| s.state == SiteState::Absent)
        .find(|s| motif.apply(&weak, s).is_some_and(|b| b == strong))
        .or_else(|| {
            weak_sites
                .iter()
                .find(|s| s.state == SiteState::Absent && pick(s, weak.get(&s.file).unwrap()))
        })
        .unwrap_or_else(|| {
            panic!("{op}: no absent {tag} site in the weak kernel among {weak_sites:#?}\n{removal}")
        });
    let back = motif
        .apply(&weak, back_site)
        .unwrap_or_else(|| panic!("{op}: {tag} declined to apply at {back_site:?}"));
    let strong_us = latency(op, cases, &strong, "strong");
    let weak_us = latency(
        op,
        cases,
        &weak,
        &format!("after removing {tag}:\n{removal}"),
    );
    let back_us = latency(
        op,
        cases,
        &back,
        &format!("after re-applying {tag}:\n{}", diff(&weak, &back)),
    );
    let rt = RoundTrip {
        strong_us,
        weak_us,
        back_us,
        exact: back == strong,
    };
    eprintln!(
        "{tag:>16} on {op:<18} strong {:9.3} us  weak {:9.3} us ({:+.1}%)  applied {:9.3} us  {}",
        rt.strong_us,
        rt.weak_us,
        (rt.weak_us / rt.strong_us - 1.0) * 100.0,
        rt.back_us,
        if rt.exact {
            "(original text)"
        } else {
            "(not the original text)"
        }
    );
    assert!(
        rt.weak_us > rt.strong_us,
        "{op}: removing {tag} did not slow it down: {rt:?}\n{removal}"
    );
    assert!(
        rt.back_us < rt.weak_us,
        "{op}: applying {tag} did not speed it up: {rt:?}\n{}",
        diff(&weak, &back)
    );
    rt
}

fn any(_: &Site, _: &str) -> bool {
    true
}

fn call_named(name: &'static str) -> impl Fn(&Site, &str) -> bool {
    move |s: &Site, text: &str| {
        text[s.span.0..s.span.1]
            .trim_start()
            .starts_with(&format!("{name}("))
    }
}

/// fp16 streaming cases: a tail (3003 elements) and 48 cores x 2 tiles.
const ADD_CASES: &str = r#"
[[cases]]
name = "f16_tail"
shapes = [[3, 1001], [3, 1001]]
dtype = "float16"

[[cases]]
name = "f16_bench"
shapes = [[48, 32768], [48, 32768]]
dtype = "float16"
"#;

const UNARY_F16_CASES: &str = r#"
[[cases]]
name = "f16_tail"
shapes = [[3, 1001]]
dtype = "float16"

[[cases]]
name = "f16_bench"
shapes = [[48, 32768]]
dtype = "float16"
"#;

const MULS_CASES: &str = r#"
[[cases]]
name = "f32_tail"
shapes = [[1999]]
dtype = "float32"
attrs = { value = 3.0 }

[[cases]]
name = "f16_bench"
shapes = [[48, 32768]]
dtype = "float16"
attrs = { value = 1.5 }
"#;

/// Three streams (dy, x in; z out), vector-heavy in fp16.
const FAST_GELU_GRAD_CASES: &str = r#"
[[cases]]
name = "f16_tail"
shapes = [[3, 1001], [3, 1001]]
dtype = "float16"
inputs = { x = { kind = "normal", mean = 0.0, scale = 3.0 } }

[[cases]]
name = "f16_bench"
shapes = [[48, 32768], [48, 32768]]
dtype = "float16"
inputs = { x = { kind = "normal", mean = 0.0, scale = 3.0 } }
"#;

/// Three inputs (dy, x, y), one output; vector-heavy in fp16.
const GELU_GRAD_CASES: &str = r#"
[[cases]]
name = "f16_tail"
shapes = [[3, 1001], [3, 1001], [3, 1001]]
dtype = "float16"
inputs = { x = { kind = "normal", mean = 0.0, scale = 3.0 } }

[[cases]]
name = "f16_bench"
shapes = [[48, 32768], [48, 32768], [48, 32768]]
dtype = "float16"
inputs = { x = { kind = "normal", mean = 0.0, scale = 3.0 } }
"#;

const SWISH_CASES: &str = r#"
[[cases]]
name = "f16_tail"
shapes = [[3, 1001]]
dtype = "float16"
attrs = { scale = 1.2 }

[[cases]]
name = "f16_bench"
shapes = [[48, 32768]]
dtype = "float16"
attrs = { scale = 1.2 }
inputs = { x = { kind = "normal", mean = 0.0, scale = 4.0 } }
"#;

/// Rows of 100 fp16 (200 B, padded to 224 B in UB): the strided copy path.
const RMS_NORM_CASES: &str = r#"
[[cases]]
name = "f16_tail"
shapes = [[7, 100], [100]]
dtype = "float16"
tolerance = { atol = 8e-3, rtol = 8e-3 }

[[cases]]
name = "f16_bench"
shapes = [[4096, 100], [100]]
dtype = "float16"
tolerance = { atol = 8e-3, rtol = 8e-3 }
"#;

/// Row chunks of a wide matrix above the diagonal are read with a strided
/// copy (only the kept columns).
const TRIL_CASES: &str = r#"
[[cases]]
name = "f32_48x64"
shapes = [[48, 64]]
dtype = "float32"

[[cases]]
name = "f16_bench"
shapes = [[1024, 1000]]
dtype = "float16"
attrs = { diagonal = 1 }
"#;

/// The benchmark streams 4 tiles of 64 KB per core: with one tile per core
/// (48 x 32768 fp16) the bound queue cannot overlap its copy-in and
/// copy-out at all, and the weak kernel's smaller tiles (its UB split
/// halves) win by pipelining two of them, which measures the tile count,
/// not the buffer reuse.
const RESHAPE_CASES: &str = r#"
[[cases]]
name = "i8_tail"
shapes = [[3, 1001], [1]]
dtypes = { x = "int8", shape = "int32" }
inputs = { shape = { kind = "int", low = -1, high = -1 } }

[[cases]]
name = "f16_bench"
shapes = [[48, 131072], [1]]
dtypes = { x = "float16", shape = "int64" }
inputs = { shape = { kind = "int", low = -1, high = -1 } }
"#;

const TRUNC_INT_CASES: &str = r#"
[[cases]]
name = "u8_tail"
shapes = [[3, 1001]]
dtype = "uint8"

[[cases]]
name = "i32_bench"
shapes = [[48, 16384]]
dtype = "int32"
"#;

#[test]
fn double_buffer_on_fast_gelu_grad() {
    round_trip("fast_gelu_grad", FAST_GELU_GRAD_CASES, "double_buffer", any);
}

#[test]
fn double_buffer_on_gelu() {
    round_trip("gelu", UNARY_F16_CASES, "double_buffer", any);
}

#[test]
fn multi_core_on_add_custom() {
    round_trip("add_custom", ADD_CASES, "multi_core", any);
}

#[test]
fn multi_core_on_fast_gelu_grad() {
    round_trip("fast_gelu_grad", FAST_GELU_GRAD_CASES, "multi_core", any);
}

#[test]
fn tile_size_on_add_custom() {
    round_trip("add_custom", ADD_CASES, "tile_size", any);
}

#[test]
fn tile_size_on_muls() {
    round_trip("muls", MULS_CASES, "tile_size", any);
}

#[test]
fn strided_copy_on_rms_norm() {
    round_trip("rms_norm", RMS_NORM_CASES, "strided_copy", any);
}

#[test]
fn strided_copy_on_tril() {
    round_trip("tril", TRIL_CASES, "strided_copy", any);
}

#[test]
fn fused_vec_ops_on_fast_gelu_grad() {
    round_trip(
        "fast_gelu_grad",
        FAST_GELU_GRAD_CASES,
        "fused_vec_ops",
        call_named("Muls"),
    );
}

#[test]
fn fused_vec_ops_on_swish() {
    round_trip("swish", SWISH_CASES, "fused_vec_ops", call_named("Muls"));
}

#[test]
fn hoist_invariant_on_fast_gelu_grad() {
    round_trip(
        "fast_gelu_grad",
        FAST_GELU_GRAD_CASES,
        "hoist_invariant",
        any,
    );
}

#[test]
fn hoist_invariant_on_gelu_grad() {
    round_trip("gelu_grad", GELU_GRAD_CASES, "hoist_invariant", any);
}

#[test]
fn barrier_elim_on_add_custom() {
    round_trip("add_custom", ADD_CASES, "barrier_elim", any);
}

#[test]
fn barrier_elim_on_gelu() {
    round_trip("gelu", UNARY_F16_CASES, "barrier_elim", any);
}

#[test]
fn count_mode_on_add_custom() {
    round_trip("add_custom", ADD_CASES, "count_mode", call_named("Add"));
}

#[test]
fn count_mode_on_sqrt() {
    round_trip("sqrt", UNARY_F16_CASES, "count_mode", call_named("Sqrt"));
}

#[test]
fn tail_fold_on_add_custom() {
    round_trip("add_custom", ADD_CASES, "tail_fold", any);
}

#[test]
fn tail_fold_on_sqrt() {
    round_trip("sqrt", UNARY_F16_CASES, "tail_fold", any);
}

#[test]
fn vectorize_scalar_on_add_custom() {
    round_trip(
        "add_custom",
        ADD_CASES,
        "vectorize_scalar",
        call_named("Add"),
    );
}

#[test]
fn vectorize_scalar_on_muls() {
    round_trip("muls", MULS_CASES, "vectorize_scalar", call_named("Muls"));
}

#[test]
fn buffer_reuse_on_reshape() {
    round_trip("reshape", RESHAPE_CASES, "buffer_reuse", any);
}

#[test]
fn buffer_reuse_on_trunc() {
    round_trip("trunc", TRUNC_INT_CASES, "buffer_reuse", any);
}

/// The two-pass naive rms_norm of benches/naive (written here): rows that
/// fit its 1024-float tile, so the first pass runs once per row.
const NAIVE_RMS_NORM_CASES: &str = r#"[[cases]]
name = "f32_tail"
shapes = [[7, 100], [100]]
dtype = "float32"

[[cases]]
name = "f32_bench"
shapes = [[64, 1024], [1024]]
dtype = "float32"
"#;

#[test]
fn one_pass_on_the_naive_rms_norm() {
    // The two-pass sites are sites of hoist_invariant (GM data loaded once).
    let motif = by_tag("hoist_invariant").unwrap();
    let weak = Sources::load(&repo().join("benches/naive/rms_norm")).unwrap();
    let sites: Vec<Site> = motif
        .detect(&weak)
        .into_iter()
        .filter(|s| s.state == SiteState::Absent && s.note.starts_with("xGm is copied"))
        .collect();
    assert_eq!(sites.len(), 1, "{sites:#?}");
    let strong = motif.apply(&weak, &sites[0]).unwrap();
    let weak_us = latency("rms_norm", NAIVE_RMS_NORM_CASES, &weak, "naive");
    let strong_us = latency(
        "rms_norm",
        NAIVE_RMS_NORM_CASES,
        &strong,
        &format!("one pass:\n{}", diff(&weak, &strong)),
    );
    eprintln!("one_pass on naive rms_norm: {weak_us:.3} us -> {strong_us:.3} us");
    assert!(strong_us < weak_us, "{weak_us} -> {strong_us}");
    let present = motif
        .detect(&strong)
        .into_iter()
        .find(|s| s.state == SiteState::Present && s.note.contains("first pass"))
        .unwrap();
    assert_eq!(motif.remove(&strong, &present).unwrap(), weak);
}
