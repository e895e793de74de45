//! The cube path through the whole evaluation: the `matmul_cube` fixture
//! (tests/fixtures/matmul_cube: an AIC-only matmul with basic tiling,
//! written for this test from the guide's description of the cube flow)
//! builds, passes every case against its numpy golden (each run twice with
//! different on-chip garbage, hazards failing a case) and is profiled as a
//! cube kernel whose time goes to the cube pipes.

use ascendopt_harness::pipeline::evaluate_package;
use ascendopt_harness::verdict::Verdict;
use ascendopt_op::package::OpPackage;

use crate::common;

#[test]
fn matmul_cube_fixture_passes_and_its_profile_shows_the_cube_pipes() {
    let root = common::repo().join("crates/harness/tests/fixtures/matmul_cube");
    let pkg = OpPackage::load(&root).unwrap();
    let dev = common::device(120_000);
    let (verdict, _) = evaluate_package(&dev, &pkg, 7, &common::cfg()).unwrap();
    let Verdict::Correct { profile, .. } = &verdict else {
        panic!("{verdict:?}");
    };
    assert_eq!(profile["Op Type"], "cube", "{profile}");
    let blocks = profile["blocks"].as_array().unwrap();
    // 1024 x 512 in tiles of 128 x 128: 32 tiles over the 24 cube cores.
    assert_eq!(blocks.len(), 24);
    for b in blocks {
        assert_eq!(b["core_type"], "aic", "{b}");
        for field in [
            "aic_cube_ratio",
            "aic_mte1_ratio",
            "aic_mte2_ratio",
            "aic_fixpipe_ratio",
        ] {
            let r = b[field].as_f64().unwrap_or(-1.0);
            assert!(r > 0.0 && r <= 1.0, "{field} = {r} in {b}");
        }
        assert!(b["aiv_vec_ratio"].is_null(), "{b}");
    }
}
