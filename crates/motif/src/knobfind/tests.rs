//! Tests of knob discovery on hosts in the styles real operators use.

use super::*;
use expect_test::expect;

/// A first-attempt host in the style of the samples: constants at
/// namespace scope, a hard-coded block dim, a literal tile count.
const NAIVE: &str = r#"#include "add_custom_tiling.h"
#include "register/op_def_registry.h"

namespace optiling {
const uint32_t BLOCK_DIM = 8;  // cores to use
const uint32_t TILE_LENGTH = 1024;
constexpr uint32_t ALIGN_NUM = 16;

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    TilingData tiling;
    uint32_t totalLength = context->GetInputShape(0)->GetOriginShape().GetShapeSize();
    uint32_t ubFactor = 3;
    uint32_t tileNum = totalLength / BLOCK_DIM / TILE_LENGTH;
    context->SetBlockDim(BLOCK_DIM);
    tiling.set_totalLength(totalLength);
    tiling.set_tileLength(TILE_LENGTH);
    tiling.set_tileNum(tileNum);
    tiling.set_ubFactor(ubFactor);
    tiling.set_align((totalLength + ALIGN_NUM - 1) / ALIGN_NUM);
    context->SetTilingKey(2);
    return ge::GRAPH_SUCCESS;
}
}
"#;

const HEADER: &str = "BEGIN_TILING_DATA_DEF(TilingData)\nTILING_DATA_FIELD_DEF(uint32_t, totalLength);\nTILING_DATA_FIELD_DEF(uint32_t, tileLength);\nEND_TILING_DATA_DEF;\n";

fn pkg(host: &str) -> Sources {
    Sources::from_files([
        ("op_host/k.cpp", host),
        ("op_host/k_tiling.h", HEADER),
        ("op_kernel/k.cpp", "int k;\n"),
    ])
}

fn found(host: &str) -> Vec<FoundKnob> {
    discover(&pkg(host), &ChipLimits::default()).knobs
}

#[test]
fn constants_and_literals_that_reach_the_block_dim_or_tiling_fields_are_found() {
    let knobs = found(NAIVE);
    let names: Vec<(&str, Role, usize)> = knobs
        .iter()
        .map(|k| (k.name.as_str(), k.role, k.line))
        .collect();
    assert_eq!(
        names,
        [
            ("BLOCK_DIM", Role::Cores, 5),
            ("TILE_LENGTH", Role::Size, 6),
            ("ASCENDOPT_UB_FACTOR", Role::Count, 13),
        ],
        "{knobs:#?}"
    );
    let cores = &knobs[0];
    assert_eq!((cores.min, cores.max), (1, 48));
    assert!(cores.sinks.contains(&"SetBlockDim".to_string()));
    // It also sets the tile count: both sinks are named.
    assert!(cores.sinks.iter().any(|s| s == "tiling field tileNum"));
    let tile = &knobs[1];
    assert_eq!(tile.step, Step::Pow2);
    assert_eq!((tile.min, tile.max), (1, 192 * 1024));
    // The alignment, the tiling key and the shape index are not knobs.
    assert!(knobs.iter().all(|k| k.value != 16 && k.value != 2));
    // Nor are the sizes of a rounding: `(n + 7) / 8 * 8`.
    let rounding = "namespace optiling {\nstatic ge::graphStatus TilingFunc(gert::TilingContext* context)\n{\n    uint32_t blockLength = (total + coreNum - 1) / coreNum;\n    blockLength = (blockLength + 7) / 8 * 8;\n    uint32_t tile = 512;\n    tiling.set_blockLength(blockLength);\n    tiling.set_tileLength(tile);\n    return ge::GRAPH_SUCCESS;\n}\n}\n";
    let labels: Vec<String> = found(rounding).into_iter().map(|k| k.label).collect();
    assert_eq!(labels, ["tile = 512"]);
}

