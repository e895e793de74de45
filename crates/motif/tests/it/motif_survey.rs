//! The motif engine over every built-in operator, without building
//! anything: every removal (of the first, middle and last site of each
//! motif in each operator) and every application must give sources that
//! still parse, a removal must be undone by an application of the same
//! motif (the weak kernel shows an absent site whose application restores
//! a kernel with the motif present again), and every motif must find
//! something to remove somewhere in ops/.
//!
//! Motifs of hand-written cube kernels (Mmad, Fixpipe, Nd2Nz copies) have
//! no built-in operator to act on: every cube operator under ops/ uses the
//! Matmul API, whose K loop lives in the library. They are surveyed on the
//! hand-written cube fixtures (the harness's `matmul_cube`, the motif
//! tests' `matmul_rowpanel`) instead and must be removable there; unitFlag
//! is set in no kernel here, so `unit_flag` must be applicable in its
//! fixture and its application removable.

use ascendopt_motif::{registry, SiteState, Sources};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn ops_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ops")
}

/// Motifs that act only on hand-written cube kernels, with the fixture
/// each must be removable in (see the header).
const HAND_WRITTEN_CUBE: [(&str, &str); 2] = [
    ("l0c_accumulate", "matmul_cube"),
    ("nz_hoist", "matmul_rowpanel"),
];

/// Motifs no kernel here has, with the fixture each must apply to.
const APPLY_ONLY: [(&str, &str); 1] = [("unit_flag", "matmul_rowpanel")];

/// Removals with no application back: `tile_shape` on a block with a side
/// known only at run time (flash attention's rows) halves the known side
/// (always valid) but cannot check that a larger block fits, so it offers
/// no application there.
const REMOVE_ONLY: [(&str, &str); 1] =
    [("tile_shape", "flash_attention_score_with_large_head_dim")];

/// The hand-written cube fixtures (the harness's, the motif tests' own).
fn cube_fixtures() -> [PathBuf; 2] {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    [
        here.join("../harness/tests/fixtures/matmul_cube"),
        here.join("tests/fixtures/matmul_rowpanel"),
    ]
}

fn is_fixture(op: &str) -> bool {
    cube_fixtures()
        .iter()
        .any(|p| p.file_name().is_some_and(|n| n == op))
}

fn builtins() -> Vec<(String, Sources)> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(ops_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("op.toml").is_file())
        .collect();
    dirs.sort();
    dirs.extend(cube_fixtures());
    dirs.into_iter()
        .map(|d| {
            (
                d.file_name().unwrap().to_string_lossy().into_owned(),
                Sources::load(&d).unwrap(),
            )
        })
        .collect()
}

/// True when every kernel and host .cpp file parses without a syntax
/// error (checked with the same C++ grammar through a tiny re-parse).
fn parses(pkg: &Sources) -> Result<(), String> {
    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&tree_sitter_cpp::LANGUAGE.into())
        .unwrap();
    for (path, text) in pkg.files() {
        if !path.ends_with(".cpp") {
            continue;
        }
        let masked = ["__aicore__", "__global__", "__gm__"]
            .iter()
            .fold(text.to_string(), |t, q| t.replace(q, &" ".repeat(q.len())));
        let tree = parser.parse(&masked, None).unwrap();
        if tree.root_node().has_error() {
            return Err(path.to_string());
        }
    }
    Ok(())
}

#[test]
fn every_motif_round_trips_on_the_builtin_operators() {
    let ops = builtins();
    let ops_of = &ops;
    assert!(ops.len() >= 6);
    let mut removable: BTreeMap<&'static str, Vec<String>> = BTreeMap::new();
    let mut failures = Vec::new();
    for motif in registry() {
        for (op, strong) in &ops {
            // A few sites per operator keep the test quick (the first, the
            // middle and the last present site).
            let present: Vec<_> = motif
                .detect(strong)
                .into_iter()
                .filter(|s| s.state == SiteState::Present)
                .collect();
            let mut picks: Vec<usize> = vec![0, present.len() / 2, present.len().saturating_sub(1)];
            picks.dedup();
            for site in picks.into_iter().filter_map(|i| present.get(i).cloned()) {
                let Some(weak) = motif.remove(strong, &site) else {
                    continue;
                };
                if let Err(file) = parses(&weak) {
                    failures.push(format!(
                        "{op}: removing {} at {}:{} breaks the syntax of {file}",
                        motif.tag(),
                        site.file,
                        site.line
                    ));
                    continue;
                }
                let remove_only = REMOVE_ONLY.contains(&(motif.tag(), op.as_str()));
                let restored = remove_only
                    || motif
                        .detect(&weak)
                        .into_iter()
                        .filter(|s| s.state == SiteState::Absent)
                        .filter_map(|s| motif.apply(&weak, &s))
                        .any(|back| {
                            back == *strong
                                || parses(&back).is_ok()
                                    && motif
                                        .detect(&back)
                                        .iter()
                                        .any(|s| s.state == SiteState::Present)
                        });
                if !restored {
                    failures.push(format!(
                        "{op}: {} removed at {}:{} cannot be applied back:\n{}",
                        motif.tag(),
                        site.file,
                        site.line,
                        ascendopt_motif::diff(strong, &weak)
                    ));
                    continue;
                }
                removable
                    .entry(motif.tag())
                    .or_default()
                    .push(format!("{op}:{}", site.line));
            }
        }
    }
    for (tag, sites) in &removable {
        let mut ops: Vec<&str> = sites.iter().map(|s| s.split(':').next().unwrap()).collect();
        ops.dedup();
        eprintln!(
            "{tag:>16}: {} sites in {} operators: {}",
            sites.len(),
            ops.len(),
            ops.join(" ")
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    for motif in registry() {
        let ops: std::collections::BTreeSet<&str> = removable
            .get(motif.tag())
            .map(|v| v.iter().map(|s| s.split(':').next().unwrap()).collect())
            .unwrap_or_default();
        if let Some((_, fixture)) = HAND_WRITTEN_CUBE.iter().find(|(t, _)| *t == motif.tag()) {
            assert!(
                ops.contains(fixture),
                "{} is not removable in the cube fixture {fixture}",
                motif.tag()
            );
            continue;
        }
        if let Some((_, fixture)) = APPLY_ONLY.iter().find(|(t, _)| *t == motif.tag()) {
            let (_, weak) = ops_of.iter().find(|(op, _)| op == fixture).unwrap();
            let round_trips = motif
                .detect(weak)
                .into_iter()
                .filter(|s| s.state == SiteState::Absent)
                .filter_map(|s| motif.apply(weak, &s))
                .any(|strong| {
                    parses(&strong).is_ok()
                        && motif
                            .detect(&strong)
                            .into_iter()
                            .filter(|s| s.state == SiteState::Present)
                            .filter_map(|s| motif.remove(&strong, &s))
                            .any(|back| back == *weak)
                });
            assert!(
                round_trips,
                "{} does not apply and remove back in {fixture}",
                motif.tag()
            );
            continue;
        }
        let ops: std::collections::BTreeSet<&str> =
            ops.into_iter().filter(|o| !is_fixture(o)).collect();
        assert!(
            ops.len() >= 2,
            "{} is removable in fewer than two operators: {ops:?}",
            motif.tag()
        );
    }
}
