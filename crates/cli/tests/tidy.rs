//! Holds ARCHITECTURE.md to the code: the crate graph it lists is the one
//! the Cargo manifests declare (and it runs one way), every Rust file opens
//! with a `//!` header, and the invariants a search can check hold. Each
//! check is also shown to fail on an injected defect.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Graph = BTreeMap<String, BTreeSet<String>>;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The edges ARCHITECTURE.md lists between its tidy markers, in the order
/// listed (bottom crate first).
fn documented(text: &str) -> Result<Vec<(String, BTreeSet<String>)>, String> {
    let begin = text
        .find("<!-- tidy:edges-begin -->")
        .ok_or("ARCHITECTURE.md: no `<!-- tidy:edges-begin -->` marker")?;
    let end = text
        .find("<!-- tidy:edges-end -->")
        .ok_or("ARCHITECTURE.md: no `<!-- tidy:edges-end -->` marker")?;
    let mut out = Vec::new();
    for line in text[begin..end].lines().skip(1) {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let body = line
            .strip_prefix("- ")
            .ok_or_else(|| format!("ARCHITECTURE.md: edge line `{line}` is not `- a → b, c`"))?;
        let (from, to) = body
            .split_once('→')
            .ok_or_else(|| format!("ARCHITECTURE.md: edge line `{line}` has no `→`"))?;
        let to = to.trim();
        let targets: BTreeSet<String> = if to == "(none)" {
            BTreeSet::new()
        } else {
            to.split(',').map(|t| t.trim().to_string()).collect()
        };
        out.push((from.trim().to_string(), targets));
    }
    Ok(out)
}

/// The `ascendopt-*` entries of every crate's `[dependencies]`, by crate
/// folder name.
fn declared(root: &Path) -> Graph {
    let mut graph = Graph::new();
    for entry in std::fs::read_dir(root.join("crates")).unwrap() {
        let dir = entry.unwrap().path();
        let manifest = dir.join("Cargo.toml");
        if !manifest.is_file() {
            continue;
        }
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        let doc: toml_edit::DocumentMut =
            std::fs::read_to_string(&manifest).unwrap().parse().unwrap();
        let deps: BTreeSet<String> = doc
            .get("dependencies")
            .and_then(|d| d.as_table_like())
            .map(|t| {
                t.iter()
                    .filter_map(|(k, _)| k.strip_prefix("ascendopt-").map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        graph.insert(name, deps);
    }
    graph
}

/// What is wrong between the documented graph and the declared one: an
/// edge on one side only, a crate on one side only, an edge that does not
/// point to a crate listed before its source (the graph runs one way).
fn graph_problems(documented: &[(String, BTreeSet<String>)], declared: &Graph) -> Vec<String> {
    let mut problems = Vec::new();
    let listed: Graph = documented.iter().cloned().collect();
    for (krate, deps) in declared {
        match listed.get(krate) {
            None => problems.push(format!("crate `{krate}` is not in ARCHITECTURE.md's graph")),
            Some(doc) => {
                for d in deps.difference(doc) {
                    problems.push(format!(
                        "edge {krate} → {d} is in crates/{krate}/Cargo.toml but not in ARCHITECTURE.md"
                    ));
                }
                for d in doc.difference(deps) {
                    problems.push(format!(
                        "edge {krate} → {d} is in ARCHITECTURE.md but not in crates/{krate}/Cargo.toml"
                    ));
                }
            }
        }
    }
    for krate in listed.keys() {
        if !declared.contains_key(krate) {
            problems.push(format!(
                "ARCHITECTURE.md lists `{krate}`, which is no crate"
            ));
        }
    }
    let mut below = BTreeSet::new();
    for (krate, _) in documented {
        for d in declared.get(krate).into_iter().flatten() {
            if !below.contains(d) {
                problems.push(format!(
                    "edge {krate} → {d} runs upwards (or sideways): `{d}` is not listed below `{krate}`"
                ));
            }
        }
        below.insert(krate.clone());
    }
    problems
}

/// Rust files under `dirs` whose first line is not a `//!` header.
fn files_without_header(dirs: &[PathBuf]) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n == "fixtures") {
                    continue;
                }
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
                if !first.starts_with("//!") {
                    out.push(path);
                }
            }
        }
    }
    let mut out = Vec::new();
    for d in dirs {
        walk(d, &mut out);
    }
    out.sort();
    out
}

/// Every crate's `src/` and `tests/` folder.
fn rust_dirs(root: &Path) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for entry in std::fs::read_dir(root.join("crates")).unwrap() {
        let dir = entry.unwrap().path();
        for sub in ["src", "tests", "benches"] {
            if dir.join(sub).is_dir() {
                dirs.push(dir.join(sub));
            }
        }
    }
    dirs
}

