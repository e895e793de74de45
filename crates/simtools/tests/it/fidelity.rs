//! Timing fidelity, end to end through the harness (real g++ builds run in
//! the sandboxed worker, timed by the simulator): the kernel's own scalar
//! code is charged, raw GM pointers cost GM round trips, and the Chrome
//! trace of add_custom is well formed.

use ascendopt_harness::eval::{check_op, CaseSelector, CheckConfig};
use ascendopt_harness::pipeline::evaluate_package;
use ascendopt_harness::verdict::Verdict;
use ascendopt_op::package::OpPackage;
use ascendopt_simtools::fidelity::PLAIN_ADD;

use crate::common;

use common::{cfg, device, variant};

/// The benchmark-shaped case (48 x 8192 elements of `dtype`) beside the
/// two small ones.
fn with_bench_case(toml: &str, dtype: &str) -> String {
    format!(
        "{toml}\n[[cases]]\nname = \"bench_48x8192\"\nshapes = [[48, 8192], [48, 8192]]\ndtype = \"{dtype}\"\n"
    )
}

/// Evaluates a copy of add_custom whose kernel is `kernel` (whole file),
/// profiled on 48 x 8192 halves.
fn evaluate(kernel: &str) -> (Verdict, OpPackage, tempfile::TempDir) {
    evaluate_as(kernel, "float16")
}

