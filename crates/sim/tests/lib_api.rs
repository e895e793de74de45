//! The high-level API library (guide 6.2.4: Sigmoid, Tanh, Sin, ..., Power,
//! Sum, Mean, SoftMax, CumSum) end to end: small kernels of our own compiled
//! with g++ against the emulation headers and run in-process, their results
//! compared with f64 references over sweeps that include the edge values,
//! every overload (sharedTmpBuffer or framework space, calCount or the whole
//! tensor), tails (calCount not a multiple of the repeat), temporary
//! buffers smaller than the data (several passes) and too small (a fault).
//!
//! One shared object holds every kernel, so the suite compiles once.

use ascendopt_op::Dtype;
use ascendopt_sim::launch::{
    run_kernel, JobTensor, LaunchFailure, LaunchJob, LaunchOutput, Platform, TilingInfo,
};
use ascendopt_sim::trace::{InstrKind, VecOp};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// Element-wise kernels: `y = API(x)` over `n` elements in tiles of `tile`
/// (the last tile may be shorter: a calCount tail). Tiling words:
/// [api, n, tile, tmp_bytes, form]; form 0 = (sharedTmpBuffer, calCount),
/// 1 = (sharedTmpBuffer) on a view of exactly calCount elements,
/// 2 = (calCount) with framework space, 3 = () on an exact view,
/// 4 = in place (dst = src, sharedTmpBuffer, calCount), 5 = (calCount) with
/// framework space after a filler TBuf that leaves exactly tmp_bytes of the
/// UB (196352 bytes on the 910B2) free.
const UNARY: &str = r#"
#include "kernel_operator.h"
using namespace AscendC;

#define FORMS(API)                                                            \
  switch (form) {                                                             \
    case 0: API(y, x, tmp, cnt); break;                                       \
    case 1: API(ye, xe, tmp); break;                                          \
    case 2: API(y, x, cnt); break;                                            \
    case 3: API(ye, xe); break;                                               \
    case 4: API(x, x, tmp, cnt); DataCopy(y, x, pad); break;                  \
    default: API(y, x, cnt); break;                                           \
  }

template <typename T>
__aicore__ inline void apply(uint32_t api, uint32_t form, const LocalTensor<T>& y, const LocalTensor<T>& x,
                             const LocalTensor<uint8_t>& tmp, uint32_t cnt, uint32_t pad) {
  LocalTensor<T> xe = x, ye = y;
  xe.SetSize(cnt);
  ye.SetSize(cnt);
  switch (api) {
    case 0: FORMS(Sigmoid); break;
    case 1: FORMS(Tanh); break;
    case 2: FORMS(Sin); break;
    case 3: FORMS(Cos); break;
    case 4: FORMS(Tan); break;
    case 5: FORMS(Asin); break;
    case 6: FORMS(Acos); break;
    case 7: FORMS(Atan); break;
    case 8: FORMS(Sinh); break;
    case 9: FORMS(Cosh); break;
    case 10: FORMS(Erf); break;
    case 11: FORMS(Erfc); break;
    case 12: FORMS(Sign); break;
    case 13: FORMS(Floor); break;
    case 14: FORMS(Ceil); break;
    case 15: FORMS(Round); break;
    case 16: FORMS(Trunc); break;
    case 17: FORMS(Frac); break;
    case 18: Log(y, x, cnt); break;
    case 19: FORMS(Log2); break;
    case 20: Log10(y, x, cnt); break;
    case 21: if (form == 2 || form == 5) Exp<T, 12, false>(y, x, cnt); else Exp<T, 12, false>(y, x, tmp, cnt); break;
    case 22: Exp<T, 3>(y, x, tmp, cnt); break;
  }
}

