//! Kernels that try to be judged faster than they are, or correct when
//! they are not (the judge helper's red team, 2026-12-06): work done by
//! code nothing counts, scalar C++ in place of vector instructions, a
//! kernel that behaves differently on the benchmark case, an early exit,
//! fake crash text, a huge stack, blocks that overwrite each other. Each
//! ends as a failed evaluation naming its cause, or as a correct one timed
//! no faster than the honest kernel.

use super::common::{cfg, device, package, same, variant};
use super::{including, sub, ADD};
use ascendopt_device::{Device, RunOutcome};
use ascendopt_harness::pipeline::evaluate_package;
use ascendopt_harness::verdict::{RuntimeErrorKind, Verdict};

fn judge(pkg: &ascendopt_op::package::OpPackage) -> Verdict {
    evaluate_package(&device(20_000), pkg, 5, &cfg()).unwrap().0
}

/// The median latency of the unchanged kernel.
fn honest_latency() -> f64 {
    let (_d, pkg) = package(same);
    judge(&pkg)
        .latency()
        .expect("the honest kernel passes")
        .median_us
}

/// The first case launched without the static check (the worker alone).
fn launch_unchecked(host: impl Fn(&str) -> String, kernel: impl Fn(&str) -> String) -> RunOutcome {
    let (_d, pkg) = variant(host, kernel);
    let dev = device(20_000);
    let artifact = dev.build(&pkg).expect("the hostile kernel compiles");
    let case = &pkg.cases()[0];
    let prepared = ascendopt_harness::eval::prepare_case(&pkg, case, 3).unwrap();
    dev.run(&artifact, &prepared.request)
}

/// Correct and timed no faster than the honest kernel, or failed.
fn assert_not_faster_than_honest(v: &Verdict) {
    match v {
        Verdict::Correct { latency, .. } => {
            let honest = honest_latency();
            assert!(
                latency.median_us >= honest,
                "{} us beats the honest {honest} us: {v:?}",
                latency.median_us
            );
        }
        Verdict::Incorrect { .. } | Verdict::RuntimeError { .. } => {}
        other => panic!("expected a judged run, got {other:?}"),
    }
}

// --- Work done by code that nothing counts ---------------------------------

/// The tiling hands the kernel the address of a host function (8 bytes
/// after its tiling data) that adds x and y in plain, uninstrumented C++;
/// the kernel calls it and then only moves z through UB once (a traced
/// write of every output byte), skipping the load of y.
fn host_adds(code: &str) -> String {
    let fn_def = "static ge::graphStatus TilingFunc(gert::TilingContext* context)";
    let save = "    context->GetRawTilingData()->SetDataSize(tiling.GetDataSize());\n";
    assert!(code.contains(fn_def) && code.contains(save));
    code.replacen(
        fn_def,
        &format!(
            "extern \"C\" void HostAdd(void* x, void* y, void* z, uint32_t n)\n{{\n    \
             for (uint32_t i = 0; i < n; i++) {{ ((float*)z)[i] = ((float*)x)[i] + ((float*)y)[i]; }}\n}}\n{fn_def}"
        ),
        1,
    )
    .replacen(
        save,
        "    {\n        uint64_t fn = (uint64_t)(uintptr_t)&HostAdd;\n        \
         uint8_t* raw = (uint8_t*)context->GetRawTilingData()->GetData() + tiling.GetDataSize();\n        \
         for (int b = 0; b < 8; b++) { raw[b] = (uint8_t)(fn >> (8 * b)); }\n        \
         context->GetRawTilingData()->SetDataSize(tiling.GetDataSize() + 8);\n    }\n",
        1,
    )
}

