//! Every reporting command's `--json` output through the binary, validated
//! against docs/schema/ascendopt-output.schema.json (the one shape: a
//! top-level object with "version", "command" and "operators", a list even
//! for one operator; inputs as data). Small copies of add_custom keep it
//! quick; `run --json` is validated in run_report.rs, which runs anyway.
//! The schema itself is checked to reject what it must: the old
//! single-operator shape, inputs as a string, an item without "op".

use crate::common::{repo, small_add};
use ascendopt_bank::entry::{family_of, Applicability, Entry, Origin, Provenance, SourceOp};
use ascendopt_bank::store::Bank;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

fn ascendopt(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ascendopt"))
        .args(args)
        .env(
            "ASCENDOPT_CACHE_DIR",
            repo().join("target/ascendopt-test-cache"),
        )
        .env("CI", "true")
        .output()
        .expect("run ascendopt")
}

fn schema() -> jsonschema::Validator {
    let path = repo().join("docs/schema/ascendopt-output.schema.json");
    let text = std::fs::read_to_string(&path).expect("the schema file");
    let schema: Value = serde_json::from_str(&text).expect("the schema is JSON");
    jsonschema::validator_for(&schema).expect("the schema compiles")
}

fn errors(v: &jsonschema::Validator, doc: &Value) -> Vec<String> {
    v.iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

/// Runs `args` (which hold `--json`), expects exit code 0 or 1 (the
/// command ran), parses stdout as one JSON document, validates it and
/// returns it (with at least one operator).
fn valid(v: &jsonschema::Validator, command: &str, args: &[&str]) -> Value {
    let doc = valid_any(v, command, args);
    assert!(
        !doc["operators"].as_array().unwrap().is_empty(),
        "{args:?}: no operator"
    );
    doc
}

/// [`valid`], where no operator is a possible answer.
fn valid_any(v: &jsonschema::Validator, command: &str, args: &[&str]) -> Value {
    let o = ascendopt(args);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "{args:?}: exit {:?}\n{stderr}",
        o.status.code()
    );
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "{args:?}: stdout is not one JSON document ({e}):\n{}\n{stderr}",
            String::from_utf8_lossy(&o.stdout)
        )
    });
    let errs = errors(v, &doc);
    assert!(errs.is_empty(), "{args:?}: {errs:#?}\n{doc:#}");
    assert_eq!(doc["command"], command);
    assert_eq!(doc["version"], 1);
    doc
}

/// A bank with two entries learnt from two operators.
fn small_bank(path: &Path) {
    let bank = Bank::open(path).unwrap();
    for (op, title, bottleneck) in [
        (
            "add_custom",
            "Two buffers per queue",
            "copies wait for compute: one buffer",
        ),
        ("gelu", "Overlap copies", "copies do not overlap compute"),
    ] {
        bank.insert(&Entry {
            title: title.into(),
            bottleneck: bottleneck.into(),
            applicability: Applicability {
                reuse_when: vec!["a tile loop".into()],
                avoid_when: vec![],
            },
            expected_effect: "faster".into(),
            diff: "--- a/k\n+++ b/k\n@@ -1 +1 @@\n-BUFFER_NUM = 1\n+BUFFER_NUM = 2\n".into(),
            motif: "double_buffer".into(),
            family: family_of("double_buffer").unwrap().into(),
            source: SourceOp {
                op: op.into(),
                level: Some(1),
            },
            slow_us: Some(2.0),
            fast_us: Some(1.0),
            profile_moved: BTreeMap::new(),
            signature: None,
            keywords: vec!["double buffering".into()],
            provenance: Provenance {
                created_ms: 0,
                origin: Origin::Manual,
                evidence: vec![],
            },
        })
        .unwrap();
    }
}

#[test]
fn the_schema_rejects_other_shapes() {
    let v = schema();
    let good = serde_json::json!({
        "version": 1, "tool": "ascendopt 0.1.0", "command": "bench-rule",
        "config": {},
        "operators": [{"op": "x", "case": "c", "latency_us": 1.0, "cv": 0.01,
                       "false_accept": 0.02, "power": 0.98, "speedup": 1.03,
                       "trials": 10, "repeats": 30}],
    });
    assert!(errors(&v, &good).is_empty(), "{:?}", errors(&v, &good));
    // The old single-operator eval shape.
    let old = serde_json::json!({"op": "muls", "passed": true, "build": {"ok": true}, "cases": []});
    assert!(!errors(&v, &old).is_empty());
    // An operator item without "op".
    let mut no_op = good.clone();
    no_op["operators"][0].as_object_mut().unwrap().remove("op");
    assert!(!errors(&v, &no_op).is_empty());
    // Inputs as a preformatted string.
    let eval = serde_json::json!({
        "version": 1, "tool": "ascendopt 0.1.0", "command": "eval",
        "config": {}, "summary": {"operators": 1, "passed": 1},
        "operators": [{"op": "muls", "passed": true, "build": {"ok": true}, "cases": [{
            "name": "c", "inputs": "x: float16[4]", "attrs": {}, "verdict": "pass",
            "run_ms": 1, "outputs": []}]}],
    });
    assert!(!errors(&v, &eval).is_empty());
    let mut fixed = eval.clone();
    fixed["operators"][0]["cases"][0]["inputs"] =
        serde_json::json!([{"name": "x", "dtype": "float16", "shape": [4]}]);
    assert!(errors(&v, &fixed).is_empty(), "{:?}", errors(&v, &fixed));
    // An unknown command.
    let mut unknown = good;
    unknown["command"] = "frobnicate".into();
    assert!(!errors(&v, &unknown).is_empty());
}