template <typename T>
__aicore__ inline void run(GM_ADDR x, GM_ADDR y, GM_ADDR tiling) {
  GlobalTensor<uint32_t> t;
  t.SetGlobalBuffer((__gm__ uint32_t*)tiling, 5);
  uint32_t api = t.GetValue(0), n = t.GetValue(1), tile = t.GetValue(2), tmpBytes = t.GetValue(3),
           form = t.GetValue(4);
  GlobalTensor<T> xg, yg;
  xg.SetGlobalBuffer((__gm__ T*)x, n);
  yg.SetGlobalBuffer((__gm__ T*)y, n);
  TPipe pipe;
  TQue<TPosition::VECIN, 1> qx;
  TQue<TPosition::VECOUT, 1> qy;
  TBuf<TPosition::VECCALC> tb, filler;
  pipe.InitBuffer(qx, 1, tile * sizeof(T));
  pipe.InitBuffer(qy, 1, tile * sizeof(T));
  LocalTensor<uint8_t> tmp;
  if (form == 5) {
    pipe.InitBuffer(filler, 196352 - 2 * tile * sizeof(T) - tmpBytes);
  } else if (tmpBytes > 0) {
    pipe.InitBuffer(tb, tmpBytes);
    tmp = tb.Get<uint8_t>();
  }
  const uint32_t per_block = 32 / sizeof(T);
  for (uint32_t off = 0; off < n; off += tile) {
    uint32_t cnt = n - off < tile ? n - off : tile;
    uint32_t pad = (cnt + per_block - 1) / per_block * per_block;
    LocalTensor<T> xl = qx.AllocTensor<T>();
    DataCopy(xl, xg[off], pad);
    qx.EnQue(xl);
    LocalTensor<T> xv = qx.DeQue<T>();
    LocalTensor<T> yl = qy.AllocTensor<T>();
    apply<T>(api, form, yl, xv, tmp, cnt, pad);
    qy.EnQue(yl);
    qx.FreeTensor(xv);
    LocalTensor<T> yv = qy.DeQue<T>();
    DataCopy(yg[off], yv, pad);
    qy.FreeTensor(yv);
  }
}

extern "C" __global__ __aicore__ void unary_f32(GM_ADDR x, GM_ADDR y, GM_ADDR ws, GM_ADDR tiling) {
  run<float>(x, y, tiling);
}
extern "C" __global__ __aicore__ void unary_f16(GM_ADDR x, GM_ADDR y, GM_ADDR ws, GM_ADDR tiling) {
  run<half>(x, y, tiling);
}
"#;

fn sim_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The kernel library, compiled once per test run.
fn library() -> &'static Path {
    static LIB: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let (_, so) = LIB.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let cpp = dir.path().join("lib_api.cpp");
        std::fs::write(&cpp, UNARY).unwrap();
        let so = dir.path().join("liblib_api.so");
        let out = Command::new("g++")
            .args(["-std=c++17", "-O1", "-fPIC", "-shared", "-I"])
            .arg(sim_dir().join("include"))
            .arg(&cpp)
            .arg(sim_dir().join("runtime_src/kernel_entry.cpp"))
            .arg("-o")
            .arg(&so)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        (dir, so)
    });
    so
}

fn platform() -> Platform {
    Platform {
        soc_version: "Ascend910B2".into(),
        core_num_aiv: 48,
        core_num_aic: 24,
        ub_size: 196_352,
        l1_size: 524_288,
        l0a_size: 65_536,
        l0b_size: 65_536,
        l0c_size: 131_072,
        l2_size: 201_326_592,
        hbm_size: 64 << 30,
    }
}

/// One element type of the sweeps.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Ty {
    F32,
    F16,
}

impl Ty {
    fn dtype(self) -> Dtype {
        match self {
            Ty::F32 => Dtype::Float32,
            Ty::F16 => Dtype::Float16,
        }
    }
    fn kernel(self) -> &'static str {
        match self {
            Ty::F32 => "unary_f32",
            Ty::F16 => "unary_f16",
        }
    }
    /// The value as stored (rounded to the type).
    fn round(self, v: f64) -> f64 {
        match self {
            Ty::F32 => v as f32 as f64,
            Ty::F16 => half::f16::from_f64(v).to_f64(),
        }
    }
    fn encode(self, v: &[f64]) -> Vec<u8> {
        match self {
            Ty::F32 => v.iter().flat_map(|x| (*x as f32).to_le_bytes()).collect(),
            Ty::F16 => v
                .iter()
                .flat_map(|x| half::f16::from_f64(*x).to_le_bytes())
                .collect(),
        }
    }
    fn decode(self, b: &[u8]) -> Vec<f64> {
        match self {
            Ty::F32 => b
                .chunks(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]) as f64)
                .collect(),
            Ty::F16 => b
                .chunks(2)
                .map(|c| half::f16::from_le_bytes([c[0], c[1]]).to_f64())
                .collect(),
        }
    }
    fn size(self) -> usize {
        match self {
            Ty::F32 => 4,
            Ty::F16 => 2,
        }
    }
}

