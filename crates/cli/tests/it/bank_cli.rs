//! `ascendopt bank …` end to end through the binary: a tiny tuning guide
//! written here becomes a bank (from-docs), which is listed, shown,
//! searched, exported, imported into another bank and frozen; bad input
//! exits with 2 and says what is wrong.

use std::path::Path;
use std::process::{Command, Output};

fn ascendopt(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ascendopt"))
        .args(args)
        .output()
        .expect("run ascendopt")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs `ascendopt bank <args> --bank <bank>` and expects success.
fn bank_ok(bank: &Path, args: &[&str]) -> String {
    let mut all = vec!["bank"];
    all.extend_from_slice(args);
    let bank = bank.to_str().unwrap();
    all.extend_from_slice(&["--bank", bank]);
    let o = ascendopt(&all);
    assert!(
        o.status.success(),
        "{all:?}: {:?}\n{}{}",
        o.status,
        stdout(&o),
        stderr(&o)
    );
    stdout(&o)
}

/// Runs `ascendopt bank <args> --bank <bank>` and expects exit code 2.
fn bank_bad(bank: &Path, args: &[&str]) -> String {
    let mut all = vec!["bank"];
    all.extend_from_slice(args);
    let bank = bank.to_str().unwrap();
    all.extend_from_slice(&["--bank", bank]);
    let o = ascendopt(&all);
    assert_eq!(
        o.status.code(),
        Some(2),
        "{all:?}: {}{}",
        stdout(&o),
        stderr(&o)
    );
    stderr(&o)
}

/// One page of a guide in the layout the importer reads: two practices,
/// one with a counter-example / example pair, one without code.
const PAGE: &str = r#"# 开启双缓冲

> **Section**: 2.1.1
> **PDF Pages**: 3–3

---

<!-- page 3 -->

## 2.1 内存与流水

## 2.1.1 开启双缓冲

【优先级】高

【描述】搬入、计算、搬出串行执行时，Vector单元在等待搬运期间空闲。为队列分配两块内存后，搬运被计算掩盖。

需要注意：

●数据只有一块时，双缓冲没有可以重叠的下一块。

【反例】

每个队列只分配一块内存。

```cpp
void Init() {
    pipe.InitBuffer(inQueue, 1, TILE * sizeof(half));
    pipe.InitBuffer(outQueue, 1, TILE * sizeof(half));
}
```

【正例】

每个队列分配两块内存。

```cpp
void Init() {
    pipe.InitBuffer(inQueue, 2, TILE * sizeof(half));
    pipe.InitBuffer(outQueue, 2, TILE * sizeof(half));
}
```

## 2.1.2 保持地址对齐

【优先级】中

【描述】搬运的起始地址按32字节对齐时效率最高。
"#;

fn write_guide(dir: &Path) {
    let page = dir.join("02_01_01_开启双缓冲");
    std::fs::create_dir_all(&page).unwrap();
    std::fs::write(page.join("02_01_01_开启双缓冲.md"), PAGE).unwrap();
}

#[test]
fn bank_subcommands_end_to_end() {
    let tmp = tempfile::tempdir().unwrap();
    let guide = tmp.path().join("guide");
    write_guide(&guide);
    let bank = tmp.path().join("docs.sqlite");

    // from-docs: one entry, one practice skipped (no code pair).
    let out = bank_ok(
        &bank,
        &["from-docs", guide.to_str().unwrap(), "--created-ms", "5"],
    );
    assert!(
        out.starts_with(
            "1 entries from the guide (1 new, 0 already in the bank), 1 practices skipped"
        ),
        "{out}"
    );
    assert!(out.contains("skipped 2.1.2"), "{out}");
    // Again: nothing new.
    let out = bank_ok(&bank, &["from-docs", guide.to_str().unwrap()]);
    assert!(out.contains("(0 new, 1 already in the bank)"), "{out}");

    // list
    let out = bank_ok(&bank, &["list"]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert!(lines[1].contains("double_buffer"), "{out}");
    assert!(lines[1].contains("docs"), "{out}");
    assert!(lines[1].contains("开启双缓冲"), "{out}");
    assert_eq!(lines[2], "1 entries");
    let out = bank_ok(&bank, &["list", "--motif", "tile_size"]);
    assert!(out.ends_with("0 entries\n"), "{out}");
    let out = bank_ok(
        &bank,
        &["list", "--origin", "docs", "--family", "kernel.pipeline"],
    );
    assert!(out.ends_with("1 entries\n"), "{out}");

    // show: every field, the diff last (counter-example -> example).
    let out = bank_ok(&bank, &["show", "#1"]);
    assert!(out.starts_with("#1 开启双缓冲\n"), "{out}");
    assert!(
        out.contains("motif      double_buffer (kernel.pipeline.double_buffer)"),
        "{out}"
    );
    assert!(out.contains("created_ms 5"), "{out}");
    assert!(out.contains("latency    not measured"), "{out}");
    let diff = &out[out.find("diff (slow -> fast):").unwrap()..];
    assert!(
        diff.contains("-    pipe.InitBuffer(inQueue, 1, TILE * sizeof(half));"),
        "{diff}"
    );
    assert!(
        diff.contains("+    pipe.InitBuffer(inQueue, 2, TILE * sizeof(half));"),
        "{diff}"
    );
    assert_eq!(bank_ok(&bank, &["show", "1"]), out);

    // search
    let out = bank_ok(
        &bank,
        &["search", "Vector单元在等待搬运, InitBuffer 双缓冲"],
    );
    assert!(
        out.starts_with("1. #1 [double_buffer] 开启双缓冲  score 1."),
        "{out}"
    );
    let out = bank_ok(&bank, &["search", "zebra giraffe"]);
    assert_eq!(out, "no entry matches\n");

    // export -> import into a fresh bank -> same entries; again: duplicates.
    let jsonl = tmp.path().join("bank.jsonl");
    let out = bank_ok(&bank, &["export", "--out", jsonl.to_str().unwrap()]);
    assert!(out.starts_with("exported 1 entries"), "{out}");
    let text = std::fs::read_to_string(&jsonl).unwrap();
    assert_eq!(text.lines().count(), 1);
    assert!(text.contains("\"origin\":\"docs\""), "{text}");
    let copy = tmp.path().join("copy.sqlite");
    let out = bank_ok(&copy, &["import", jsonl.to_str().unwrap()]);
    assert_eq!(out, "imported 1 entries, skipped 0 duplicates\n");
    let out = bank_ok(&copy, &["import", jsonl.to_str().unwrap()]);
    assert!(
        out.starts_with("imported 0 entries, skipped 1 duplicates"),
        "{out}"
    );
    assert!(out.contains("line 1: same content as #1"), "{out}");
    assert_eq!(
        bank_ok(&copy, &["show", "1"]),
        bank_ok(&bank, &["show", "1"])
    );

    // freeze: no more entries, reading still works.
    let out = bank_ok(&copy, &["freeze"]);
    assert!(out.contains("frozen (1 entries)"), "{out}");
    let err = bank_bad(&copy, &["import", jsonl.to_str().unwrap()]);
    assert!(err.contains("is frozen"), "{err}");
    let err = bank_bad(&copy, &["from-docs", guide.to_str().unwrap()]);
    assert!(err.contains("is frozen"), "{err}");
    assert!(bank_ok(&copy, &["list"]).ends_with("1 entries\n"));
}

/// Two Rewind-style entries by hand, to search with features and a
/// profile signature.
fn rewind_entry(motif: &str, title: &str, reuse: &str, vec_ratio: f64, mte2_ratio: f64) -> String {
    serde_json::json!({
        "title": title,
        "bottleneck": "the kernel is slow",
        "applicability": {"reuse_when": [reuse], "avoid_when": []},
        "expected_effect": "faster",
        "diff": "--- a/op_kernel/k.cpp\n+++ b/op_kernel/k.cpp\n@@ -1 +1 @@\n-a\n+b\n",
        "motif": motif,
        "family": "kernel.other",
        "source": {"op": "add_custom", "level": 1},
        "slow_us": 30.0,
        "fast_us": 20.0,
        "profile_moved": {},
        "signature": {"vec_ratio": vec_ratio, "mte2_ratio": mte2_ratio},
        "keywords": [motif],
        "provenance": {"created_ms": 0, "origin": "rewind", "evidence": []}
    })
    .to_string()
}

#[test]
fn search_uses_features_and_a_profile_signature() {
    let tmp = tempfile::tempdir().unwrap();
    let jsonl = tmp.path().join("two.jsonl");
    std::fs::write(
        &jsonl,
        format!(
            "{}\n{}\n",
            rewind_entry(
                "vectorize_scalar",
                "Vectorise the loop",
                "a scalar-loop",
                0.1,
                0.2
            ),
            rewind_entry(
                "double_buffer",
                "Double-buffer the queues",
                "a single-buffer kernel",
                0.3,
                0.9
            ),
        ),
    )
    .unwrap();
    let bank = tmp.path().join("b.sqlite");
    bank_ok(&bank, &["import", jsonl.to_str().unwrap()]);
    // Features alone: only the entry whose reuse_when names one.
    let out = bank_ok(&bank, &["search", "", "--feature", "single-buffer"]);
    assert!(out.starts_with("1. #2 [double_buffer]"), "{out}");
    assert_eq!(
        out.lines()
            .filter(|l| l.starts_with(char::is_numeric))
            .count(),
        1,
        "{out}"
    );
    // A profile close to the scalar entry's signature puts it first.
    let profile = tmp.path().join("profile.json");
    std::fs::write(
        &profile,
        serde_json::json!({
            "Soc Version": "Ascend910B2", "Op Type": "vector", "Block Dim": 48,
            "Task Duration(us)": 40.0,
            "blocks": [{"block_id": 0, "core_type": "aiv", "aiv_time(us)": 20.0,
                        "aiv_vec_ratio": 0.12, "aiv_scalar_ratio": 0.8,
                        "aiv_mte2_ratio": 0.2, "aiv_mte3_ratio": 0.1}]
        })
        .to_string(),
    )
    .unwrap();
    let out = bank_ok(
        &bank,
        &[
            "search",
            "",
            "--profile",
            profile.to_str().unwrap(),
            "-k",
            "2",
        ],
    );
    let first = out.lines().next().unwrap();
    assert!(first.starts_with("1. #1 [vectorize_scalar]"), "{out}");
    assert!(out.contains("2. #2 [double_buffer]"), "{out}");
    assert!(out.contains("signature"), "{out}");
}

#[test]
fn bad_input_exits_with_2_and_says_why() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("missing.sqlite");
    let err = bank_bad(&missing, &["list"]);
    assert!(err.contains("no bank at"), "{err}");
    assert!(!missing.exists(), "reading commands never create a bank");
    let err = bank_bad(&missing, &["export", "--out", "x.jsonl"]);
    assert!(err.contains("no bank at"), "{err}");

    let bank = tmp.path().join("b.sqlite");
    let jsonl = tmp.path().join("bad.jsonl");
    std::fs::write(&jsonl, "{\"title\": 1}\n").unwrap();
    let err = bank_bad(&bank, &["import", jsonl.to_str().unwrap()]);
    assert!(err.contains("JSONL line 1"), "{err}");
    let err = bank_bad(&bank, &["show", "7"]);
    assert!(err.contains("has no entry #7"), "{err}");
    let err = bank_bad(&bank, &["show", "seven"]);
    assert!(err.contains("not an entry id"), "{err}");
    let err = bank_bad(&bank, &["list", "--origin", "somewhere"]);
    assert!(err.contains("expected rewind, docs or manual"), "{err}");
    let err = bank_bad(
        &bank,
        &["from-docs", tmp.path().join("nope").to_str().unwrap()],
    );
    assert!(err.contains("nope"), "{err}");
    let err = bank_bad(
        &bank,
        &["search", "x", "--profile", jsonl.to_str().unwrap()],
    );
    assert!(err.contains("bad.jsonl"), "{err}");

    // No --bank at all.
    let o = ascendopt(&["bank", "list"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--bank"), "{}", stderr(&o));
}