/// Evaluates a copy of add_custom whose kernel is `kernel` (whole file),
/// profiled on 48 x 8192 elements of `dtype`.
fn evaluate_as(kernel: &str, dtype: &str) -> (Verdict, OpPackage, tempfile::TempDir) {
    let kernel = kernel.to_string();
    let (dir, pkg) = variant(common::same, move |_| kernel.clone());
    let toml = pkg.dir.join("op.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    std::fs::write(&toml, with_bench_case(&text, dtype)).unwrap();
    let pkg = OpPackage::load(&pkg.dir, &ascendopt_golden::BUILTINS).unwrap();
    let verdict = evaluate_package(&device(60_000), &pkg, 5, &cfg())
        .unwrap()
        .0;
    (verdict, pkg, dir)
}

fn profile_of(v: &Verdict) -> &ascendopt_device::Profile {
    match v {
        Verdict::Correct { profile, .. } => profile,
        other => panic!("expected a correct verdict, got {other:?}"),
    }
}

fn duration(v: &Verdict) -> f64 {
    profile_of(v).task_duration_us
}

/// PLAIN_ADD with a bounds check on the element's row (of `cols`
/// columns, `rows` rows; it never fails): per element, a division and a
/// compare (`heavy`), or once before the loop on its last element
/// (hoisted: what "scalar index simplification" does). g++ keeps the
/// per-element division: the divisor is only known at run time.
fn bounds_checked_add(heavy: bool) -> String {
    let body = if heavy {
        "for (uint32_t i = start; i < end; i++) {\n\
             if (i / cols >= rows) break;\n\
             zs[i] = (T)(xs[i] + ys[i]);\n\
         }"
    } else {
        "if (end > start && (end - 1) / cols >= rows) return;\n\
         for (uint32_t i = start; i < end; i++) {\n\
             zs[i] = (T)(xs[i] + ys[i]);\n\
         }"
    };
    PLAIN_ADD
        .replace(
            "    for (uint32_t i = start; i < end; i++) {\n        zs[i] = (T)(xs[i] + ys[i]);\n    }",
            body,
        )
        .replace(
            "uint32_t total) {",
            "uint32_t total) {\n    uint32_t cols = total / 7 + 3;\n    uint32_t rows = total / cols + 1;",
        )
}

#[test]
fn plain_cpp_add_over_gm_pointers_is_slower_than_the_vector_kernel_and_scalar_bound() {
    let real =
        std::fs::read_to_string(common::repo().join("ops/add_custom/op_kernel/add_custom.cpp"))
            .unwrap();
    let (honest, _p1, _d1) = evaluate(&real);
    let (plain, _p2, _d2) = evaluate(PLAIN_ADD);
    let (h, p) = (duration(&honest), duration(&plain));
    eprintln!("vector kernel {h:.1} us, plain C++ {p:.1} us");
    assert!(p >= h, "plain C++ {p} us vs vector kernel {h} us");
    // Scalar-bound: on every block the scalar unit is the busiest pipe and
    // busy nearly all the time.
    let profile = profile_of(&plain);
    for block in &profile.blocks {
        let aiv = block.aiv.as_ref().unwrap();
        let scalar = aiv.scalar_ratio;
        assert!(scalar > 0.95, "{block:?}");
        for other in [aiv.vec_ratio, aiv.mte2_ratio, aiv.mte3_ratio] {
            assert!(other < scalar, "{block:?}");
        }
    }
    // Three GM accesses per element, and a data-cache miss per 64 B line
    // of each tensor.
    let code = profile.kernel_code.unwrap();
    let elements = 48 * 8192;
    assert_eq!(code.gm_accesses, 3 * elements);
    assert_eq!(code.dcache_misses, 3 * elements * 2 / 64);
}

#[test]
fn hoisting_a_per_element_index_computation_saves_about_its_instructions() {
    let heavy_src = bounds_checked_add(true);
    let hoisted_src = bounds_checked_add(false);
    assert!(heavy_src.contains("i / cols >= rows") && hoisted_src.contains("(end - 1) / cols"));
    // float32: no `half` conversion code around the loop body.
    let (heavy, _p1, _d1) = evaluate_as(&heavy_src, "float32");
    let (hoisted, _p2, _d2) = evaluate_as(&hoisted_src, "float32");
    let (h, o) = (profile_of(&heavy), profile_of(&hoisted));
    let instrs = |p: &ascendopt_device::Profile| p.kernel_code.unwrap().instructions as f64;
    let blocks = f64::from(h.block_dim);
    let elements = 48.0 * 8192.0;
    // Per element the loop loses a division with its set-up and a compare
    // and branch (g++ -O1: five to seven x86 instructions, those with a
    // memory operand counted as a load plus the operation).
    let removed = instrs(h) - instrs(o);
    assert!(
        (4.0 * elements..10.0 * elements).contains(&removed),
        "removed {removed} instructions for {elements} elements"
    );
    // The saving is those instructions' scalar time on each core (blocks
    // run side by side): between 2 cycles (all ALU) and 6 (all loads) each
    // at 1.8 GHz.
    let saved = duration(&heavy) - duration(&hoisted);
    let per_core = removed / blocks / 1.8e3;
    eprintln!(
        "removed {removed} instructions: saved {saved:.2} us ({:.2}..{:.2} us)",
        2.0 * per_core,
        6.0 * per_core
    );
    assert!(
        (2.0 * per_core..=6.0 * per_core).contains(&saved),
        "saved {saved:.2} us, the instructions removed cost {:.2}..{:.2} us a core",
        2.0 * per_core,
        6.0 * per_core
    );
    // The data-cache misses are the same: only instructions were removed.
    let misses = |p: &ascendopt_device::Profile| p.kernel_code.unwrap().dcache_misses;
    assert_eq!(misses(h), misses(o));
}

#[test]
fn the_chrome_trace_of_add_custom_nests_on_every_thread_and_shows_the_scalar_work() {
    let pkg = OpPackage::load(
        &common::repo().join("ops/add_custom"),
        &ascendopt_golden::BUILTINS,
    )
    .unwrap();
    let cfg = CheckConfig {
        case: Some(CaseSelector::Name("f16_48x8192".into())),
        seed: 5,
        profile: true,
        deterministic: true,
        timeline: true,
    };
    let check = check_op(&device(60_000), &pkg, &cfg).unwrap();
    let case = &check.cases[0];
    assert!(case.verdict.passed(), "{:?}", case.verdict);
    let text = case.timeline.clone().unwrap().unwrap();
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    ascendopt_sim::timing::chrome::check_nesting(&doc).unwrap();
    let profile = case.profile.clone().unwrap().unwrap();
    let events = doc["traceEvents"].as_array().unwrap();
    let scalar_tid = ascendopt_sim::timing::chrome::pipe_tid(ascendopt_sim::trace::Pipe::S);
    for block in &profile.blocks {
        let pid = u64::from(block.block_id);
        let on_scalar: Vec<&serde_json::Value> = events
            .iter()
            .filter(|e| e["ph"] == "X" && e["pid"] == pid && e["tid"] == scalar_tid)
            .collect();
        // The kernel's own code is there, and the scalar track's work adds
        // up to the profile's scalar time.
        assert!(
            on_scalar.iter().any(|e| e["name"] == "kernel code"),
            "block {pid}"
        );
        let work: f64 = on_scalar
            .iter()
            .filter(|e| e["cat"] != "wait")
            .map(|e| e["dur"].as_f64().unwrap())
            .sum();
        let scalar = block.aiv.as_ref().unwrap().scalar_time_us;
        assert!(
            (work - scalar).abs() < 1e-3,
            "block {pid}: {work} vs {scalar}"
        );
    }
    // Every named track holds something.
    for e in events
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "thread_name")
    {
        assert!(
            events
                .iter()
                .any(|x| x["ph"] == "X" && x["pid"] == e["pid"] && x["tid"] == e["tid"]),
            "empty track {e}"
        );
    }
    assert!(events.iter().any(|e| e["flow_out"] == true));
}