/// Runs one element-wise launch: words [api, n, tile, tmp, form].
fn launch(ty: Ty, words: [u32; 5], x: &[f64]) -> Result<LaunchOutput, LaunchFailure> {
    let n = x.len();
    assert_eq!(words[1] as usize, n);
    let tensor = |data: Vec<u8>| JobTensor {
        dtype: ty.dtype(),
        shape: vec![n as i64],
        data,
    };
    let job = LaunchJob {
        host_lib: PathBuf::new(),
        kernel_lib: library().to_path_buf(),
        kernel_name: ty.kernel().into(),
        op_type: None,
        inputs: vec![tensor(ty.encode(x))],
        outputs: vec![tensor(vec![0xff; n * ty.size()])],
        attrs: vec![],
        platform: platform(),
        seed: 7,
        max_instrs_per_block: 2_000_000,
        knobs: Vec::new(),
        check_in_worker: false,
        tiling_only: false,
    };
    let tiling = TilingInfo {
        block_dim: 1,
        tiling_key: 0,
        data: words.iter().flat_map(|w| w.to_le_bytes()).collect(),
        workspace: 0,
    };
    run_kernel(&job, &tiling)
}

fn run_unary(ty: Ty, api: u32, x: &[f64], tile: u32, tmp: u32, form: u32) -> Vec<f64> {
    let out = launch(ty, [api, x.len() as u32, tile, tmp, form], x)
        .unwrap_or_else(|e| panic!("api {api} {ty:?} form {form}: {e}"));
    ty.decode(&out.outputs[0])
}

/// The largest min(|abs error|, |rel error|) of `got` against `want(x)`
/// (NaN must be NaN, infinities equal), and the input where it is.
fn worst(x: &[f64], got: &[f64], want: impl Fn(f64) -> f64) -> (f64, f64) {
    let mut w = (0.0, f64::NAN);
    for (&xi, &g) in x.iter().zip(got) {
        let r = want(xi);
        let e = if r.is_nan() || g.is_nan() {
            if r.is_nan() && g.is_nan() {
                0.0
            } else {
                f64::INFINITY
            }
        } else if r.is_infinite() || g.is_infinite() {
            if r == g {
                0.0
            } else {
                f64::INFINITY
            }
        } else {
            let abs = (g - r).abs();
            let rel = if r != 0.0 { abs / r.abs() } else { abs };
            abs.min(rel)
        };
        if e > w.0 {
            w = (e, xi);
        }
    }
    w
}

/// `count` inputs spread over [lo, hi], plus small magnitudes and the
/// special values, stored in the type.
fn sweep(ty: Ty, lo: f64, hi: f64, count: usize, specials: &[f64]) -> Vec<f64> {
    let mut v: Vec<f64> = (0..count)
        .map(|i| lo + (hi - lo) * (i as f64 + 0.37) / count as f64)
        .collect();
    for k in 1..40 {
        let m = 2f64.powi(-k);
        if m * 2.0 >= lo.abs().max(hi.abs()) {
            continue;
        }
        if lo < 0.0 {
            v.push(-m * 1.3);
        }
        v.push(m * 1.7);
    }
    v.extend_from_slice(specials);
    v.iter().map(|&x| ty.round(x)).collect()
}

struct Case {
    name: &'static str,
    api: u32,
    lo: f64,
    hi: f64,
    specials: &'static [f64],
    want: fn(f64) -> f64,
    /// Bound on the error metric for float32 results.
    tol_f32: f64,
}

