//! Unit tests of the block order motif on kernels and hosts written for
//! the tests.

use super::*;
use crate::{snapshot_diff, Motif, Site};
use expect_test::expect;

/// A Matmul API kernel's placement of its core's block, M first (the shape
/// of the built-in Matmul packages).
const M_FIRST: &str = r#"extern "C" __global__ __aicore__ void mm(GM_ADDR a, GM_ADDR tiling)
{
    const TCubeTiling& t = tilingData.cubeTilingData;
    const int32_t idx = static_cast<int32_t>(GetBlockIdx());
    const int32_t mBlocks = (t.M + t.singleCoreM - 1) / t.singleCoreM;
    const int32_t mi = idx % mBlocks;
    const int32_t ni = idx / mBlocks;
    const int32_t m0 = mi * t.singleCoreM;
    const int32_t n0 = ni * t.singleCoreN;
    Run(m0, n0);
}
"#;

fn sites_of(text: &str) -> (Sources, Vec<Site>) {
    let pkg = Sources::from_files([("op_kernel/mm.cpp", text)]);
    let sites = BlockOrder.detect(&pkg);
    (pkg, sites)
}

#[test]
fn an_m_first_split_goes_row_major_and_is_offered_the_other_orders() {
    let (strong, sites) = sites_of(M_FIRST);
    let seen: Vec<(usize, SiteState, &str)> = sites
        .iter()
        .map(|s| (s.line, s.state, s.note.as_str()))
        .collect();
    assert_eq!(
        seen,
        vec![
            (
                7,
                SiteState::Present,
                "blocks of idx numbered M first (idx / mBlocks) -> row-major"
            ),
            (
                7,
                SiteState::Absent,
                "blocks of idx numbered M first (idx / mBlocks) -> row-major (N first)"
            ),
            (
                7,
                SiteState::Absent,
                "blocks of idx numbered M first (idx / mBlocks) -> groups of 2 block rows, zig-zag"
            ),
            (
                7,
                SiteState::Absent,
                "blocks of idx numbered M first (idx / mBlocks) -> groups of 4 block rows, zig-zag"
            ),
        ]
    );
    let weak = BlockOrder.remove(&strong, &sites[0]).unwrap();
    expect![[r#"
        --- a/op_kernel/mm.cpp
        +++ b/op_kernel/mm.cpp
        @@ -3,8 +3,9 @@
             const TCubeTiling& t = tilingData.cubeTilingData;
             const int32_t idx = static_cast<int32_t>(GetBlockIdx());
             const int32_t mBlocks = (t.M + t.singleCoreM - 1) / t.singleCoreM;
        -    const int32_t mi = idx % mBlocks;
        -    const int32_t ni = idx / mBlocks;
        +    const int32_t nBlocks = (t.N + t.singleCoreN - 1) / t.singleCoreN;
        +    const int32_t mi = idx / nBlocks;
        +    const int32_t ni = idx % nBlocks;
             const int32_t m0 = mi * t.singleCoreM;
             const int32_t n0 = ni * t.singleCoreN;
             Run(m0, n0);
    "#]]
    .assert_eq(&snapshot_diff(&strong, &weak));
    // Row-major offers M first back (the kernel as it was, with the N
    // count it gained) and the grouped orders.
    let (_, back_sites) = sites_of(weak.get("op_kernel/mm.cpp").unwrap());
    let notes: Vec<&str> = back_sites.iter().map(|s| s.note.as_str()).collect();
    assert_eq!(
        notes,
        vec![
            "blocks of idx numbered row-major (N first) (idx / nBlocks) -> M first",
            "blocks of idx numbered row-major (N first) (idx / nBlocks) -> groups of 2 block rows, zig-zag",
            "blocks of idx numbered row-major (N first) (idx / nBlocks) -> groups of 4 block rows, zig-zag",
        ]
    );
    assert!(back_sites.iter().all(|s| s.state == SiteState::Absent));
    let back = BlockOrder.apply(&weak, &back_sites[0]).unwrap();
    let k = back.get("op_kernel/mm.cpp").unwrap();
    assert!(k.contains("const int32_t mi = idx % mBlocks;"), "{k}");
    assert!(k.contains("const int32_t ni = idx / mBlocks;"), "{k}");
}

#[test]
fn the_grouped_order_is_written_and_removed_to_row_major() {
    let (strong, sites) = sites_of(M_FIRST);
    let to_groups = sites
        .iter()
        .find(|s| s.note.ends_with("groups of 4 block rows, zig-zag"))
        .unwrap();
    let grouped = BlockOrder.apply(&strong, to_groups).unwrap();
    expect![[r#"
        --- a/op_kernel/mm.cpp
        +++ b/op_kernel/mm.cpp
        @@ -3,8 +3,18 @@
             const TCubeTiling& t = tilingData.cubeTilingData;
             const int32_t idx = static_cast<int32_t>(GetBlockIdx());
             const int32_t mBlocks = (t.M + t.singleCoreM - 1) / t.singleCoreM;
        -    const int32_t mi = idx % mBlocks;
        -    const int32_t ni = idx / mBlocks;
        +    const int32_t nBlocks = (t.N + t.singleCoreN - 1) / t.singleCoreN;
        +    // Block order: groups of 4 block rows, M first inside a group, every other group's columns reversed.
        +    const int64_t ascSwzIdx = idx;
        +    const int64_t ascSwzRowsM = mBlocks;
        +    const int64_t ascSwzColsN = nBlocks;
        +    const int64_t ascSwzGroup = ascSwzIdx / (4 * ascSwzColsN);
        +    const int64_t ascSwzRank = ascSwzIdx % (4 * ascSwzColsN);
        +    const int64_t ascSwzRows = ascSwzRowsM - ascSwzGroup * 4 < 4 ? ascSwzRowsM - ascSwzGroup * 4 : 4;
        +    const int64_t ascSwzM = ascSwzIdx < ascSwzRowsM * ascSwzColsN ? ascSwzGroup * 4 + ascSwzRank % ascSwzRows : ascSwzIdx / ascSwzColsN;
        +    const int64_t ascSwzN = ascSwzIdx >= ascSwzRowsM * ascSwzColsN ? ascSwzIdx % ascSwzColsN : ascSwzGroup % 2 == 0 ? ascSwzRank / ascSwzRows : ascSwzColsN - 1 - ascSwzRank / ascSwzRows;
        +    const int32_t mi = ascSwzM;
        +    const int32_t ni = ascSwzN;
             const int32_t m0 = mi * t.singleCoreM;
             const int32_t n0 = ni * t.singleCoreN;
             Run(m0, n0);
    "#]]
    .assert_eq(&snapshot_diff(&strong, &grouped));
    let (_, gsites) = sites_of(grouped.get("op_kernel/mm.cpp").unwrap());
    let present: Vec<&Site> = gsites
        .iter()
        .filter(|s| s.state == SiteState::Present)
        .collect();
    assert_eq!(present.len(), 1, "{gsites:#?}");
    assert_eq!(
        present[0].note,
        "blocks of idx in groups of 4 block rows, zig-zag -> row-major"
    );
    let row_major = BlockOrder.remove(&grouped, present[0]).unwrap();
    expect![[r#"
        --- a/op_kernel/mm.cpp
        +++ b/op_kernel/mm.cpp
        @@ -4,17 +4,8 @@
             const int32_t idx = static_cast<int32_t>(GetBlockIdx());
             const int32_t mBlocks = (t.M + t.singleCoreM - 1) / t.singleCoreM;
             const int32_t nBlocks = (t.N + t.singleCoreN - 1) / t.singleCoreN;
        -    // Block order: groups of 4 block rows, M first inside a group, every other group's columns reversed.
        -    const int64_t ascSwzIdx = idx;
        -    const int64_t ascSwzRowsM = mBlocks;
        -    const int64_t ascSwzColsN = nBlocks;
        -    const int64_t ascSwzGroup = ascSwzIdx / (4 * ascSwzColsN);
        -    const int64_t ascSwzRank = ascSwzIdx % (4 * ascSwzColsN);
        -    const int64_t ascSwzRows = ascSwzRowsM - ascSwzGroup * 4 < 4 ? ascSwzRowsM - ascSwzGroup * 4 : 4;
        -    const int64_t ascSwzM = ascSwzIdx < ascSwzRowsM * ascSwzColsN ? ascSwzGroup * 4 + ascSwzRank % ascSwzRows : ascSwzIdx / ascSwzColsN;
        -    const int64_t ascSwzN = ascSwzIdx >= ascSwzRowsM * ascSwzColsN ? ascSwzIdx % ascSwzColsN : ascSwzGroup % 2 == 0 ? ascSwzRank / ascSwzRows : ascSwzColsN - 1 - ascSwzRank / ascSwzRows;
        -    const int32_t mi = ascSwzM;
        -    const int32_t ni = ascSwzN;
        +    const int32_t mi = idx / nBlocks;
        +    const int32_t ni = idx % nBlocks;
             const int32_t m0 = mi * t.singleCoreM;
             const int32_t n0 = ni * t.singleCoreN;
             Run(m0, n0);
    "#]]
    .assert_eq(&snapshot_diff(&grouped, &row_major));
}

/// The grouped order's index mapping, run here as the C++ computes it: a
/// permutation of the blocks, zig-zag in N across groups, indices past the
/// blocks kept row-major.
#[test]
fn the_grouped_order_is_a_permutation_of_the_blocks() {
    let map = |idx: i64, mb: i64, nb: i64, g: i64| {
        let group = idx / (g * nb);
        let rank = idx % (g * nb);
        let rows = if mb - group * g < g {
            mb - group * g
        } else {
            g
        };
        let inside = idx < mb * nb;
        let m = if inside {
            group * g + rank % rows
        } else {
            idx / nb
        };
        let n = if !inside {
            idx % nb
        } else if group % 2 == 0 {
            rank / rows
        } else {
            nb - 1 - rank / rows
        };
        (m, n)
    };
    for (mb, nb, g) in [(5, 3, 2), (8, 4, 4), (1, 7, 4), (7, 1, 2), (6, 6, 4)] {
        let mut seen: Vec<(i64, i64)> = (0..mb * nb).map(|i| map(i, mb, nb, g)).collect();
        seen.sort();
        let all: Vec<(i64, i64)> = (0..mb).flat_map(|m| (0..nb).map(move |n| (m, n))).collect();
        assert_eq!(seen, all, "{mb} x {nb}, groups of {g}");
        // Past the blocks: row-major, so M is past the last block row.
        for past in mb * nb..mb * nb + 2 * g * nb {
            assert!(map(past, mb, nb, g).0 >= mb, "{past}");
        }
    }
    // The guide-like picture: 5 x 3 blocks, groups of 2: 0 (0,0), 1 (1,0),
    // 2 (0,1) ... then the second group runs N backwards.
    let order: Vec<(i64, i64)> = (0..8).map(|i| map(i, 5, 3, 2)).collect();
    assert_eq!(
        order,
        vec![
            (0, 0),
            (1, 0),
            (0, 1),
            (1, 1),
            (0, 2),
            (1, 2),
            (2, 2),
            (3, 2)
        ]
    );
}

#[test]
fn unknown_axes_calls_and_missing_counts_give_no_site() {
    // A count whose name says no axis.
    let odd = M_FIRST.replace("mBlocks", "blocks");
    assert!(sites_of(&odd).1.is_empty());
    // An index that is a call.
    let call = M_FIRST
        .replace("idx % mBlocks", "GetBlockIdx() % mBlocks")
        .replace("idx / mBlocks", "GetBlockIdx() / mBlocks");
    assert!(sites_of(&call).1.is_empty());
    // A count that is a member (no declaration to swap).
    let member = M_FIRST.replace(
        "    const int32_t mBlocks = (t.M + t.singleCoreM - 1) / t.singleCoreM;\n",
        "",
    );
    assert!(sites_of(&member).1.is_empty());
    // An N count already declared with another value.
    let clash = M_FIRST.replace(
        "    const int32_t mi",
        "    const int32_t nBlocks = 3;\n    const int32_t mi",
    );
    let (_, sites) = sites_of(&clash);
    assert!(sites.is_empty(), "{sites:#?}");
}

#[test]
fn set_traverse_and_iterate_order_flip() {
    let host = r#"namespace optiling {
namespace {
constexpr int32_t TRAVERSE = 1;  // ascendopt:knob choices=1,2
}
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    cubeTiling.SetTraverse(static_cast<matmul_tiling::MatrixTraverse>(TRAVERSE));
    other.SetTraverse(matmul_tiling::MatrixTraverse::FIRSTN);
    return ge::GRAPH_SUCCESS;
}
}
"#;
    let pkg = Sources::from_files([("op_host/mm.cpp", host)]);
    let sites = BlockOrder.detect(&pkg);
    let seen: Vec<(usize, SiteState)> = sites.iter().map(|s| (s.line, s.state)).collect();
    assert_eq!(
        seen,
        vec![
            (7, SiteState::Present),
            (7, SiteState::Absent),
            (8, SiteState::Absent)
        ],
        "{sites:#?}"
    );
    let weak = BlockOrder.remove(&pkg, &sites[0]).unwrap();
    expect![[r#"
        --- a/op_host/mm.cpp
        +++ b/op_host/mm.cpp
        @@ -1,6 +1,6 @@
         namespace optiling {
         namespace {
        -constexpr int32_t TRAVERSE = 1;  // ascendopt:knob choices=1,2
        +constexpr int32_t TRAVERSE = 2;  // ascendopt:knob choices=1,2
         }
         static ge::graphStatus TilingFunc(gert::TilingContext* context)
         {
    "#]]
    .assert_eq(&snapshot_diff(&pkg, &weak));
    let m_first = BlockOrder.apply(&pkg, &sites[2]).unwrap();
    assert!(m_first
        .get("op_host/mm.cpp")
        .unwrap()
        .contains("other.SetTraverse(matmul_tiling::MatrixTraverse::FIRSTM);"));
    // A kernel that fixes the order in its MatmulConfig: the host's is
    // moot, the kernel's flips.
    let kernel = "constexpr MatmulConfig CFG = GetNormalConfig(false, false, false, BatchMode::NONE, true, IterateOrder::ORDER_M);\n";
    let both = Sources::from_files([("op_host/mm.cpp", host), ("op_kernel/mm.cpp", kernel)]);
    let sites = BlockOrder.detect(&both);
    assert!(
        sites.iter().all(|s| s.file == "op_kernel/mm.cpp"),
        "{sites:#?}"
    );
    assert_eq!(sites.len(), 2);
    let n_first = BlockOrder.remove(&both, &sites[0]).unwrap();
    assert!(n_first
        .get("op_kernel/mm.cpp")
        .unwrap()
        .contains("IterateOrder::ORDER_N)"));
}
