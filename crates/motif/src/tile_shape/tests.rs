//! Unit tests of the tile-shape motif on hosts and kernels written for the
//! tests.

use super::*;
use crate::{snapshot_diff, Motif, Site};
use expect_test::expect;

/// A Matmul API host in the shape of the built-in packages: the base
/// block from constants, baseK left to the tiling, half inputs.
const API_HOST: &str = r#"namespace optiling {
namespace {
constexpr int32_t BASE_M = 128;
constexpr int32_t BASE_N = 256;
constexpr int32_t BASE_K = -1;
}  // namespace
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    matmul_tiling::MultiCoreMatmulTiling cubeTiling(ascendcPlatform);
    cubeTiling.SetAType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND,
                        matmul_tiling::DataType::DT_FLOAT16);
    cubeTiling.SetShape(m, n, k);
    cubeTiling.SetFixSplit(BASE_M, BASE_N, BASE_K);
    cubeTiling.SetBias(false);
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling
"#;

fn sites(pkg: &Sources, state: SiteState) -> Vec<Site> {
    TileShape
        .detect(pkg)
        .into_iter()
        .filter(|s| s.state == state)
        .collect()
}

fn notes(sites: &[Site]) -> Vec<String> {
    sites.iter().map(|s| s.note.clone()).collect()
}