const INF: f64 = f64::INFINITY;
const NAN: f64 = f64::NAN;

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "Sigmoid",
            api: 0,
            lo: -100.0,
            hi: 100.0,
            specials: &[0.0, -0.0, INF, -INF, NAN],
            want: |x| 1.0 / (1.0 + (-x).exp()),
            tol_f32: 3e-7,
        },
        Case {
            name: "Tanh",
            api: 1,
            lo: -20.0,
            hi: 20.0,
            specials: &[0.0, INF, -INF, NAN],
            want: f64::tanh,
            tol_f32: 3e-7,
        },
        Case {
            name: "Sin",
            api: 2,
            lo: -65504.0,
            hi: 65504.0,
            specials: &[
                0.0,
                std::f64::consts::PI,
                -std::f64::consts::FRAC_PI_2,
                NAN,
                INF,
            ],
            want: f64::sin,
            tol_f32: 3e-7,
        },
        Case {
            name: "Cos",
            api: 3,
            lo: -65504.0,
            hi: 65504.0,
            specials: &[0.0, std::f64::consts::PI, std::f64::consts::FRAC_PI_2, NAN],
            want: f64::cos,
            tol_f32: 3e-7,
        },
        Case {
            name: "Tan",
            api: 4,
            lo: -3.0,
            hi: 3.0,
            specials: &[0.0, std::f64::consts::FRAC_PI_4, NAN],
            want: f64::tan,
            tol_f32: 5e-7,
        },
        Case {
            name: "Asin",
            api: 5,
            lo: -1.0,
            hi: 1.0,
            specials: &[1.0, -1.0, 0.5, 0.0, 1.5, NAN],
            want: f64::asin,
            tol_f32: 3e-7,
        },
        Case {
            name: "Acos",
            api: 6,
            lo: -1.0,
            hi: 1.0,
            specials: &[1.0, -1.0, 0.5, -0.5, 0.0, 1.5, NAN],
            want: f64::acos,
            tol_f32: 4e-7,
        },
        Case {
            name: "Atan",
            api: 7,
            lo: -1e6,
            hi: 1e6,
            specials: &[0.0, 1.0, -1.0, 0.414, 2.414, INF, -INF, NAN],
            want: f64::atan,
            tol_f32: 3e-7,
        },
        Case {
            name: "Sinh",
            api: 8,
            lo: -89.0,
            hi: 89.0,
            specials: &[0.0, 0.5, -0.5, NAN],
            want: f64::sinh,
            tol_f32: 4e-7,
        },
        Case {
            name: "Cosh",
            api: 9,
            lo: -89.0,
            hi: 89.0,
            specials: &[0.0, NAN],
            want: f64::cosh,
            tol_f32: 4e-7,
        },
        Case {
            name: "Erf",
            api: 10,
            lo: -10.0,
            hi: 10.0,
            specials: &[0.0, 1.0, -1.0, INF, -INF, NAN],
            want: libm::erf,
            tol_f32: 3e-7,
        },
        Case {
            name: "Erfc",
            api: 11,
            lo: -10.0,
            hi: 10.0,
            specials: &[0.0, 1.0, -1.0, 0.5, INF, -INF, NAN],
            want: libm::erfc,
            tol_f32: 8e-6,
        },
        Case {
            name: "Sign",
            api: 12,
            lo: -1e30,
            hi: 1e30,
            specials: &[0.0, -0.0, 1e-40, -1e-40, INF, -INF, NAN],
            want: |x| {
                if x == 0.0 || x.is_nan() {
                    x
                } else {
                    x.signum()
                }
            },
            tol_f32: 0.0,
        },
        Case {
            name: "Floor",
            api: 13,
            lo: -1000.0,
            hi: 1000.0,
            specials: &[2.5, -2.5, 0.5, -0.5, 3e9, INF, NAN],
            want: f64::floor,
            tol_f32: 0.0,
        },
        Case {
            name: "Ceil",
            api: 14,
            lo: -1000.0,
            hi: 1000.0,
            specials: &[2.5, -2.5, 0.5, -0.5, INF, NAN],
            want: f64::ceil,
            tol_f32: 0.0,
        },
        Case {
            name: "Round",
            api: 15,
            lo: -1000.0,
            hi: 1000.0,
            specials: &[2.5, -2.5, 3.5, 0.5, -0.5, INF, NAN],
            want: |x| {
                let r = x.round();
                if (x - x.trunc()).abs() == 0.5 {
                    2.0 * (x / 2.0).round()
                } else {
                    r
                }
            },
            tol_f32: 0.0,
        },
        Case {
            name: "Trunc",
            api: 16,
            lo: -1000.0,
            hi: 1000.0,
            specials: &[2.5, -2.5, INF, NAN],
            want: f64::trunc,
            tol_f32: 0.0,
        },
        Case {
            name: "Frac",
            api: 17,
            lo: -1000.0,
            hi: 1000.0,
            specials: &[2.5, -2.5, -258.418_88, 5592.625],
            want: f64::fract,
            tol_f32: 1e-7,
        },
        Case {
            name: "Log",
            api: 18,
            lo: 0.0,
            hi: 1e6,
            specials: &[1.0, 0.0, -1.0, INF, NAN],
            want: f64::ln,
            tol_f32: 2e-7,
        },
        Case {
            name: "Log2",
            api: 19,
            lo: 0.0,
            hi: 1e6,
            specials: &[1.0, 2.0, 0.0, -1.0, INF, NAN],
            want: f64::log2,
            tol_f32: 2e-7,
        },
        Case {
            name: "Log10",
            api: 20,
            lo: 0.0,
            hi: 1e6,
            specials: &[1.0, 10.0, 0.0, INF, NAN],
            want: f64::log10,
            tol_f32: 2e-7,
        },
        Case {
            name: "Exp<12>",
            api: 21,
            lo: -80.0,
            hi: 80.0,
            specials: &[0.0, 100.0, -110.0, INF, -INF, NAN],
            want: f64::exp,
            tol_f32: 3e-7,
        },
    ]
}

