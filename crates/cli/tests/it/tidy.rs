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
fn only_hiargs_builds_the_live_objects_of_a_command() {
    // A command file parses, makes one library call and prints: the
    // device, the run store, the runs and the banks come from hiargs.rs
    // (or from the library call).
    // (Unit tests, after `#[cfg(test)]`, may make their own.)
    let root = root();
    let needles = [
        "SimDevice::new",
        "RunStore::open",
        "create_run(",
        "RunContext {",
        "Bank::open",
        "open_existing(",
    ];
    let builders: BTreeSet<String> = files_naming(&root, "crates/cli/src", &needles)
        .into_iter()
        .filter(|f| {
            let text = std::fs::read_to_string(root.join(f)).unwrap_or_default();
            let code = text.split("#[cfg(test)]").next().unwrap_or("");
            needles.iter().any(|n| code.contains(n))
        })
        .collect();
    let want: BTreeSet<String> = ["crates/cli/src/hiargs.rs".to_string()].into();
    assert_eq!(builders, want);
}

#[test]
fn the_runtime_and_the_timing_model_never_read_time() {
    let root = root();
    for dir in ["crates/sim/src/runtime", "crates/sim/src/timing"] {
        let readers = files_naming(&root, dir, &["Instant", "SystemTime"]);
        assert!(readers.is_empty(), "{dir} reads time in {readers:?}");
    }
}

/// `.rs` files directly in a crate's `tests/` folder that are not a test
/// target declared with `harness = false` (which owns its `main`): each
/// such file would be a test binary of its own, linked separately. The
/// integration tests of a crate are modules of its one `tests/it/` binary.
fn stray_test_binaries(root: &Path) -> Vec<String> {
    let mut stray = Vec::new();
    let Ok(crates) = std::fs::read_dir(root.join("crates")) else {
        return stray;
    };
    for entry in crates.flatten() {
        let dir = entry.path();
        let own_main: BTreeSet<String> = std::fs::read_to_string(dir.join("Cargo.toml"))
            .ok()
            .and_then(|t| t.parse::<toml_edit::DocumentMut>().ok())
            .and_then(|doc| {
                doc.get("test")
                    .and_then(|t| t.as_array_of_tables())
                    .map(|tests| {
                        tests
                            .iter()
                            .filter(|t| t.get("harness").and_then(|h| h.as_bool()) == Some(false))
                            .filter_map(|t| t.get("path").and_then(|p| p.as_str()))
                            .map(str::to_string)
                            .collect()
                    })
            })
            .unwrap_or_default();
        for file in std::fs::read_dir(dir.join("tests"))
            .into_iter()
            .flatten()
            .flatten()
        {
            let path = file.path();
            let name = file.file_name().to_string_lossy().to_string();
            if path.extension().is_some_and(|e| e == "rs")
                && !own_main.contains(&format!("tests/{name}"))
            {
                stray.push(format!(
                    "{}/tests/{name}",
                    dir.file_name().unwrap_or_default().to_string_lossy()
                ));
            }
        }
    }
    stray.sort();
    stray
}

#[test]
fn integration_tests_are_modules_of_one_binary_per_crate() {
    let stray = stray_test_binaries(&root());
    assert!(
        stray.is_empty(),
        "test files outside tests/it/ (move each to crates/<crate>/tests/it/ and add `mod <name>;` to its main.rs): {stray:?}"
    );

    // A new file beside tests/it/ is found; a `harness = false` target is not.
    let dir = tempfile::tempdir().unwrap();
    let krate = dir.path().join("crates/k");
    std::fs::create_dir_all(krate.join("tests/it")).unwrap();
    std::fs::write(
        krate.join("Cargo.toml"),
        "[package]\nname = \"k\"\n\n[[test]]\nname = \"own\"\npath = \"tests/own.rs\"\nharness = false\n",
    )
    .unwrap();
    std::fs::write(krate.join("tests/it/main.rs"), "//! it\n").unwrap();
    std::fs::write(krate.join("tests/own.rs"), "//! own\nfn main() {}\n").unwrap();
    std::fs::write(krate.join("tests/new_one.rs"), "//! new\n").unwrap();
    assert_eq!(stray_test_binaries(dir.path()), vec!["k/tests/new_one.rs"]);
}

/// The import graph between the top-level modules of the crate whose
/// sources are in `src` (`crate::m` named in a file of module `n`, comments
/// left out, is an edge n → m), and the circles in it (each circle as its
/// modules, sorted).
fn module_circles(src: &Path) -> Vec<Vec<String>> {
    fn files(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                files(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut all = Vec::new();
    files(src, &mut all);
    let top = |p: &Path| -> String {
        let rel = p.strip_prefix(src).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        first.trim_end_matches(".rs").to_string()
    };
    let modules: BTreeSet<String> = all
        .iter()
        .map(|p| top(p))
        .filter(|m| m != "lib" && m != "main")
        .collect();
    let mut graph: Graph = modules
        .iter()
        .map(|m| (m.clone(), BTreeSet::new()))
        .collect();
    for p in &all {
        let from = top(p);
        if !modules.contains(&from) {
            continue;
        }
        let text = std::fs::read_to_string(p).unwrap_or_default();
        for line in text.lines() {
            let code = line.split("//").next().unwrap_or("");
            for (i, _) in code.match_indices("crate::") {
                let name: String = code[i + 7..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if name != from && modules.contains(&name) {
                    graph.get_mut(&from).unwrap().insert(name);
                }
            }
        }
    }
    // A module is on a circle with every module that reaches it and that
    // it reaches.
    let reach = |start: &str| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![start.to_string()];
        while let Some(m) = todo.pop() {
            for n in &graph[&m] {
                if seen.insert(n.clone()) {
                    todo.push(n.clone());
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<String, BTreeSet<String>> =
        modules.iter().map(|m| (m.clone(), reach(m))).collect();
    let mut circles: BTreeSet<Vec<String>> = BTreeSet::new();
    for m in &modules {
        if !reaches[m].contains(m) {
            continue;
        }
        let circle: Vec<String> = modules
            .iter()
            .filter(|n| reaches[m].contains(*n) && reaches[*n].contains(m))
            .cloned()
            .collect();
        circles.insert(circle);
    }
    circles.into_iter().collect()
}

#[test]
fn the_method_and_the_experiments_import_without_circles() {
    let root = root();
    for krate in ["agent", "experiments", "motif"] {
        let circles = module_circles(&root.join("crates").join(krate).join("src"));
        assert!(
            circles.is_empty(),
            "crates/{krate}: top-level modules that import each other in a circle: {circles:?}"
        );
    }

    // A circle is found: a → b → a, and c beside it is not on it.
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::write(src.join("lib.rs"), "//! l\nmod a;\nmod b;\nmod c;\n").unwrap();
    std::fs::write(src.join("a.rs"), "//! a\nuse crate::b::B;\n").unwrap();
    std::fs::create_dir_all(src.join("b")).unwrap();
    std::fs::write(
        src.join("b/mod.rs"),
        "//! b\nuse crate::a::A; // crate::c in a comment\n",
    )
    .unwrap();
    std::fs::write(src.join("c.rs"), "//! c\nuse crate::a::A;\n").unwrap();
    assert_eq!(
        module_circles(src),
        vec![vec!["a".to_string(), "b".to_string()]]
    );
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
