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