#[test]
fn values_are_written_in_place_and_marked_regions_restore_to_the_plain_text() {
    let src = pkg(NAIVE);
    let knobs = discover(&src, &ChipLimits::default()).knobs;
    let moved = with_values(
        &src,
        &knobs,
        &BTreeMap::from([
            ("BLOCK_DIM".to_string(), 48),
            ("ASCENDOPT_UB_FACTOR".to_string(), 2),
        ]),
    )
    .unwrap();
    let host = moved.get("op_host/k.cpp").unwrap();
    // BLOCK_DIM = 48 and ubFactor = 2, written in place.
    expect![[r##"
        #include "add_custom_tiling.h"
        #include "register/op_def_registry.h"

        namespace optiling {
        const uint32_t BLOCK_DIM = 48;  // cores to use
        const uint32_t TILE_LENGTH = 1024;
        constexpr uint32_t ALIGN_NUM = 16;

        static ge::graphStatus TilingFunc(gert::TilingContext* context)
        {
            TilingData tiling;
            uint32_t totalLength = context->GetInputShape(0)->GetOriginShape().GetShapeSize();
            uint32_t ubFactor = 2;
            uint32_t tileNum = totalLength / BLOCK_DIM / TILE_LENGTH;
            context->SetBlockDim(BLOCK_DIM);
            tiling.set_totalLength(totalLength);
            tiling.set_tileLength(TILE_LENGTH);
            tiling.set_tileNum(tileNum);
            tiling.set_ubFactor(ubFactor);
            tiling.set_align((totalLength + ALIGN_NUM - 1) / ALIGN_NUM);
            context->SetTilingKey(2);
            return ge::GRAPH_SUCCESS;
        }
        }
    "##]]
    .assert_eq(host);

    let marked = knobbed(&src, &knobs, &BTreeMap::new()).unwrap();
    let text = marked.get("op_host/k.cpp").unwrap();
    let parsed =
        ascendopt_op::tiling::TilingSource::parse(std::path::Path::new("k.cpp"), text).unwrap();
    let got: Vec<(&str, i64)> = parsed
        .knobs
        .iter()
        .map(|k| (k.name.as_str(), k.value))
        .collect();
    assert_eq!(
        got,
        [
            ("BLOCK_DIM", 8),
            ("TILE_LENGTH", 1024),
            ("ASCENDOPT_UB_FACTOR", 3)
        ],
        "{text}"
    );
    // Every knob line can be read at run time by a parametrised build.
    assert!(parsed.parametrised(0).is_some(), "{text}");
    // The knobs' region, ubFactor read from ASCENDOPT_UB_FACTOR.
    expect![[r##"
        #include "add_custom_tiling.h"
        #include "register/op_def_registry.h"

        namespace optiling {
        // ascendopt:tiling-begin found: BLOCK_DIM (core count; SetBlockDim, tiling field tileNum) was: const uint32_t BLOCK_DIM = 8;
        // cores to use
        constexpr uint32_t BLOCK_DIM = 8; // ascendopt:knob min=1 max=48 step=1
        // ascendopt:tiling-end
        // ascendopt:tiling-begin found: TILE_LENGTH (tile or UB size; tiling field tileLength, tiling field tileNum) was: const uint32_t TILE_LENGTH = 1024;
        constexpr uint32_t TILE_LENGTH = 1024; // ascendopt:knob min=1 max=196608 step=pow2
        // ascendopt:tiling-end
        constexpr uint32_t ALIGN_NUM = 16;

        // ascendopt:tiling-begin found: ubFactor = 3 (count or split factor; tiling field ubFactor)
        constexpr int ASCENDOPT_UB_FACTOR = 3; // ascendopt:knob min=1 max=64 step=1
        // ascendopt:tiling-end
        static ge::graphStatus TilingFunc(gert::TilingContext* context)
        {
            TilingData tiling;
            uint32_t totalLength = context->GetInputShape(0)->GetOriginShape().GetShapeSize();
            uint32_t ubFactor = ASCENDOPT_UB_FACTOR;
            uint32_t tileNum = totalLength / BLOCK_DIM / TILE_LENGTH;
            context->SetBlockDim(BLOCK_DIM);
            tiling.set_totalLength(totalLength);
            tiling.set_tileLength(TILE_LENGTH);
            tiling.set_tileNum(tileNum);
            tiling.set_ubFactor(ubFactor);
            tiling.set_align((totalLength + ALIGN_NUM - 1) / ALIGN_NUM);
            context->SetTilingKey(2);
            return ge::GRAPH_SUCCESS;
        }
        }
    "##]].assert_eq(text);
    assert_eq!(restore(&marked), src);
    // A new value survives the round trip.
    let values = BTreeMap::from([
        ("TILE_LENGTH".to_string(), 4096),
        ("ASCENDOPT_UB_FACTOR".to_string(), 2),
    ]);
    let rendered = parsed.render_with(&values).unwrap();
    let mut again = marked.clone();
    again.set("op_host/k.cpp", rendered).unwrap();
    let plain = restore(&again);
    let host = plain.get("op_host/k.cpp").unwrap();
    // TILE_LENGTH = 4096 and ubFactor = 2, no marks left.
    expect![[r##"
        #include "add_custom_tiling.h"
        #include "register/op_def_registry.h"

        namespace optiling {
        const uint32_t BLOCK_DIM = 8;  // cores to use
        const uint32_t TILE_LENGTH = 4096;
        constexpr uint32_t ALIGN_NUM = 16;

        static ge::graphStatus TilingFunc(gert::TilingContext* context)
        {
            TilingData tiling;
            uint32_t totalLength = context->GetInputShape(0)->GetOriginShape().GetShapeSize();
            uint32_t ubFactor = 2;
            uint32_t tileNum = totalLength / BLOCK_DIM / TILE_LENGTH;
            context->SetBlockDim(BLOCK_DIM);
            tiling.set_totalLength(totalLength);
            tiling.set_tileLength(TILE_LENGTH);
            tiling.set_tileNum(tileNum);
            tiling.set_ubFactor(ubFactor);
            tiling.set_align((totalLength + ALIGN_NUM - 1) / ALIGN_NUM);
            context->SetTilingKey(2);
            return ge::GRAPH_SUCCESS;
        }
        }
    "##]]
    .assert_eq(host);
}

#[test]
fn helper_functions_fields_and_defines_carry_the_flow() {
    let host = r#"#define CORE_CAP 8
namespace optiling {
struct Plan { uint32_t cores; uint32_t tile; };
static void MakePlan(uint32_t total, Plan& plan)
{
    uint32_t t = 2048;
    plan.cores = total < CORE_CAP ? total : CORE_CAP;
    plan.tile = t;
}
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    Plan plan;
    MakePlan(100000, plan);
    context->SetBlockDim(plan.cores);
    tiling.set_tileLength(plan.tile);
    return ge::GRAPH_SUCCESS;
}
}
"#;
    let knobs = found(host);
    let got: Vec<(&str, Role)> = knobs.iter().map(|k| (k.label.as_str(), k.role)).collect();
    assert_eq!(
        got,
        [("CORE_CAP", Role::Cores), ("t = 2048", Role::Size)],
        "{knobs:#?}"
    );
    let src = pkg(host);
    let marked = knobbed(&src, &knobs, &BTreeMap::new()).unwrap();
    let text = marked.get("op_host/k.cpp").unwrap();
    // CORE_CAP and t read from their knobs.
    expect![[r#"
        // ascendopt:tiling-begin found: CORE_CAP (core count; SetBlockDim)
        constexpr int ASCENDOPT_CORE_CAP = 8; // ascendopt:knob min=1 max=48 step=1
        // ascendopt:tiling-end
        #define CORE_CAP ASCENDOPT_CORE_CAP
        namespace optiling {
        struct Plan { uint32_t cores; uint32_t tile; };
        // ascendopt:tiling-begin found: t = 2048 (tile or UB size; tiling field tileLength)
        constexpr int ASCENDOPT_T = 2048; // ascendopt:knob min=1 max=196608 step=pow2
        // ascendopt:tiling-end
        static void MakePlan(uint32_t total, Plan& plan)
        {
            uint32_t t = ASCENDOPT_T;
            plan.cores = total < CORE_CAP ? total : CORE_CAP;
            plan.tile = t;
        }
        static ge::graphStatus TilingFunc(gert::TilingContext* context)
        {
            Plan plan;
            MakePlan(100000, plan);
            context->SetBlockDim(plan.cores);
            tiling.set_tileLength(plan.tile);
            return ge::GRAPH_SUCCESS;
        }
        }
    "#]]
    .assert_eq(text);
    assert_eq!(restore(&marked), src);
}

#[test]
fn constants_inside_user_regions_stay_the_users() {
    let host = "namespace {\n// ascendopt:tiling-begin\nconstexpr uint32_t MAX_CORE_NUM = 48; // ascendopt:knob min=1 max=48 step=1\n// ascendopt:tiling-end\nconstexpr uint32_t BUFFER_NUM = 2;\n}\nvoid TilingFunc(gert::TilingContext* context) {\n    context->SetBlockDim(MAX_CORE_NUM);\n    tiling.set_bufferNum(BUFFER_NUM);\n}\n";
    let knobs = found(host);
    let got: Vec<(&str, Role)> = knobs.iter().map(|k| (k.name.as_str(), k.role)).collect();
    assert_eq!(got, [("BUFFER_NUM", Role::Buffers)]);
    assert_eq!((knobs[0].min, knobs[0].max), (1, 2));
}

/// The shape of a public elementwise sample's host tiling (written here):
/// the element width is set per data type, the core count is the
/// platform's, capped by the number of 32-byte blocks of the tensor (the
/// width divides the size on the way), and a literal core cap clamps it.
const WIDTH_PER_DTYPE: &str = r#"namespace optiling {
constexpr int32_t BUFFER_NUM = 2;
constexpr int32_t REPEAT_BYTES = 256;
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint32_t coreNum = platform.GetCoreNumAiv();
    uint64_t total = context->GetInputShape(0)->GetStorageShape().GetShapeSize();
    auto dt = context->GetInputTensor(0)->GetDataType();
    uint32_t width = 4;
    uint32_t factor = 2;
    if (dt == ge::DT_FLOAT16) {
        width = 2;
        factor = 3;
    } else if (dt == ge::DT_INT64) {
        width = 8;
    }
    uint32_t perBlock = 32 / width;
    uint32_t blocks = (total + perBlock - 1) / perBlock;
    coreNum = (coreNum < blocks / 4) ? coreNum : blocks / 4;
    uint32_t coreCap = 16;
    coreNum = coreNum < coreCap ? coreNum : coreCap;
    uint32_t tile = 65536 / (REPEAT_BYTES * factor) / BUFFER_NUM;
    context->SetBlockDim(coreNum);
    tiling.set_blockLength(blocks / coreNum * perBlock);
    tiling.set_tileLength(tile * REPEAT_BYTES / width);
    return ge::GRAPH_SUCCESS;
}
}
"#;

#[test]
fn a_width_that_divides_the_size_on_its_way_to_the_block_dim_is_no_core_count() {
    let knobs = found(WIDTH_PER_DTYPE);
    let got: Vec<(&str, Role)> = knobs.iter().map(|k| (k.label.as_str(), k.role)).collect();
    // The width and the factor are set per dtype: not knobs. The divisor
    // 4 reaches the block dim only through a division: a count, not the
    // core count. The literal cap reaches it as a value: the core count.
    assert!(
        got.iter()
            .all(|(l, _)| !l.starts_with("width") && !l.starts_with("factor")),
        "{knobs:#?}"
    );
    let cores: Vec<&str> = got
        .iter()
        .filter(|(_, r)| *r == Role::Cores)
        .map(|(l, _)| *l)
        .collect();
    assert_eq!(cores, ["coreCap = 16"], "{knobs:#?}");
    assert!(got.contains(&("BUFFER_NUM", Role::Buffers)), "{knobs:#?}");
    // An element width named as a constant is no tile size either.
    let named = "namespace optiling {\nconstexpr uint32_t ELEM_BYTES = 4;\nconstexpr uint32_t TILE_BYTES = 8192;\nstatic ge::graphStatus TilingFunc(gert::TilingContext* context)\n{\n    tiling.set_tileLength(TILE_BYTES / ELEM_BYTES);\n    return ge::GRAPH_SUCCESS;\n}\n}\n";
    let labels: Vec<String> = found(named).into_iter().map(|k| k.label).collect();
    assert_eq!(labels, ["TILE_BYTES"]);
}

#[test]
fn where_the_user_annotated_a_role_no_knob_of_that_role_is_added() {
    // Tile sizing is annotated: a queue count dividing the UB is not
    // searched as well; the buffer count is not annotated: found.
    let host = "namespace {\nconstexpr uint32_t QUEUE_NUM = 3;\nconstexpr uint32_t BUFFER_NUM = 2;\n// ascendopt:tiling-begin\nconstexpr uint32_t TILE_BYTES = 32768; // ascendopt:knob min=1024 max=65536 step=pow2\n// ascendopt:tiling-end\n}\nvoid TilingFunc(gert::TilingContext* context) {\n    uint64_t ub = 196608 / QUEUE_NUM;\n    tiling.set_tileLength(ub < TILE_BYTES ? ub : TILE_BYTES);\n    tiling.set_bufferNum(BUFFER_NUM);\n}\n";
    let got: Vec<(String, Role)> = found(host).into_iter().map(|k| (k.name, k.role)).collect();
    assert_eq!(got, [("BUFFER_NUM".to_string(), Role::Buffers)]);
}

/// An unannotated Matmul host in the style of the guide's samples: the
/// base block, the L1 space and the cores reach the TCubeTiling only
/// through the Matmul tiling's setters and GetTiling.
const MATMUL: &str = r#"#include "mm_tiling.h"
#include "register/op_def_registry.h"
#include "tiling/tiling_api.h"

namespace optiling {
constexpr int32_t BASE_M = 128;
constexpr int32_t BASE_N = 256;
constexpr int32_t L1_SPACE = 262144;
constexpr uint32_t MAX_VEC_CORES = 40;

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    auto ascendcPlatform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint32_t vecCores = ascendcPlatform.GetCoreNumAiv();
    if (vecCores > MAX_VEC_CORES) {
        vecCores = MAX_VEC_CORES;
    }
    matmul_tiling::MultiCoreMatmulTiling cubeTiling(ascendcPlatform);
    cubeTiling.SetDim(vecCores);
    cubeTiling.SetShape(1024, 1024, 512);
    cubeTiling.SetFixSplit(BASE_M, BASE_N, -1);
    cubeTiling.SetBufferSpace(L1_SPACE, -1, -1);
    MmTilingData tiling;
    cubeTiling.GetTiling(tiling.cubeTilingData);
    context->SetBlockDim((tiling.cubeTilingData.usedCoreNum + 1) / 2);
    return ge::GRAPH_SUCCESS;
}
}
"#;

#[test]
fn the_matmul_tiling_setters_make_base_blocks_l1_space_and_cores_knobs() {
    let knobs = found(MATMUL);
    let got: Vec<(&str, Role, i64, i64)> = knobs
        .iter()
        .map(|k| (k.name.as_str(), k.role, k.min, k.max))
        .collect();
    assert!(got.contains(&("BASE_M", Role::Size, 16, 512)), "{got:?}");
    assert!(got.contains(&("BASE_N", Role::Size, 16, 512)), "{got:?}");
    assert!(
        got.iter().any(|k| k.0 == "L1_SPACE" && k.1 == Role::Size),
        "{got:?}"
    );
    assert!(
        got.iter()
            .any(|k| k.0 == "MAX_VEC_CORES" && k.1 == Role::Cores),
        "{got:?}"
    );
    let base_m = knobs
        .iter()
        .find(|k| k.name == "BASE_M")
        .map(|k| k.candidates());
    assert_eq!(
        base_m.as_ref().map(|c| c[..3].to_vec()),
        Some(vec![16, 32, 48])
    );
}

/// A kernel that fixes the Matmul base block at compile time (the guide's
/// tiling constantisation): basicM/N/K are the 4th to 6th values.
fn matmul_pkg(kernel: &str) -> Sources {
    Sources::from_files([
        ("op_host/k.cpp", MATMUL),
        ("op_host/k_tiling.h", HEADER),
        ("op_kernel/k.cpp", kernel),
    ])
}

const CONSTANT_BASE_KERNEL: &str = r#"#include "kernel_operator.h"
#include "lib/matmul_intf.h"
constexpr matmul::MatmulShapeParams SHAPE = {0, 0, 0, 128, 256, 64};
constexpr matmul::MatmulConfig CFG = matmul::GetMMConfig<matmul::MatmulConfigMode::CONFIG_NORM>(SHAPE);
"#;

#[test]
fn a_base_block_the_kernel_fixes_at_compile_time_is_not_a_knob() {
    let d = discover(&matmul_pkg(CONSTANT_BASE_KERNEL), &ChipLimits::default());
    let names: Vec<&str> = d.knobs.iter().map(|k| k.name.as_str()).collect();
    assert!(
        !names.contains(&"BASE_M") && !names.contains(&"BASE_N"),
        "{names:?}"
    );
    assert!(
        names.contains(&"L1_SPACE") && names.contains(&"MAX_VEC_CORES"),
        "{names:?}"
    );
    expect_test::expect![[r#"
        [
            "BASE_M (op_host/k.cpp:6): the kernel fixes the Matmul base block at compile time (op_kernel/k.cpp:3); a host value other than the kernel's cannot run on the chip",
            "BASE_N (op_host/k.cpp:7): the kernel fixes the Matmul base block at compile time (op_kernel/k.cpp:3); a host value other than the kernel's cannot run on the chip",
        ]
    "#]]
    .assert_debug_eq(&d.not_knobs);
}

#[test]
fn the_other_forms_of_a_constant_base_block_are_recognised_and_zeros_are_not() {
    let fixed = |kernel: &str| {
        let d = discover(&matmul_pkg(kernel), &ChipLimits::default());
        !d.not_knobs.is_empty()
    };
    assert!(fixed(
        "constexpr auto CFG = GetBasicConfig(128, 128, 64);\n"
    ));
    assert!(fixed(
        "constexpr auto T = matmul::GetMatmulApiTiling<A, B, C, Bias>(CFG);\n"
    ));
    assert!(fixed(
        "constexpr MatmulConfig make() { MatmulConfig c = CFG_NORM; c.basicM = 128; return c; }\n"
    ));
    // basicM/N/K of 0 leave the base block to the runtime tiling.
    assert!(!fixed(
        "constexpr matmul::MatmulShapeParams SHAPE = {1024, 640, 256, 0, 0, 0};\n"
    ));
    assert!(!fixed(
        "constexpr matmul::MatmulShapeParams SHAPE = {1024, 640, 256};\n"
    ));
    assert!(!fixed("int k;\n"));
}

/// What the finder makes of the built-in Matmul hosts once their knob
/// annotations are stripped (issue 27 item 5: the Stage II knobs of a
/// Matmul tiling nobody annotated).
#[test]
fn the_builtin_matmul_hosts_without_annotations_give_their_tiling_knobs() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ops");
    let mut report = String::new();
    for op in ["matmul_all_reduce", "matmul_api_constant"] {
        let pkg = Sources::load(&root.join(op)).unwrap();
        let mut plain = pkg.clone();
        for (path, text) in pkg.host_files() {
            let stripped: String = text
                .split_inclusive('\n')
                .filter(|l| !l.contains("ascendopt:tiling-"))
                .map(|l| match l.find("// ascendopt:knob") {
                    Some(at) => format!("{}\n", l[..at].trim_end()),
                    None => l.to_string(),
                })
                .collect();
            plain.set(path, stripped).unwrap();
        }
        let d = discover(&plain, &ChipLimits::default());
        report.push_str(&format!("{op}:\n"));
        for k in &d.knobs {
            report.push_str(&format!(
                "  {} = {} {:?} [{}, {}] -> {}\n",
                k.name,
                k.value,
                k.role,
                k.min,
                k.max,
                k.sinks.join(", ")
            ));
        }
        for n in &d.not_knobs {
            report.push_str(&format!("  not a knob: {n}\n"));
        }
    }
    expect![[r#"
        matmul_all_reduce:
          BASE_M = 128 Size [16, 512] -> tiling field baseM
          BASE_N = 256 Size [16, 512] -> tiling field baseN
          TRAVERSE = 1 Count [1, 2] -> tiling field iterateOrder
          MAX_VEC_CORES = 48 Cores [1, 48] -> SetBlockDim
          L1_DB = 2 Buffers [1, 2] -> tiling field depthA1, tiling field depthB1
        matmul_api_constant:
          TRAVERSE = 1 Count [1, 2] -> tiling field iterateOrder
          MAX_VEC_CORES = 48 Cores [1, 48] -> SetBlockDim
          L1_DB = 2 Buffers [1, 2] -> tiling field depthA1, tiling field depthB1
          not a knob: BASE_M (op_host/matmul_api_constant.cpp:37): the kernel fixes the Matmul base block at compile time (op_kernel/matmul_api_constant.cpp:16); a host value other than the kernel's cannot run on the chip
          not a knob: BASE_N (op_host/matmul_api_constant.cpp:38): the kernel fixes the Matmul base block at compile time (op_kernel/matmul_api_constant.cpp:16); a host value other than the kernel's cannot run on the chip
          not a knob: BASE_K (op_host/matmul_api_constant.cpp:39): the kernel fixes the Matmul base block at compile time (op_kernel/matmul_api_constant.cpp:16); a host value other than the kernel's cannot run on the chip
    "#]].assert_eq(&report);
}
