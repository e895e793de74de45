//! The cube path through the whole evaluation: the `matmul_cube` fixture
//! (tests/fixtures/matmul_cube: an AIC-only matmul with basic tiling,
//! written for this test from the guide's description of the cube flow)
//! builds, passes every case against its numpy golden (each run twice with
//! different on-chip garbage, hazards failing a case) and is profiled as a
//! cube kernel whose time goes to the cube pipes.

use ascendopt_device::CoreType;
use ascendopt_harness::pipeline::evaluate_package;
use ascendopt_harness::verdict::Verdict;
use ascendopt_op::package::OpPackage;

use crate::common;

#[test]
fn matmul_cube_fixture_passes_and_its_profile_shows_the_cube_pipes() {
    let root = common::repo().join("crates/harness/tests/fixtures/matmul_cube");
    let pkg = OpPackage::load(&root, &ascendopt_golden::BUILTINS).unwrap();
    let dev = common::device(120_000);
    let (verdict, _) = evaluate_package(&dev, &pkg, 7, &common::cfg()).unwrap();
    let Verdict::Correct { profile, .. } = &verdict else {
        panic!("{verdict:?}");
    };
    assert_eq!(profile.op_type, "cube", "{profile:?}");
    // 1024 x 512 in tiles of 128 x 128: 32 tiles over the 24 cube cores.
    assert_eq!(profile.blocks.len(), 24);
    assert_eq!(profile.cores, Some(24));
    for b in &profile.blocks {
        assert_eq!(b.core_type, ascendopt_device::CoreType::Aic, "{b:?}");
        let aic = b.aic.as_ref().unwrap();
        for (field, r) in [
            ("aic_cube_ratio", aic.cube_ratio),
            ("aic_mte1_ratio", aic.mte1_ratio),
            ("aic_mte2_ratio", aic.mte2_ratio),
            ("aic_fixpipe_ratio", aic.fixpipe_ratio),
        ] {
            assert!(r > 0.0 && r <= 1.0, "{field} = {r} in {b:?}");
        }
        assert!(b.aiv.is_none(), "{b:?}");
    }
}

/// The Level-3 `matmul_api_constant` package (the high-level Matmul API in
/// a MIX kernel, host tiling through MultiCoreMatmulTiling) passes every
/// case, and its profile is a MIX launch: cube blocks whose time goes to
/// the cube pipes, vector blocks that wait for them.
#[test]
fn matmul_api_constant_passes_as_a_mix_kernel() {
    let root = common::repo().join("ops/matmul_api_constant");
    let pkg = OpPackage::load(&root, &ascendopt_golden::BUILTINS).unwrap();
    let dev = common::device(120_000);
    let (verdict, _) = evaluate_package(&dev, &pkg, 7, &common::cfg()).unwrap();
    let Verdict::Correct { profile, .. } = &verdict else {
        panic!("{verdict:?}");
    };
    assert_eq!(profile.op_type, "mix", "{profile:?}");
    let blocks = &profile.blocks;
    let aic = blocks
        .iter()
        .filter(|b| b.core_type == CoreType::Aic)
        .count();
    let aiv = blocks
        .iter()
        .filter(|b| b.core_type == CoreType::Aiv)
        .count();
    assert_eq!(aiv, 2 * aic, "{profile:?}");
    assert!(blocks
        .iter()
        .filter(|b| b.core_type == CoreType::Aic)
        .all(|b| b.aic.as_ref().is_some_and(|c| c.cube_ratio > 0.0)));
}

/// The Level-3 `flash_attention_score_with_large_head_dim` package (two
/// Matmul objects, Q K^T and P V, that one AIC serves for its two AIVs;
/// the online softmax on the vector cores) passes its smallest and its
/// tail case (S1, S2 and D tails, grouped KV), each run twice, as a MIX
/// launch whose AICs use the cube. The larger cases are `ascendopt
/// suite`'s.
#[test]
fn flash_attention_passes_its_small_and_tail_cases_as_a_mix_kernel() {
    let root = common::repo().join("ops/flash_attention_score_with_large_head_dim");
    let mut pkg = OpPackage::load(&root, &ascendopt_golden::BUILTINS).unwrap();
    pkg.spec
        .cases
        .retain(|c| c.name.starts_with("small_") || c.name.starts_with("tails_"));
    assert_eq!(pkg.spec.cases.len(), 2);
    let dev = common::device(120_000);
    let (verdict, _) = evaluate_package(&dev, &pkg, 7, &common::cfg()).unwrap();
    let Verdict::Correct { profile, .. } = &verdict else {
        panic!("{verdict:?}");
    };
    assert_eq!(profile.op_type, "mix", "{profile:?}");
    let aic: Vec<_> = profile
        .blocks
        .iter()
        .filter(|b| b.core_type == CoreType::Aic)
        .collect();
    let aiv = profile
        .blocks
        .iter()
        .filter(|b| b.core_type == CoreType::Aiv)
        .count();
    assert!(!aic.is_empty() && aiv == 2 * aic.len(), "{profile:?}");
    assert!(aic
        .iter()
        .all(|b| b.aic.as_ref().is_some_and(|c| c.cube_ratio > 0.0)));
}

/// A host tiling whose base block differs from the kernel's constant
/// MatmulConfig (tiling constantisation: the chip computes with the
/// constant) fails the evaluation with a message naming both, instead of
/// running the runtime block as a speedup the chip would never see.
#[test]
fn a_runtime_base_block_that_disagrees_with_the_kernels_constant_fails() {
    let src = common::repo().join("ops/matmul_api_constant");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("matmul_api_constant");
    ascendopt_op::package::copy_tree(&src, &root, &[]).unwrap();
    let host = root.join("op_host/matmul_api_constant.cpp");
    let text = std::fs::read_to_string(&host).unwrap();
    let old = "constexpr int32_t BASE_N = 128;";
    assert!(
        text.contains(old),
        "the package's host code changed: update this test"
    );
    std::fs::write(&host, text.replace(old, "constexpr int32_t BASE_N = 256;")).unwrap();
    let pkg = OpPackage::load(&root, &ascendopt_golden::BUILTINS).unwrap();
    let dev = common::device(120_000);
    let (verdict, _) = evaluate_package(&dev, &pkg, 7, &common::cfg()).unwrap();
    let Verdict::RuntimeError { message, .. } = &verdict else {
        panic!("{verdict:?}");
    };
    assert!(
        message.contains("constant base block") && message.contains("128/256/64"),
        "{message}"
    );
}