/// The kernel side of [`host_adds`] (float only; the f16 case stays
/// honest): the host function's address is read from GM after the tiling
/// data, and the function is called before the tiles are streamed.
fn calls_the_host(code: &str) -> String {
    let get = "    GET_TILING_DATA(tilingData, tiling);\n";
    let process = "        uint32_t tileNum = (blockLength + tileLength - 1) / tileLength;";
    let load_y = "            DataCopy(yLocal, yGm[offset], length);";
    let load_x = "            DataCopy(xLocal, xGm[offset], length);";
    for needle in [get, process, load_y, load_x, ADD] {
        assert!(
            code.contains(needle),
            "kernel no longer contains {needle:?}"
        );
    }
    code.replacen("using namespace AscendC;\n", "using namespace AscendC;\nuint64_t g_hostFn = 0;\n", 1)
        .replacen(
            get,
            &format!("{get}    g_hostFn = *(__gm__ uint64_t*)(tiling + sizeof(tilingData));\n"),
            1,
        )
        .replacen(
            process,
            &format!(
                "        bool viaHost = sizeof(T) == 4 && g_hostFn != 0;\n        \
                 if (viaHost) {{ ((void (*)(void*, void*, void*, uint32_t))g_hostFn)((void*)xGm.GetPhyAddr(), \
                 (void*)yGm.GetPhyAddr(), (void*)zGm.GetPhyAddr(), blockLength); }}\n        useZ = viaHost;\n{process}"
            ),
            1,
        )
        .replacen(
            load_x,
            "            if (useZ) { DataCopy(xLocal, zGm[offset], length); } else {\n            DataCopy(xLocal, xGm[offset], length);",
            1,
        )
        .replacen(load_y, &format!("{load_y} }}"), 1)
        .replacen(ADD, "if (useZ) { Adds(zLocal, xLocal, (T)0, length); } else { Add(zLocal, xLocal, yLocal, length); }", 1)
        .replacen("    uint32_t blockLength = 0;\n", "    uint32_t blockLength = 0;\n    bool useZ = false;\n", 1)
}

#[test]
fn computes_the_outputs_in_a_host_function_it_calls_through_the_tiling() {
    let (_d, pkg) = variant(host_adds, calls_the_host);
    let v = judge(&pkg);
    match &v {
        Verdict::RuntimeError {
            kind,
            message,
            location,
        } => {
            assert_eq!(*kind, RuntimeErrorKind::Fault, "{v:?}");
            assert!(
                message.contains("through a pointer")
                    && message.contains("not counted by the timing model")
                    && message.contains("host-"),
                "{message}"
            );
            assert!(
                location
                    .as_deref()
                    .is_some_and(|l| l.starts_with("op_kernel/add_custom.cpp:")),
                "{v:?}"
            );
        }
        other => panic!("expected the stray call to fail, got {other:?}"),
    }
}

#[test]
fn copies_with_the_c_librarys_memcpy_through_a_pointer() {
    // The input tiles reach UB through a pointer to memcpy (a direct call
    // would be renamed to the counting wrapper) instead of DataCopy.
    let v = {
        let (_d, pkg) = package(including(
            "cstring",
            sub(
                "            DataCopy(xLocal, xGm[offset], length);\n            DataCopy(yLocal, yGm[offset], length);",
                "            void* (*volatile cp)(void*, const void*, size_t) = &memcpy;\n            \
                 cp((void*)&xLocal(0), (const void*)xGm[offset].GetPhyAddr(), length * sizeof(T));\n            \
                 cp((void*)&yLocal(0), (const void*)yGm[offset].GetPhyAddr(), length * sizeof(T));",
            ),
        ));
        judge(&pkg)
    };
    match &v {
        Verdict::RuntimeError { message, .. } => {
            assert!(message.contains("through a pointer"), "{message}")
        }
        other => panic!("expected the stray call to fail, got {other:?}"),
    }
}

#[test]
fn adds_in_a_scalar_loop_over_ub_instead_of_a_vector_add() {
    // The scalar unit's loads, stores and ALU work are charged (issue 23):
    // a plain C++ loop over UB (through the element references
    // `operator()` gives; GetPhyAddr is a UB address, not a pointer, in
    // the simulator as on the chip) is slower than one vector Add.
    let (_d, pkg) = package(sub(
        ADD,
        "{ T* pz = &zLocal(0); const T* px = &xLocal(0); const T* py = &yLocal(0); \
         for (uint32_t k = 0; k < length; k++) { pz[k] = px[k] + py[k]; } }",
    ));
    let v = judge(&pkg);
    assert!(matches!(v, Verdict::Correct { .. }), "{v:?}");
    assert_not_faster_than_honest(&v);
}

// --- Behaving differently where it is measured -----------------------------

