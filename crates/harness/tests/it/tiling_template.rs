//! Tiling templates through the whole evaluation (guide 2.10.2.5.5, 6.4.6):
//! a copy of add_custom whose kernel entry is a function template over a
//! data-type and a bool parameter declared with ASCENDC_TPL_ARGS_DECL /
//! ASCENDC_TPL_SEL in op_kernel/tiling_key_add_custom.h (written here for
//! the test), whose host sets the key with ASCENDC_TPL_SEL_PARAM, builds,
//! passes both cases (each launch runs the instance its key selects), and
//! fails with the reason when the host asks for a combination the
//! selection leaves out or sets a key by hand that selects no instance.
//! The float32 instances register a struct of their own
//! (REGISTER_TILING_FOR_TILINGKEY with a condition over the template
//! parameters), which GET_TILING_DATA reads there and nowhere else (checked
//! at compile time in the kernel).

use ascendopt_harness::pipeline::evaluate_package;
use ascendopt_harness::verdict::Verdict;
use ascendopt_op::package::OpPackage;

use crate::common;

/// The parameters: the input's data type and whether the tiling split the
/// work over more than 8 cores; `sel_f32_split` is the SPLIT values the
/// float32 combination selects.
fn key_header(sel_f32_split: &str) -> String {
    format!(
        r#"#ifndef TILING_KEY_ADD_CUSTOM_TEST_H
#define TILING_KEY_ADD_CUSTOM_TEST_H
#include "ascendc/host_api/tiling/template_argument.h"

// The float32 instances' own tiling struct: add_custom's fields, in order.
struct AddCustomTilingF32 {{
    uint32_t totalLength, unitLength, blockUnits, tailCoreNum, tileLength, bufferNum;
}};

ASCENDC_TPL_ARGS_DECL(AddCustom,
    ASCENDC_TPL_DATATYPE_DECL(D_T_X, C_DT_FLOAT16, C_DT_FLOAT, C_DT_INT32, ASCENDC_TPL_INPUT(0)),
    ASCENDC_TPL_BOOL_DECL(SPLIT, 0, 1),
);

ASCENDC_TPL_SEL(
    ASCENDC_TPL_ARGS_SEL(
        ASCENDC_TPL_KERNEL_TYPE_SEL(ASCENDC_TPL_AIV_ONLY),
        ASCENDC_TPL_DATATYPE_SEL(D_T_X, C_DT_FLOAT16, C_DT_INT32),
        ASCENDC_TPL_BOOL_SEL(SPLIT, 0, 1),
    ),
    ASCENDC_TPL_ARGS_SEL(
        ASCENDC_TPL_KERNEL_TYPE_SEL(ASCENDC_TPL_AIV_ONLY),
        ASCENDC_TPL_DATATYPE_SEL(D_T_X, C_DT_FLOAT),
        ASCENDC_TPL_BOOL_SEL(SPLIT, {sel_f32_split}),
        ASCENDC_TPL_TILING_STRUCT_SEL(AddCustomTilingF32)
    ),
);
#endif
"#
    )
}

const HOST_KEY: &str = "    context->SetTilingKey(key);";

fn host_with(set_key: &'static str) -> impl Fn(&str) -> String {
    move |code: &str| {
        assert!(code.contains(HOST_KEY), "add_custom's host sets its key");
        code.replace(
            "#include \"add_custom_tiling.h\"",
            "#include \"add_custom_tiling.h\"\n#include \"tiling_key_add_custom.h\"",
        )
        .replace(HOST_KEY, set_key)
    }
}

const TEMPLATE_KEY: &str = "    (void)key;\n    uint32_t dtX = static_cast<uint32_t>(xDesc->GetDataType());\n    uint32_t split = plan.coreNum > 8 ? 1 : 0;\n    ASCENDC_TPL_SEL_PARAM(context, dtX, split);";

const ENTRY: &str =
    "extern \"C\" __global__ __aicore__ void add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR workspace, GM_ADDR tiling)";

fn template_kernel(code: &str) -> String {
    assert!(code.contains(ENTRY), "add_custom's kernel entry");
    code.replace(
        "#include \"kernel_operator.h\"",
        "#include \"kernel_operator.h\"\n#include \"tiling_key_add_custom.h\"",
    )
    .replace(
        ENTRY,
        "template <int D_T_X, bool SPLIT>\n__global__ __aicore__ void add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR workspace, GM_ADDR tiling)",
    )
    .replace(
        "    GET_TILING_DATA(tilingData, tiling);",
        "    REGISTER_TILING_FOR_TILINGKEY(\"D_T_X == C_DT_FLOAT\", AddCustomTilingF32);\n    GET_TILING_DATA(tilingData, tiling);\n    static_assert((D_T_X == C_DT_FLOAT) == std::is_same<decltype(tilingData), AddCustomTilingF32>::value, \"the float32 instances read their own struct\");",
    )
    .replace("TILING_KEY_IS(1)", "D_T_X == C_DT_FLOAT16")
    .replace("TILING_KEY_IS(2)", "D_T_X == C_DT_FLOAT")
    .replace("TILING_KEY_IS(3)", "D_T_X == C_DT_INT32")
}

fn package(sel_f32_split: &str, set_key: &'static str) -> (tempfile::TempDir, OpPackage) {
    let dir = tempfile::Builder::new()
        .prefix("add_template")
        .tempdir()
        .unwrap();
    let root =
        ascendopt_testkit::small_add_custom(dir.path(), &host_with(set_key), &template_kernel);
    let kernel = std::fs::read_to_string(root.join("op_kernel/add_custom.cpp")).unwrap();
    assert!(
        kernel.contains("template <int D_T_X, bool SPLIT>"),
        "the edit applied"
    );
    std::fs::write(
        root.join("op_kernel/tiling_key_add_custom.h"),
        key_header(sel_f32_split),
    )
    .unwrap();
    let pkg = OpPackage::load(&root, &ascendopt_golden::BUILTINS).unwrap();
    (dir, pkg)
}

#[test]
fn a_template_kernel_runs_the_instance_its_key_selects_on_every_case() {
    let (_dir, pkg) = package("0, 1", TEMPLATE_KEY);
    let (verdict, _) = evaluate_package(&common::device(60_000), &pkg, 7, &common::cfg()).unwrap();
    assert!(matches!(verdict, Verdict::Correct { .. }), "{verdict:?}");
}

#[test]
fn a_combination_the_selection_leaves_out_fails_the_tiling_with_the_reason() {
    // float32 selects SPLIT = 0 only; the f32 case's 16 cores ask for 1.
    let (_dir, pkg) = package("0", TEMPLATE_KEY);
    let (verdict, _) = evaluate_package(&common::device(60_000), &pkg, 7, &common::cfg()).unwrap();
    let Verdict::RuntimeError { message, .. } = &verdict else {
        panic!("{verdict:?}");
    };
    assert!(
        message.contains("no ASCENDC_TPL_ARGS_SEL selects this combination"),
        "{message}"
    );
}

#[test]
fn a_key_set_by_hand_that_selects_no_instance_fails_the_launch_with_the_reason() {
    let (_dir, pkg) = package("0, 1", "    context->SetTilingKey(key + 1000);");
    let (verdict, _) = evaluate_package(&common::device(60_000), &pkg, 7, &common::cfg()).unwrap();
    let Verdict::RuntimeError { message, .. } = &verdict else {
        panic!("{verdict:?}");
    };
    assert!(
        message.contains("selects no instance of the template kernel `add_custom`"),
        "{message}"
    );
}
