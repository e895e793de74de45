//! End-to-end tests of the `ascendopt` binary: real g++ builds, real worker
//! processes, the built-in operators and deliberately broken copies of them.

use crate::common::{ascendopt, repo, text};

/// A copy of ops/add_custom in a temp dir with `edit` applied to the kernel.
fn broken_add(edit: impl Fn(&str) -> String) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let src = repo().join("ops/add_custom");
    for sub in ["op_host", "op_kernel"] {
        std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        for e in std::fs::read_dir(src.join(sub)).unwrap() {
            let e = e.unwrap();
            std::fs::copy(e.path(), dir.path().join(sub).join(e.file_name())).unwrap();
        }
    }
    std::fs::copy(src.join("op.toml"), dir.path().join("op.toml")).unwrap();
    let k = dir.path().join("op_kernel/add_custom.cpp");
    let code = std::fs::read_to_string(&k).unwrap();
    let edited = edit(&code);
    assert_ne!(edited, code, "the edit did not apply");
    std::fs::write(&k, edited).unwrap();
    dir
}

fn eval_broken(dir: &tempfile::TempDir, extra: &[&str]) -> (i32, String) {
    let path = dir.path().to_str().unwrap().to_string();
    let mut args = vec!["eval", path.as_str(), "--case", "f32_7"];
    args.extend_from_slice(extra);
    let out = ascendopt(&args);
    (out.status.code().unwrap_or(-1), text(&out))
}