/// Half results: the f32 algorithm plus the final rounding, checked as the
/// f16 tolerance does (1e-3 abs or rel); the inputs are f16 values.
const TOL_F16: f64 = 1e-3;

#[test]
fn element_wise_functions_match_f64_over_sweeps() {
    let mut report = String::new();
    let mut failed = Vec::new();
    for c in cases() {
        for ty in [Ty::F32, Ty::F16] {
            let (lo, hi) = match ty {
                Ty::F16 => (c.lo.max(-65504.0), c.hi.min(65504.0)),
                Ty::F32 => (c.lo, c.hi),
            };
            // f16 Sinh/Cosh/Exp overflow beyond ~11.
            let (lo, hi) = if ty == Ty::F16 && (c.api == 8 || c.api == 9 || c.api == 21) {
                (lo.max(-11.0), hi.min(11.0))
            } else {
                (lo, hi)
            };
            let x = sweep(ty, lo, hi, 6000, c.specials);
            // Tile 4000 (f32) / 4016 (f16): chunks plus a calCount tail.
            let tile = if ty == Ty::F32 { 4000 } else { 4016 };
            let got = run_unary(ty, c.api, &x, tile, 64 * 1024, 0);
            let want = |v: f64| ty.round((c.want)(v));
            let (err, at) = worst(&x, &got, want);
            let tol = match ty {
                Ty::F32 => c.tol_f32,
                Ty::F16 => TOL_F16,
            };
            report.push_str(&format!("{} {ty:?}: err {err:.3e} at x = {at}\n", c.name));
            if err > tol {
                failed.push(format!(
                    "{} {ty:?}: err {err:e} > {tol:e} at x = {at}",
                    c.name
                ));
            }
        }
    }
    println!("{report}");
    assert!(failed.is_empty(), "{failed:#?}\n{report}");
}

/// The temporary bytes of one granule (256 bytes of the source type) for an
/// API with `nodes` float arrays (the half copy of the source included) and
/// `masks` bit masks: ascendopt/lib/tmp_layout.h's min_tmp_bytes.
fn min_tmp(ty: Ty, nodes: u32, masks: u32) -> u32 {
    let g = 256 / ty.size() as u32;
    nodes * g * 4 + masks * 32
}

/// (api, float nodes, masks) of some element-wise APIs, as tmp_layout.h
/// declares them for a float source (a half one adds one node).
const LAYOUTS: &[(u32, u32, u32)] = &[
    (0, 1, 0),
    (2, 4, 0),
    (7, 4, 2),
    (10, 3, 1),
    (17, 1, 0),
    (21, 3, 0),
];