#[test]
fn a_matmul_hosts_block_halves_its_longer_side_and_grows_back() {
    let strong = Sources::from_files([("op_host/mm.cpp", API_HOST)]);
    let present = sites(&strong, SiteState::Present);
    assert_eq!(present.len(), 1, "{present:?}");
    assert_eq!(present[0].line, 13);
    // 128 x 256 already fills L0B double-buffered and L0C: nothing larger.
    assert!(sites(&strong, SiteState::Absent).is_empty());
    let weak = TileShape.remove(&strong, &present[0]).unwrap();
    expect![[r#"
        --- a/op_host/mm.cpp
        +++ b/op_host/mm.cpp
        @@ -1,7 +1,7 @@
         namespace optiling {
         namespace {
         constexpr int32_t BASE_M = 128;
        -constexpr int32_t BASE_N = 256;
        +constexpr int32_t BASE_N = 128;
         constexpr int32_t BASE_K = -1;
         }  // namespace
         static ge::graphStatus TilingFunc(gert::TilingContext* context)
    "#]]
    .assert_eq(&snapshot_diff(&strong, &weak));
    let absent = sites(&weak, SiteState::Absent);
    expect![[r#"
        [
            "base block 128 x 128 x -1 of cubeTiling.SetFixSplit(BASE_M, BASE_N, BASE_K) -> 128 x 256 x -1",
        ]
    "#]]
    .assert_debug_eq(&notes(&absent));
    let back = TileShape.apply(&weak, &absent[0]).unwrap();
    assert_eq!(back, strong);
}

#[test]
fn literal_arguments_are_edited_in_place() {
    let host = API_HOST.replace(
        "SetFixSplit(BASE_M, BASE_N, BASE_K)",
        "SetFixSplit(64, 64, 64)",
    );
    let weak = Sources::from_files([("op_host/mm.cpp", host)]);
    assert!(sites(&weak, SiteState::Present).is_empty());
    let absent = sites(&weak, SiteState::Absent);
    expect![[r#"
        [
            "base block 64 x 64 x 64 of cubeTiling.SetFixSplit(64, 64, 64) -> 128 x 256 x 64",
            "base block 64 x 64 x 64 of cubeTiling.SetFixSplit(64, 64, 64) -> 128 x 128 x 64",
            "base block 64 x 64 x 64 of cubeTiling.SetFixSplit(64, 64, 64) -> 64 x 128 x 64",
        ]
    "#]]
    .assert_debug_eq(&notes(&absent));
    let strong = TileShape.apply(&weak, &absent[0]).unwrap();
    expect![[r#"
        --- a/op_host/mm.cpp
        +++ b/op_host/mm.cpp
        @@ -10,7 +10,7 @@
             cubeTiling.SetAType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND,
                                 matmul_tiling::DataType::DT_FLOAT16);
             cubeTiling.SetShape(m, n, k);
        -    cubeTiling.SetFixSplit(64, 64, 64);
        +    cubeTiling.SetFixSplit(128, 256, 64);
             cubeTiling.SetBias(false);
             return ge::GRAPH_SUCCESS;
         }
    "#]]
    .assert_eq(&snapshot_diff(&weak, &strong));
    let present = sites(&strong, SiteState::Present);
    assert_eq!(present.len(), 1, "{present:?}");
    let weaker = TileShape.remove(&strong, &present[0]).unwrap();
    assert!(weaker
        .get("op_host/mm.cpp")
        .unwrap()
        .contains("SetFixSplit(128, 128, 64);"));
}

/// A kernel that fixes its base block at compile time, as matmul_api_constant.
const FIXED_KERNEL: &str = r#"#include "lib/matmul_intf.h"
namespace {
constexpr matmul::MatmulShapeParams SHAPE = {0, 0, 0, 128, 128, 64};
constexpr matmul::MatmulConfig MM_CONFIG = matmul::GetMMConfig<matmul::MatmulConfigMode::CONFIG_NORM>(SHAPE);
}  // namespace
extern "C" __global__ __aicore__ void mm(GM_ADDR a, GM_ADDR tiling)
{
    matmul::Matmul<AType, BType, CType, BiasType, MM_CONFIG> mm;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &tilingData.cubeTilingData);
}
"#;

fn fixed_pkg(kernel: &str) -> Sources {
    let host = API_HOST
        .replace("BASE_N = 256;", "BASE_N = 128;")
        .replace("BASE_K = -1;", "BASE_K = 64;")
        .replace(
            "    cubeTiling.SetBias(false);\n",
            "    cubeTiling.SetBiasType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND,\n                           matmul_tiling::DataType::DT_FLOAT);\n    cubeTiling.SetBias(true);\n",
        );
    Sources::from_files([
        ("op_host/mm.cpp", host.as_str()),
        ("op_kernel/mm.cpp", kernel),
    ])
}

#[test]
fn a_block_the_kernel_fixes_moves_on_the_host_and_in_the_kernel_together() {
    let strong = fixed_pkg(FIXED_KERNEL);
    let present = sites(&strong, SiteState::Present);
    assert_eq!(present.len(), 1, "{present:?}");
    let weak = TileShape.remove(&strong, &present[0]).unwrap();
    expect![[r#"
        --- a/op_host/mm.cpp
        +++ b/op_host/mm.cpp
        @@ -1,7 +1,7 @@
         namespace optiling {
         namespace {
         constexpr int32_t BASE_M = 128;
        -constexpr int32_t BASE_N = 128;
        +constexpr int32_t BASE_N = 64;
         constexpr int32_t BASE_K = 64;
         }  // namespace
         static ge::graphStatus TilingFunc(gert::TilingContext* context)
        --- a/op_kernel/mm.cpp
        +++ b/op_kernel/mm.cpp
        @@ -1,6 +1,6 @@
         #include "lib/matmul_intf.h"
         namespace {
        -constexpr matmul::MatmulShapeParams SHAPE = {0, 0, 0, 128, 128, 64};
        +constexpr matmul::MatmulShapeParams SHAPE = {0, 0, 0, 128, 64, 64};
         constexpr matmul::MatmulConfig MM_CONFIG = matmul::GetMMConfig<matmul::MatmulConfigMode::CONFIG_NORM>(SHAPE);
         }  // namespace
         extern "C" __global__ __aicore__ void mm(GM_ADDR a, GM_ADDR tiling)
    "#]]
    .assert_eq(&snapshot_diff(&strong, &weak));
    // Grown from the original: the float bias row of 256 fills the 1 KB
    // bias table, so 128 x 256 x 64 is the largest.
    let absent = sites(&strong, SiteState::Absent);
    expect![[r#"
        [
            "base block 128 x 128 x 64 of cubeTiling.SetFixSplit(BASE_M, BASE_N, BASE_K), with the kernel's constant block at op_kernel/mm.cpp:3 -> 128 x 256 x 64",
        ]
    "#]]
    .assert_debug_eq(&notes(&absent));
    let big = TileShape.apply(&strong, &absent[0]).unwrap();
    expect![[r#"
        --- a/op_host/mm.cpp
        +++ b/op_host/mm.cpp
        @@ -1,7 +1,7 @@
         namespace optiling {
         namespace {
         constexpr int32_t BASE_M = 128;
        -constexpr int32_t BASE_N = 128;
        +constexpr int32_t BASE_N = 256;
         constexpr int32_t BASE_K = 64;
         }  // namespace
         static ge::graphStatus TilingFunc(gert::TilingContext* context)
        --- a/op_kernel/mm.cpp
        +++ b/op_kernel/mm.cpp
        @@ -1,6 +1,6 @@
         #include "lib/matmul_intf.h"
         namespace {
        -constexpr matmul::MatmulShapeParams SHAPE = {0, 0, 0, 128, 128, 64};
        +constexpr matmul::MatmulShapeParams SHAPE = {0, 0, 0, 128, 256, 64};
         constexpr matmul::MatmulConfig MM_CONFIG = matmul::GetMMConfig<matmul::MatmulConfigMode::CONFIG_NORM>(SHAPE);
         }  // namespace
         extern "C" __global__ __aicore__ void mm(GM_ADDR a, GM_ADDR tiling)
    "#]]
    .assert_eq(&snapshot_diff(&strong, &big));
    // The weak kernel grows back to the largest block, on both sides.
    let back = sites(&weak, SiteState::Absent);
    let grown = TileShape.apply(&weak, &back[0]).unwrap();
    assert!(grown
        .get("op_kernel/mm.cpp")
        .unwrap()
        .contains("{0, 0, 0, 128, 256, 64}"));
}

#[test]
fn a_kernel_block_that_disagrees_with_the_host_or_a_second_one_gives_no_site() {
    let other = FIXED_KERNEL.replace("128, 128, 64}", "128, 256, 64}");
    assert!(TileShape.detect(&fixed_pkg(&other)).is_empty());
    // GetBasicConfig and basicM assignments are read as well.
    let basic = FIXED_KERNEL.replace(
        "constexpr matmul::MatmulShapeParams SHAPE = {0, 0, 0, 128, 128, 64};\n",
        "constexpr matmul::MatmulConfig BASIC = matmul::GetBasicConfig(128, 64, 64);\n",
    );
    assert!(TileShape.detect(&fixed_pkg(&basic)).is_empty());
    let agreeing = basic.replace(
        "GetBasicConfig(128, 64, 64)",
        "GetBasicConfig(128, 128, 64)",
    );
    let strong = fixed_pkg(&agreeing);
    let present = sites(&strong, SiteState::Present);
    let weak = TileShape.remove(&strong, &present[0]).unwrap();
    assert!(weak
        .get("op_kernel/mm.cpp")
        .unwrap()
        .contains("GetBasicConfig(128, 64, 64)"));
}

/// A hand-written cube kernel's host: the block from annotated constants
/// into the tiling data.
const HAND_HOST: &str = r#"namespace optiling {
namespace {
// ascendopt:tiling-begin
constexpr uint32_t BASE_M = 64;  // ascendopt:knob choices=16,32,64,128,256
constexpr uint32_t BASE_N = 64;  // ascendopt:knob choices=16,32,64,128,256
constexpr uint32_t BASE_K = 64;  // ascendopt:knob choices=16,32,64,128,256
// ascendopt:tiling-end
}  // namespace
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    MatmulCubeTilingData tiling;
    tiling.set_baseM(BASE_M);
    tiling.set_baseN(BASE_N);
    tiling.set_baseK(BASE_K);
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling
"#;

/// Its kernel: double-buffered L1 and L0 queues, one L0C buffer.
const HAND_KERNEL: &str = r#"constexpr int32_t BUFFER_NUM = 2;
class KernelMm {
public:
    __aicore__ inline void Init(TPipe* pipe)
    {
        pipe->InitBuffer(qA1, BUFFER_NUM, baseM * baseK * sizeof(half));
        pipe->InitBuffer(qB1, BUFFER_NUM, baseK * baseN * sizeof(half));
        pipe->InitBuffer(qA2, BUFFER_NUM, baseM * baseK * sizeof(half));
        pipe->InitBuffer(qB2, BUFFER_NUM, baseK * baseN * sizeof(half));
        pipe->InitBuffer(qC, 1, baseM * baseN * sizeof(float));
    }
    __aicore__ inline void Compute() { Mmad(c1, a2, b2, params); }
private:
    TQue<TPosition::A1, BUFFER_NUM> qA1;
    TQue<TPosition::B1, BUFFER_NUM> qB1;
    TQue<TPosition::A2, BUFFER_NUM> qA2;
    TQue<TPosition::B2, BUFFER_NUM> qB2;
    TQue<TPosition::CO1, 1> qC;
};
"#;

#[test]
fn a_hand_written_kernels_small_block_grows_by_a_ladder_and_shrinks_back() {
    let weak = Sources::from_files([
        ("op_host/mm.cpp", HAND_HOST),
        ("op_kernel/mm.cpp", HAND_KERNEL),
    ]);
    assert!(sites(&weak, SiteState::Present).is_empty());
    let absent = sites(&weak, SiteState::Absent);
    expect![[r#"
        [
            "base block 64 x 64 x 64 of tiling.set_baseM(BASE_M); tiling.set_baseN(BASE_N); tiling.set_baseK(BASE_K) -> 128 x 256 x 64",
            "base block 64 x 64 x 64 of tiling.set_baseM(BASE_M); tiling.set_baseN(BASE_N); tiling.set_baseK(BASE_K) -> 128 x 128 x 64",
            "base block 64 x 64 x 64 of tiling.set_baseM(BASE_M); tiling.set_baseN(BASE_N); tiling.set_baseK(BASE_K) -> 64 x 128 x 64",
        ]
    "#]]
    .assert_debug_eq(&notes(&absent));
    let strong = TileShape.apply(&weak, &absent[0]).unwrap();
    expect![[r#"
        --- a/op_host/mm.cpp
        +++ b/op_host/mm.cpp
        @@ -1,8 +1,8 @@
         namespace optiling {
         namespace {
         // ascendopt:tiling-begin
        -constexpr uint32_t BASE_M = 64;  // ascendopt:knob choices=16,32,64,128,256
        -constexpr uint32_t BASE_N = 64;  // ascendopt:knob choices=16,32,64,128,256
        +constexpr uint32_t BASE_M = 128;  // ascendopt:knob choices=16,32,64,128,256
        +constexpr uint32_t BASE_N = 256;  // ascendopt:knob choices=16,32,64,128,256
         constexpr uint32_t BASE_K = 64;  // ascendopt:knob choices=16,32,64,128,256
         // ascendopt:tiling-end
         }  // namespace
    "#]]
    .assert_eq(&snapshot_diff(&weak, &strong));
    let present = sites(&strong, SiteState::Present);
    assert_eq!(present.len(), 1, "{present:?}");
    let back = TileShape.remove(&strong, &present[0]).unwrap();
    assert!(back
        .get("op_host/mm.cpp")
        .unwrap()
        .contains("BASE_N = 128;"));
}

#[test]
fn a_block_that_would_overflow_l0_is_not_offered() {
    // Two L0C buffers: 128 x 256 floats twice is 256 KB, over L0C's 128
    // KB, so the largest output block is 128 x 128.
    let kernel = HAND_KERNEL
        .replace("InitBuffer(qC, 1,", "InitBuffer(qC, 2,")
        .replace("TPosition::CO1, 1>", "TPosition::CO1, 2>");
    let pkg = Sources::from_files([
        ("op_host/mm.cpp", HAND_HOST),
        ("op_kernel/mm.cpp", kernel.as_str()),
    ]);
    let offered: Vec<String> = notes(&sites(&pkg, SiteState::Absent))
        .into_iter()
        .map(|n| n.rsplit("-> ").next().unwrap_or("").to_string())
        .collect();
    assert_eq!(offered, ["128 x 128 x 64", "64 x 128 x 64"]);
    // A baseK of 256: 64 x 256 halves twice fill L0A, so no side can grow
    // without baseK shrinking; the offered blocks shrink it to fit.
    let host = HAND_HOST.replace("BASE_K = 64;", "BASE_K = 256;");
    let pkg = Sources::from_files([
        ("op_host/mm.cpp", host.as_str()),
        ("op_kernel/mm.cpp", HAND_KERNEL),
    ]);
    for site in sites(&pkg, SiteState::Absent) {
        let big = TileShape.apply(&pkg, &site).unwrap();
        let text = big.get("op_host/mm.cpp").unwrap();
        assert!(!text.contains("BASE_K = 256;"), "{}\n{text}", site.note);
    }
    // A block that already fills L0B and L0C is offered nothing larger.
    let full = HAND_HOST
        .replace("BASE_M = 64;", "BASE_M = 128;")
        .replace("BASE_N = 64;", "BASE_N = 256;");
    let pkg = Sources::from_files([
        ("op_host/mm.cpp", full.as_str()),
        ("op_kernel/mm.cpp", HAND_KERNEL),
    ]);
    assert!(sites(&pkg, SiteState::Absent).is_empty());
    assert_eq!(sites(&pkg, SiteState::Present).len(), 1);
    // Every block any site offers fits.
    let budget = kernel_budget(&pkg).unwrap();
    for m in [16, 64, 128, 256] {
        for n in [16, 64, 128, 256] {
            let b = Block { m, n, k: 64 };
            let fits = fit::block_fits(&budget, b);
            assert_eq!(fits, m * n <= 128 * 256 && m <= 256 && n <= 256, "{b}");
        }
    }
}

#[test]
fn a_knobs_annotation_bounds_the_values_and_unknown_sides_only_shrink() {
    // BASE_N's annotation stops at 128: the ladder keeps within it.
    let host = HAND_HOST.replace(
        "BASE_N = 64;  // ascendopt:knob choices=16,32,64,128,256",
        "BASE_N = 64;  // ascendopt:knob choices=16,32,64,128",
    );
    let pkg = Sources::from_files([
        ("op_host/mm.cpp", host.as_str()),
        ("op_kernel/mm.cpp", HAND_KERNEL),
    ]);
    let offered: Vec<String> = notes(&sites(&pkg, SiteState::Absent))
        .into_iter()
        .map(|n| n.rsplit("-> ").next().unwrap_or("").to_string())
        .collect();
    assert_eq!(
        offered,
        ["256 x 128 x 64", "128 x 128 x 64", "64 x 128 x 64"]
    );
    // A runtime baseM (flash attention's rows) and a local baseN computed
    // from a constant: the constant shrinks, nothing grows.
    let flash = r#"namespace optiling {
namespace {
constexpr int32_t BASE_N = 256;
constexpr int32_t BASE_K = 32;
}  // namespace
bool CubeTiling(int32_t m, int32_t n, optiling::TCubeTiling& out)
{
    matmul_tiling::MatmulApiTiling t(platform);
    t.SetAType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT16);
    int32_t baseN = BASE_N < n ? BASE_N : (n + 15) / 16 * 16;
    t.SetFixSplit(m, baseN, BASE_K);
    return t.GetTiling(out) != -1;
}
}  // namespace optiling
"#;
    let pkg = Sources::from_files([("op_host/fa.cpp", flash)]);
    let all = TileShape.detect(&pkg);
    assert_eq!(all.len(), 1, "{all:?}");
    assert_eq!(
        all[0].note,
        "base block ? x 256 x 32 of t.SetFixSplit(m, baseN, BASE_K) -> ? x 128 x 32"
    );
    let weak = TileShape.remove(&pkg, &all[0]).unwrap();
    assert!(weak
        .get("op_host/fa.cpp")
        .unwrap()
        .contains("constexpr int32_t BASE_N = 128;"));
}

#[test]
fn budgets_follow_the_types_buffers_and_objects() {
    let b = Budget {
        elem: 2,
        db_a: 2,
        db_b: 2,
        db_c: 1,
        l1_a: 2,
        l1_b: 2,
        bias: 0,
        share: 1,
    };
    assert!(b.fits(128, 256, 64));
    assert!(!b.fits(128, 256, 80), "baseK 80 overflows L0B");
    assert!(!b.fits(256, 256, 64), "256 x 256 floats overflow L0C");
    assert!(!b.fits(120, 128, 64), "baseM must be a multiple of 16");
    // Two Matmul objects: half of each memory.
    let two = Budget {
        share: 2,
        ..b.clone()
    };
    assert!(!two.fits(128, 256, 64) && two.fits(128, 128, 64));
    // int8 needs baseK in 32s.
    let int8 = Budget { elem: 1, ..b };
    assert!(!int8.fits(128, 128, 48) && int8.fits(128, 128, 64));
}