#[test]
fn eval_builtin_case_passes_and_prints_the_verdict() {
    let out = ascendopt(&["eval", "add_custom", "--case", "f32_7"]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    assert!(
        t.contains("f32_7") && t.contains("PASS") && t.contains("0/7 bad"),
        "{t}"
    );
}

#[test]
fn eval_json_is_one_document() {
    let out = ascendopt(&["eval", "muls", "--case", "0", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["version"], 1);
    assert_eq!(v["command"], "eval");
    let ops = v["operators"].as_array().unwrap();
    assert_eq!(ops.len(), 1, "a list even for one operator");
    let op = &ops[0];
    assert_eq!(op["op"], "muls");
    assert_eq!(op["passed"], true);
    assert_eq!(op["cases"][0]["verdict"], "pass");
    assert!(op["cases"][0]["outputs"][0]["total"].as_u64().unwrap() > 0);
    // Inputs as data: name, dtype, integer shape.
    let input = &op["cases"][0]["inputs"][0];
    assert!(input["name"].is_string() && input["dtype"].is_string());
    assert!(input["shape"]
        .as_array()
        .unwrap()
        .iter()
        .all(|d| d.is_u64()));
}

#[test]
fn ub_overflow_is_reported_with_the_line() {
    let dir = broken_add(|c| {
        c.replacen(
            "pipe->InitBuffer(inQueueX, tiling.bufferNum, tileLength * sizeof(T));",
            "pipe->InitBuffer(inQueueX, tiling.bufferNum, 150000);",
            1,
        )
    });
    let (code, t) = eval_broken(&dir, &[]);
    assert_eq!(code, 1, "{t}");
    assert!(
        t.contains("UB overflow") && t.contains("add_custom.cpp:"),
        "{t}"
    );
}

#[test]
fn gm_out_of_bounds_is_reported() {
    let dir = broken_add(|c| {
        c.replacen(
            "DataCopyPad(xLocal, xGm[offset]",
            "DataCopyPad(xLocal, xGm[offset + 4096]",
            1,
        )
    });
    let (code, t) = eval_broken(&dir, &[]);
    assert_eq!(code, 1, "{t}");
    assert!(
        t.contains("GM") && t.contains("DataCopyPad at") && t.contains("add_custom.cpp:"),
        "{t}"
    );
}

#[test]
fn unaligned_ub_operand_is_reported() {
    let dir = broken_add(|c| {
        c.replacen(
            "Add(zLocal, xLocal, yLocal, length);",
            "Add(zLocal[1], xLocal, yLocal, length);",
            1,
        )
    });
    let (code, t) = eval_broken(&dir, &[]);
    assert_eq!(code, 1, "{t}");
    assert!(t.contains("aligned") && t.contains("Add at"), "{t}");
}

#[test]
fn unsupported_api_fails_to_compile_with_its_name() {
    let dir = broken_add(|c| {
        c.replacen(
            "Add(zLocal, xLocal, yLocal, length);",
            "TopK(zLocal, xLocal, length);",
            1,
        )
    });
    let (code, t) = eval_broken(&dir, &[]);
    assert_eq!(code, 1, "{t}");
    assert!(
        t.contains("COMPILE ERROR") && t.contains("not supported by the ascendopt simulator: TopK"),
        "{t}"
    );
}

#[test]
fn endless_loop_times_out() {
    let dir = broken_add(|c| {
        c.replacen(
            "if (blockLength == 0) {",
            "for (volatile int spin = 0; spin >= 0; spin = 1) {}\n        if (blockLength == 0) {",
            1,
        )
    });
    let (code, t) = eval_broken(&dir, &["--timeout", "3"]);
    assert_eq!(code, 1, "{t}");
    assert!(t.contains("timed out"), "{t}");
}

#[test]
fn segfault_is_a_crash_not_a_crash_of_ascendopt() {
    let dir = broken_add(|c| {
        c.replacen(
            "if (blockLength == 0) {",
            "*(volatile int*)8 = 1;\n        if (blockLength == 0) {",
            1,
        )
    });
    let (code, t) = eval_broken(&dir, &[]);
    assert_eq!(code, 1, "{t}");
    assert!(t.contains("crashed (SIGSEGV)"), "{t}");
}

#[test]
fn op_toml_with_a_missing_field_is_bad_input() {
    let dir = broken_add(|c| c.to_string() + "\n");
    let toml = dir.path().join("op.toml");
    let s = std::fs::read_to_string(&toml)
        .unwrap()
        .replacen("level = 1\n", "", 1);
    std::fs::write(&toml, s).unwrap();
    let (code, t) = eval_broken(&dir, &[]);
    assert_eq!(code, 2, "{t}");
    assert!(t.contains("op.toml") && t.contains("level"), "{t}");
}

#[test]
fn case_with_mismatched_shapes_is_rejected() {
    let dir = broken_add(|c| c.to_string() + "\n");
    let toml = dir.path().join("op.toml");
    let s = std::fs::read_to_string(&toml).unwrap().replacen(
        "shapes = [[48, 8192], [48, 8192]]",
        "shapes = [[48, 8192], [48, 8191]]",
        1,
    );
    std::fs::write(&toml, s).unwrap();
    let out = ascendopt(&[
        "eval",
        dir.path().to_str().unwrap(),
        "--case",
        "f16_48x8192",
    ]);
    let t = text(&out);
    assert_ne!(out.status.code(), Some(0), "{t}");
    assert!(t.contains("shape"), "{t}");
}

#[test]
fn unknown_operator_is_bad_usage() {
    let out = ascendopt(&["eval", "no_such_op"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("no_such_op"));
}

#[test]
fn profile_and_trace_are_written() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.json");
    let out = ascendopt(&[
        "eval",
        "add_custom",
        "--case",
        "f32_8x2048",
        "--profile",
        "--deterministic",
        "--trace",
        trace.to_str().unwrap(),
    ]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    for field in [
        "Task Duration(us)",
        "Block Dim",
        "aiv_mte2_ratio",
        "roofline floor(us)",
    ] {
        assert!(t.contains(field), "missing {field}: {t}");
    }
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    let events = v["traceEvents"]
        .as_array()
        .or_else(|| v.as_array())
        .expect("trace events");
    assert!(events.iter().any(|e| e["ph"] == "X"), "no duration events");
}

#[test]
fn race_from_a_deleted_enque_deque_pair_fails_the_case() {
    // Compute no longer waits for the input copies: both EnQue/DeQue pairs
    // of the inputs are gone, so the vector Add reads what MTE2 is still
    // writing. The CPU result is right; the race checker must fail it.
    let dir = broken_add(|c| {
        c.replacen("        inQueueX.EnQue(xLocal);\n        inQueueY.EnQue(yLocal);\n", "        xStash = xLocal;\n        yStash = yLocal;\n", 1)
            .replacen("        LocalTensor<T> xLocal = inQueueX.DeQue<T>();\n        LocalTensor<T> yLocal = inQueueY.DeQue<T>();\n", "        LocalTensor<T> xLocal = xStash;\n        LocalTensor<T> yLocal = yStash;\n", 1)
            .replacen("    GlobalTensor<T> xGm;\n", "    GlobalTensor<T> xGm;\n    LocalTensor<T> xStash;\n    LocalTensor<T> yStash;\n", 1)
    });
    let (code, t) = eval_broken(&dir, &[]);
    assert_eq!(code, 1, "{t}");
    assert!(t.contains("hazard") && t.contains("race"), "{t}");
}

#[test]
fn a_second_process_on_one_out_folder_exits_2_naming_the_holder() {
    // This test process holds the folder, as a running optimize would.
    let out = tempfile::tempdir().unwrap();
    let _held = ascendopt_harness::out_lock::lock(out.path()).unwrap();
    let o = ascendopt(&[
        "optimize",
        repo().join("ops/add_custom").to_str().unwrap(),
        "--no-retrieval",
        "--out",
        out.path().to_str().unwrap(),
    ]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(
        t.contains("in use by another ascendopt process")
            && t.contains(&format!("pid {}", std::process::id())),
        "{t}"
    );
    // It touched nothing of the holder's run.
    assert!(!out.path().join("runs.sqlite").exists());
}

#[test]
fn fidelity_fast_prints_every_point_and_passes() {
    let out = ascendopt(&["fidelity", "--fast"]);
    let t = text(&out);
    eprintln!("{t}");
    assert_eq!(out.status.code(), Some(0), "{t}");
    for needle in [
        "GM->UB copy of 16 KB, one core",
        "48 cores streaming 400 MB",
        "launch head, 48 blocks",
        "Add f16, 2048 elements",
        "double buffering",
        "relu f16, 256 elements",
        " 0 FAIL",
    ] {
        assert!(t.contains(needle), "missing {needle}:\n{t}");
    }
    // Known misses say why.
    assert!(t.contains("why: "), "{t}");
}
