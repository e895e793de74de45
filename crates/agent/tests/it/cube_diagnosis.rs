//! The diagnosis of a cube kernel from a real simulator run: the motif
//! tests' `matmul_block64` fixture (a hand-written AIC kernel with 64 x
//! 64 x 64 base blocks) evaluated on the simulator, its profile's `aic_*`
//! fields read by the rule diagnoser, which must call it a cube kernel and
//! rank the cube motifs first (`tile_shape` the first of them: the block
//! is what the fixture lacks).

use ascendopt_agent::diagnose::{DiagnoseRequest, Diagnoser, RuleDiagnoser};
use ascendopt_harness::pipeline::{evaluate_package, PipelineConfig};
use ascendopt_harness::verdict::Verdict;
use ascendopt_motif::Sources;
use ascendopt_op::package::OpPackage;
use ascendopt_sim::{SimDevice, SimDeviceConfig};
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The fixture with its benchmark case cut to 768 x 768 x 256 (12 x 12
/// blocks, six per cube core), in a scratch folder.
fn small_block64(dir: &Path) -> PathBuf {
    let src = repo().join("crates/motif/tests/fixtures/matmul_block64");
    let dst = dir.join("matmul_block64");
    Sources::load(&src).unwrap().write_to(&dst).unwrap();
    let toml = std::fs::read_to_string(src.join("op.toml")).unwrap();
    let small = toml
        .replace("bench_1536x1536x256", "bench_768x768x256")
        .replace("[[1536, 256], [256, 1536]]", "[[768, 256], [256, 768]]");
    assert_ne!(small, toml);
    std::fs::write(dst.join("op.toml"), small).unwrap();
    dst
}

#[test]
fn a_cube_kernels_profile_points_the_diagnosis_at_the_cube_motifs() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = small_block64(tmp.path());
    let mut cfg = SimDeviceConfig::standard().unwrap();
    cfg.cache = ascendopt_sim::build::BuildCache::at(repo().join("target/ascendopt-test-cache"));
    cfg.limits.wall_ms = 120_000;
    let device = SimDevice::new(cfg);
    let pkg = OpPackage::load(&dir, &ascendopt_golden::BUILTINS).unwrap();
    let pipeline = PipelineConfig {
        repeats: 1,
        deterministic: true,
        seed: 7,
    };
    let (verdict, _) = evaluate_package(&device, &pkg, 7, &pipeline).unwrap();
    let Verdict::Correct { profile, .. } = &verdict else {
        panic!("{verdict:?}")
    };
    let aic = profile
        .blocks
        .iter()
        .filter_map(|b| b.aic.as_ref())
        .max_by(|a, b| a.time_us.total_cmp(&b.time_us))
        .expect("an AIC block");
    let sources = Sources::load(&dir).unwrap();
    let d = RuleDiagnoser::new()
        .diagnose(&DiagnoseRequest {
            sources: &sources,
            op: "matmul_block64",
            profile,
            compiler_diagnostics: "",
        })
        .unwrap();
    eprintln!(
        "aic: cube {:.2} mte1 {:.2} mte2 {:.2} fixpipe {:.2}\ndiagnosis: {} | {} | {} | {:?}",
        aic.cube_ratio,
        aic.mte1_ratio,
        aic.mte2_ratio,
        aic.fixpipe_ratio,
        d.kind,
        d.text,
        d.rule,
        d.motifs
    );
    // The AIC's copies bound this kernel (MTE2 over the cube).
    assert!(aic.mte2_ratio > aic.cube_ratio, "{aic:?}");
    assert_eq!(d.kind, "cube_mte2_bound", "{}", d.rule);
    assert!(d.rule.contains("aic_mte2_ratio"), "{}", d.rule);
    assert_eq!(
        d.motifs.first().map(String::as_str),
        Some("tile_shape"),
        "{:?}",
        d.motifs
    );
    // The other cube motifs the engine can apply come before any vector one.
    let cube = [
        "tile_shape",
        "cube_double_buffer",
        "nz_hoist",
        "block_order",
        "l0c_accumulate",
        "unit_flag",
    ];
    let first_other = d.motifs.iter().position(|m| !cube.contains(&m.as_str()));
    let last_cube = d.motifs.iter().rposition(|m| cube.contains(&m.as_str()));
    if let (Some(other), Some(last)) = (first_other, last_cube) {
        assert!(last < other, "{:?}", d.motifs);
    }
}