/// Files under `dir` (recursively, `.rs`, test files excluded) whose text
/// contains any of `needles`, relative to `root`.
fn files_naming(root: &Path, dir: &str, needles: &[&str]) -> BTreeSet<String> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(&root.join(dir), &mut files);
    files
        .into_iter()
        .filter(|p| {
            p.file_name().is_some_and(|n| n != "tests.rs")
                && !p.components().any(|c| c.as_os_str() == "tests")
        })
        .filter(|p| {
            let text = std::fs::read_to_string(p).unwrap_or_default();
            needles.iter().any(|n| text.contains(n))
        })
        .map(|p| {
            p.strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/")
        })
        .collect()
}

#[test]
fn the_crate_graph_is_the_documented_one_and_runs_one_way() {
    let root = root();
    let text = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let documented = documented(&text).unwrap();
    let declared = declared(&root);
    let problems = graph_problems(&documented, &declared);
    assert!(problems.is_empty(), "{}", problems.join("\n"));

    // An upward edge injected into the manifests is caught twice: it is
    // not documented, and it runs up.
    let mut injected = declared.clone();
    injected.get_mut("op").unwrap().insert("agent".into());
    let problems = graph_problems(&documented, &injected);
    assert!(
        problems.iter().any(|p| p.contains("op → agent is in crates/op/Cargo.toml but not in ARCHITECTURE.md")),
        "{problems:?}"
    );
    assert!(
        problems
            .iter()
            .any(|p| p.contains("op → agent runs upwards")),
        "{problems:?}"
    );
    // ... and documenting it does not make it right.
    let mut documented_too = documented.clone();
    documented_too[0].1.insert("agent".into());
    let problems = graph_problems(&documented_too, &injected);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].contains("runs upwards"), "{problems:?}");
}

#[test]
fn every_rust_file_opens_with_a_module_header() {
    let missing = files_without_header(&rust_dirs(&root()));
    assert!(
        missing.is_empty(),
        "files without a `//!` header:\n{}",
        missing
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join("\n")
    );

    // A file without one is found.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("with.rs"),
        "//! Says what it holds.\nfn f() {}\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("without.rs"),
        "// a plain comment\nfn f() {}\n",
    )
    .unwrap();
    let found = files_without_header(&[dir.path().to_path_buf()]);
    assert_eq!(found, vec![dir.path().join("without.rs")]);
}

#[test]
fn only_the_worker_code_loads_shared_objects() {
    let root = root();
    let loaders = files_naming(&root, "crates", &["libloading", "dlopen("]);
    let allowed: BTreeSet<String> = [
        "crates/sim/src/host.rs",
        "crates/sim/src/launch.rs",
        "crates/sim/src/worker/child.rs",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    let stray: Vec<&String> = loaders
        .iter()
        .filter(|f| !allowed.contains(*f) && !f.starts_with("crates/harness/src/static_check/"))
        .collect();
    assert!(
        stray.is_empty(),
        "shared objects loaded outside the worker's code: {stray:?}"
    );
}

#[test]
fn the_runtime_and_the_timing_model_never_read_time() {
    let root = root();
    for dir in ["crates/sim/src/runtime", "crates/sim/src/timing"] {
        let readers = files_naming(&root, dir, &["Instant", "SystemTime"]);
        assert!(readers.is_empty(), "{dir} reads time in {readers:?}");
    }
}

/// The crates that may name the simulator (`ascendopt_sim`) in their
/// code: the simulator itself, the CLI (it constructs the `SimDevice`) and
/// simtools (the simulator's own tools). Everything else speaks to a
/// device through `ascendopt_device` alone.
const MAY_NAME_THE_SIMULATOR: &[&str] = &["crates/sim/", "crates/cli/", "crates/simtools/"];

/// Files outside [`MAY_NAME_THE_SIMULATOR`] (tests excluded) whose code
/// names `ascendopt_sim`, relative to `root`.
fn simulator_importers(root: &Path) -> Vec<String> {
    files_naming(root, "crates", &["ascendopt_sim"])
        .into_iter()
        .filter(|f| !MAY_NAME_THE_SIMULATOR.iter().any(|p| f.starts_with(p)))
        .collect()
}

#[test]
fn no_crate_above_the_device_layer_but_the_cli_names_the_simulator() {
    let stray = simulator_importers(&root());
    assert!(
        stray.is_empty(),
        "simulator types named above the device layer (use ascendopt_device's): {stray:?}"
    );

    // An import injected into the harness is found; the CLI's is not.
    let dir = tempfile::tempdir().unwrap();
    for (file, text) in [
        (
            "crates/harness/src/leak.rs",
            "//! x\nuse ascendopt_sim::timing::Profile;\n",
        ),
        (
            "crates/cli/src/eval_cmd.rs",
            "//! x\nuse ascendopt_sim::SimDevice;\n",
        ),
        (
            "crates/bank/src/clean.rs",
            "//! x\nuse ascendopt_device::Profile;\n",
        ),
    ] {
        let path = dir.path().join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    assert_eq!(
        simulator_importers(dir.path()),
        vec!["crates/harness/src/leak.rs".to_string()]
    );
}