#[test]
fn every_overload_and_chunking_gives_the_same_result() {
    for ty in [Ty::F32, Ty::F16] {
        let x = sweep(ty, -3.0, 3.0, 1990, &[0.0, 1.0, -1.0]);
        let tile = if ty == Ty::F32 { 1000 } else { 1008 };
        for &(api, nodes, masks) in LAYOUTS {
            let nodes = nodes + u32::from(ty == Ty::F16);
            let min = min_tmp(ty, nodes, masks);
            let base = run_unary(ty, api, &x, tile, 64 * 1024, 0);
            // The smallest buffer: one granule per pass, many passes.
            assert_eq!(
                run_unary(ty, api, &x, tile, min, 0),
                base,
                "api {api} {ty:?} min tmp"
            );
            // An odd size between: some passes with a partial granule count.
            assert_eq!(
                run_unary(ty, api, &x, tile, 3 * min + 96, 0),
                base,
                "api {api} {ty:?} 3 min tmp"
            );
            for form in 1..=4 {
                assert_eq!(
                    run_unary(ty, api, &x, tile, min, form),
                    base,
                    "api {api} {ty:?} form {form}"
                );
            }
            // Framework space: exactly one granule's worth left free.
            assert_eq!(
                run_unary(ty, api, &x, tile, min, 5),
                base,
                "api {api} {ty:?} framework min"
            );
        }
    }
}

/// The fault of a launch that must fail.
fn fault(ty: Ty, words: [u32; 5], x: &[f64]) -> String {
    match launch(ty, words, x) {
        Err(LaunchFailure::Fault { message, loc, .. }) => {
            let loc = loc.expect("the fault names a location");
            assert!(loc.file.ends_with("lib_api.cpp"), "{}", loc.file);
            message
        }
        Err(other) => panic!("expected a fault, got {other}"),
        Ok(_) => panic!("expected a fault, the launch succeeded"),
    }
}

#[test]
fn a_too_small_temporary_space_is_a_fault_naming_the_call() {
    let x = vec![0.5; 1000];
    // Sin f32 needs 4 float arrays of 64 elements: 1024 bytes.
    let msg = fault(Ty::F32, [2, 1000, 1000, 1024 - 32, 0], &x);
    assert!(
        msg.contains("Sin: sharedTmpBuffer holds 992 bytes, it needs at least 1024"),
        "{msg}"
    );
    let msg = fault(Ty::F32, [2, 1000, 1000, 1024 - 32, 5], &x);
    assert!(
        msg.contains("only 992 bytes of UB are left free") && msg.contains("at least 1024"),
        "{msg}"
    );
    // The same for half: 5 arrays (the source's float copy) of 128 elements.
    let xh = vec![0.5; 1008];
    let msg = fault(Ty::F16, [2, 1008, 1008, 5 * 512 - 32, 0], &xh);
    assert!(msg.contains("needs at least 2560"), "{msg}");
}

#[test]
fn each_function_is_a_sequence_of_vector_instructions() {
    // One pass over 4096 floats: the instruction counts of math.h's doc
    // comments, each instruction over all 4096 elements.
    let x: Vec<f64> = (0..4096)
        .map(|i| Ty::F32.round(-3.0 + i as f64 * 0.0015))
        .collect();
    for (api, count) in [
        (0u32, 4usize),
        (1, 7),
        (2, 27),
        (3, 29),
        (4, 41),
        (5, 27),
        (6, 32),
        (7, 29),
        (8, 22),
        (9, 7),
        (10, 46),
        (11, 31),
        (12, 4),
        (13, 1),
        (14, 1),
        (15, 1),
        (16, 1),
        (17, 2),
        (18, 1),
        (19, 2),
        (20, 2),
        (21, 30),
    ] {
        let out = launch(Ty::F32, [api, 4096, 4096, 96 * 1024, 0], &x).unwrap();
        let vec_ops: Vec<(VecOp, u64)> = out.trace.blocks[0]
            .instrs
            .iter()
            .filter_map(|i| match i.kind {
                InstrKind::Vector { op, elems, .. } => Some((op, elems)),
                _ => None,
            })
            .collect();
        assert_eq!(vec_ops.len(), count, "api {api}: {vec_ops:?}");
        // Compares run over whole 256-byte repeats, the rest over the data.
        assert!(
            vec_ops.iter().all(|&(_, e)| e == 4096),
            "api {api}: {vec_ops:?}"
        );
        // The instructions are attributed to the API's call in the kernel.
        for i in &out.trace.blocks[0].instrs {
            if matches!(i.kind, InstrKind::Vector { .. }) {
                let loc = out.trace.loc_of(i).unwrap();
                assert!(loc.file.ends_with("lib_api.cpp"), "{}", loc.file);
            }
        }
    }
}
