//! Timing fidelity, end to end through the harness (real g++ builds run in
//! the sandboxed worker, timed by the simulator): the kernel's own scalar
//! code is charged, raw GM pointers cost GM round trips, and the Chrome
//! trace of add_custom is well formed.

use ascendopt_harness::pipeline::evaluate_package;
use ascendopt_harness::verdict::Verdict;
use ascendopt_op::package::OpPackage;

mod common;

use common::{cfg, device, variant};

/// The benchmark-shaped case (48 x 8192 halves) beside the two small ones.
fn with_bench_case(toml: &str) -> String {
    format!(
        "{toml}\n[[cases]]\nname = \"f16_48x8192\"\nshapes = [[48, 8192], [48, 8192]]\ndtype = \"float16\"\n"
    )
}

/// Evaluates a copy of add_custom whose kernel is `kernel` (whole file).
fn evaluate(kernel: &str) -> (Verdict, OpPackage, tempfile::TempDir) {
    let kernel = kernel.to_string();
    let (dir, pkg) = variant(common::same, move |_| kernel.clone());
    let toml = pkg.dir.join("op.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    std::fs::write(&toml, with_bench_case(&text)).unwrap();
    let pkg = OpPackage::load(&pkg.dir).unwrap();
    let verdict = evaluate_package(&device(60_000), &pkg, 5, &cfg())
        .unwrap()
        .0;
    (verdict, pkg, dir)
}

fn profile_of(v: &Verdict) -> &serde_json::Value {
    match v {
        Verdict::Correct { profile, .. } => profile,
        other => panic!("expected a correct verdict, got {other:?}"),
    }
}

fn duration(v: &Verdict) -> f64 {
    profile_of(v)["Task Duration(us)"].as_f64().unwrap()
}

/// add_custom written as plain C++ over the GM pointers: no AscendC call
/// but the tiling read; every core takes its share.
const PLAIN_ADD: &str = r#"
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

#[test]
fn plain_cpp_add_over_gm_pointers_is_slower_than_the_vector_kernel_and_scalar_bound() {
    let real =
        std::fs::read_to_string(common::repo().join("ops/add_custom/op_kernel/add_custom.cpp"))
            .unwrap();
    let (honest, _p1, _d1) = evaluate(&real);
    let (plain, _p2, _d2) = evaluate(PLAIN_ADD);
    let (h, p) = (duration(&honest), duration(&plain));
    eprintln!("honest {h:.1} us, plain {p:.1} us");
    eprintln!("{}", profile_of(&plain)["kernel_code"]);
    assert!(p >= h, "plain C++ {p} us vs vector kernel {h} us");
}