#[test]
fn every_reporting_command_writes_the_one_shape() {
    let v = schema();
    let tmp = tempfile::tempdir().unwrap();
    let op = small_add(tmp.path(), 16);
    let op = op.to_str().unwrap();

    // eval: one operator is a list of one; inputs are data.
    let doc = valid(&v, "eval", &["eval", op, "--case", "f16_tail", "--json"]);
    let input = &doc["operators"][0]["cases"][0]["inputs"][0];
    assert_eq!(input["shape"], serde_json::json!([3, 1001]));
    let doc = valid(
        &v,
        "eval",
        &["eval", op, "muls", "--case", "0", "--profile", "--json"],
    );
    assert_eq!(doc["operators"].as_array().unwrap().len(), 2);
    assert!(doc["operators"][0]["cases"][0]["profile"]["Task Duration(us)"].is_number());

    valid(&v, "suite", &["suite", op, "--json"]);
    valid(&v, "compat", &["compat", op, "--json"]);
    valid(
        &v,
        "bench-rule",
        &["bench-rule", op, "--trials", "2", "--json"],
    );
    valid(&v, "bench-speed", &["bench-speed", op, "--json"]);
    valid(
        &v,
        "bench-evals",
        &[
            "bench-evals",
            "--ops",
            op,
            "-n",
            "1",
            "--deterministic",
            "--json",
        ],
    );
    let work = tmp.path().join("tiling");
    valid(
        &v,
        "bench-tiling",
        &[
            "bench-tiling",
            "--ops",
            op,
            "--budget",
            "2",
            "--repeats",
            "3",
            "--workdir",
            work.to_str().unwrap(),
            "--json",
        ],
    );

    // doctor: no operator, one item per check.
    let doc = valid_any(&v, "doctor", &["doctor", "--json"]);
    assert!(doc["lines"].as_array().unwrap().len() >= 4);
    assert_eq!(doc["sim_usable"], true);

    // fidelity: no operator, one item per published point.
    let doc = valid_any(&v, "fidelity", &["fidelity", "--fast", "--json"]);
    let points = doc["points"].as_array().unwrap();
    assert_eq!(doc["summary"]["points"], points.len());
    assert!(points.iter().all(|p| p["source"].as_str().is_some()));

    // Rewind into a bank, then the bank's views of it.
    let bank = tmp.path().join("bank.sqlite");
    let bank = bank.to_str().unwrap();
    let doc = valid(
        &v,
        "rewind",
        &[
            "rewind",
            "--ops",
            op,
            "--bank",
            bank,
            "--budget",
            "3",
            "--deterministic",
            "--repeats",
            "3",
            "--json",
        ],
    );
    let kept = doc["operators"][0]["kept"].as_array().unwrap().len();
    let doc = valid_any(&v, "bank show", &["bank", "show", "--bank", bank, "--json"]);
    assert!(doc["bank"]["side_folder"]
        .as_str()
        .is_some_and(|s| s.ends_with("bank.sqlite.rewind")));
    assert_eq!(doc["bank"]["entries"], kept);
    // The bank views on a bank with entries of two operators.
    let bank2 = tmp.path().join("bank2.sqlite");
    small_bank(&bank2);
    let bank2 = bank2.to_str().unwrap();
    let doc = valid(
        &v,
        "bank list",
        &["bank", "list", "--bank", bank2, "--json"],
    );
    assert_eq!(doc["operators"].as_array().unwrap().len(), 2);
    valid(
        &v,
        "bank show",
        &["bank", "show", "1", "--bank", bank2, "--json"],
    );
    valid(
        &v,
        "bank show",
        &["bank", "show", "--bank", bank2, "--json"],
    );
    let doc = valid(
        &v,
        "bank search",
        &[
            "bank",
            "search",
            "copies wait for compute",
            "--bank",
            bank2,
            "--json",
        ],
    );
    assert_eq!(doc["operators"][0]["entries"][0]["rank"], 1);

    let out = tmp.path().join("opt");
    let doc = valid(
        &v,
        "optimize",
        &[
            "optimize",
            op,
            "--no-retrieval",
            "--budget",
            "3",
            "--out",
            out.to_str().unwrap(),
            "--deterministic",
            "--repeats",
            "3",
            "--json",
        ],
    );
    assert!(doc["operators"][0]["spent"].as_u64().unwrap() <= 3);

    let out = tmp.path().join("bench");
    valid(
        &v,
        "bench",
        &[
            "bench",
            "--ops",
            op,
            "--methods",
            "tiling",
            "--budget",
            "2",
            "--out",
            out.to_str().unwrap(),
            "--deterministic",
            "--repeats",
            "3",
            "--json",
        ],
    );
}