#[test]
fn cheats_only_on_the_benchmark_case() {
    // The largest case (f32, 4000 elements) is the one profiled: there the
    // kernel skips the add. It is compared against its golden all the same.
    let v = {
        let (_d, pkg) = package(sub(
            ADD,
            "if (sizeof(T) == 4) { Duplicate(zLocal, (T)0, length); } else { Add(zLocal, xLocal, yLocal, length); }",
        ));
        judge(&pkg)
    };
    match &v {
        Verdict::Incorrect { details } => {
            assert_eq!(details.case, "f32_4x1000", "{v:?}");
            assert!(details.mismatches > 0, "{v:?}");
        }
        other => panic!("expected wrong outputs on the benchmark case, got {other:?}"),
    }
}

#[test]
fn prints_a_fake_crash_report_and_fake_profiler_lines() {
    // Text on stdout and stderr is only kept for messages: a kernel that
    // prints the worker's crash marker and msprof-like rows is judged on
    // its outputs and trace alone.
    let (_d, pkg) = package(including(
        "cstdio",
        sub(
            ADD,
            "if (GetBlockIdx() == 0) { fprintf(stderr, \"\\nascendopt-worker: SIGSEGV at pc 0x1 in /x.so+0x1 (address 0x0)\\n\"); \
             fputs(\"Op Name,Task Duration(us)\\nAddCustom,0.001\\n\", stdout); } Add(zLocal, xLocal, yLocal, length);",
        ),
    ));
    let v = judge(&pkg);
    match &v {
        // The static check may refuse the printing calls; the worker layer
        // is then shown below.
        Verdict::RejectedStatic { .. } | Verdict::Correct { .. } => {}
        other => panic!("expected a correct (or refused) kernel, got {other:?}"),
    }
    if let Verdict::Correct { latency, .. } = &v {
        assert!(latency.median_us >= honest_latency() * 0.99, "{v:?}");
    }
}

// --- Leaving early, the stack, other blocks --------------------------------

#[test]
fn exits_with_status_zero_before_the_work() {
    // Without the static check: the worker ends without a reply, which is
    // a failed launch, never a finished one.
    let outcome = launch_unchecked(
        same,
        including(
            "unistd.h",
            sub(ADD, "_exit(0); Add(zLocal, xLocal, yLocal, length);"),
        ),
    );
    assert!(!matches!(outcome, RunOutcome::Finished(_)), "{outcome:?}");
    assert!(!outcome.summary().is_empty());
}

#[test]
fn uses_a_huge_stack_array() {
    // 256 MiB on a block thread's stack: the guard page ends it as a crash.
    let v = {
        let (_d, pkg) = package(sub(
            ADD,
            "{ volatile uint8_t big[256 << 20]; big[0] = 1; big[(256 << 20) - 1] = big[0]; } Add(zLocal, xLocal, yLocal, length);",
        ));
        judge(&pkg)
    };
    match &v {
        Verdict::RuntimeError { kind, .. } => {
            assert!(
                matches!(
                    kind,
                    RuntimeErrorKind::Crash | RuntimeErrorKind::OutOfBounds
                ),
                "{v:?}"
            )
        }
        other => panic!("expected a crash, got {other:?}"),
    }
}

#[test]
fn blocks_overwrite_each_others_outputs() {
    // Every block but the last writes zeros over the next block's range
    // after its own work: which write lands last depends on the order the
    // blocks run in, as on the chip; the judge sees wrong outputs or the
    // runs disagree.
    let v = {
        let (_d, pkg) = package(sub(
            "            DataCopy(zGm[offset], zLocal, length);",
            "            DataCopy(zGm[offset], zLocal, length);\n            \
             if (GetBlockIdx() + 1 < GetBlockNum()) { Duplicate(zLocal, (T)0, length); \
             PipeBarrier<PIPE_ALL>(); DataCopy(zGm[offset + blockLength], zLocal, length); }",
        ));
        judge(&pkg)
    };
    match &v {
        Verdict::Incorrect { details } => assert!(details.mismatches > 0, "{v:?}"),
        Verdict::RuntimeError { .. } => {}
        other => panic!("expected a failed evaluation, got {other:?}"),
    }
}
