//! The msopgen build plan (cann-device.md §3, Flow B, shared-library
//! mode): the exact commands, environment and files it generates, the
//! CMakePresets edit, and the whole plan executed against a scripted
//! stand-in of msopgen and build.sh that checks what the real tools need
//! (a failing build included).

use ascendopt_device::cann::build::{self, CannTarget, Step};
use ascendopt_op::opdef::{AttrDesc, OpDefDesc, ParamDesc, ParamType};
use serde_json::json;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

fn param(name: &str, dtypes: &[&str]) -> ParamDesc {
    serde_json::from_value(json!({
        "name": name,
        "param_type": "required",
        "dtypes": dtypes,
        "formats": vec!["FORMAT_ND"; dtypes.len()],
    }))
    .unwrap()
}

fn add_custom() -> OpDefDesc {
    OpDefDesc {
        op_type: "AddCustom".into(),
        error: None,
        tiling: true,
        inputs: vec![
            param("x", &["DT_FLOAT16", "DT_FLOAT"]),
            param("y", &["DT_FLOAT16", "DT_FLOAT"]),
        ],
        outputs: vec![param("z", &["DT_FLOAT16", "DT_FLOAT"])],
        attrs: vec![AttrDesc {
            name: "alpha".into(),
            ty: "Float".into(),
            required: false,
            default: Some(json!(1.5)),
        }],
        configs: Vec::new(),
    }
}

fn package(root: &Path) -> std::path::PathBuf {
    let pkg = root.join("AddCustomPkg");
    std::fs::create_dir_all(pkg.join("op_host")).unwrap();
    std::fs::create_dir_all(pkg.join("op_kernel")).unwrap();
    std::fs::write(pkg.join("op_host/add_custom.cpp"), "// host\n").unwrap();
    std::fs::write(
        pkg.join("op_kernel/add_custom.cpp"),
        "// the package's kernel\n",
    )
    .unwrap();
    pkg
}

#[test]
fn the_description_json_is_msopgens() {
    let v = build::op_json(&add_custom()).unwrap();
    assert_eq!(
        v,
        json!([{
            "op": "AddCustom",
            "input_desc": [
                {"name": "x", "param_type": "required", "format": ["ND", "ND"], "type": ["float16", "float"]},
                {"name": "y", "param_type": "required", "format": ["ND", "ND"], "type": ["float16", "float"]}
            ],
            "output_desc": [
                {"name": "z", "param_type": "required", "format": ["ND", "ND"], "type": ["float16", "float"]}
            ],
            "attr": [{"name": "alpha", "param_type": "optional", "type": "float", "default_value": "1.5"}]
        }])
    );
    let mut bad = add_custom();
    bad.inputs[0].dtypes = vec!["DT_WHATEVER".into()];
    let err = build::op_json(&bad).unwrap_err().to_string();
    assert!(
        err.contains("AddCustom") && err.contains("DT_WHATEVER"),
        "{err}"
    );
}

#[test]
fn the_plan_is_the_documented_flow_step_by_step() {
    let dir = tempfile::tempdir().unwrap();
    let pkg = package(dir.path());
    let work = dir.path().join("work");
    let plan = build::plan(
        &pkg,
        &add_custom(),
        &CannTarget::ascend910b2(),
        &work,
        "ascendopt_1a2b",
    )
    .unwrap();
    let project = work.join("AddCustom");
    assert_eq!(plan.project, project);
    assert_eq!(plan.steps.len(), 6);
    assert!(
        matches!(&plan.steps[0], Step::Write { path, .. } if *path == work.join("AddCustom.json"))
    );
    match &plan.steps[1] {
        Step::Run {
            program,
            args,
            cwd,
            unset_env,
            ..
        } => {
            assert_eq!(program, "msopgen");
            let want: Vec<String> = [
                "gen",
                "-i",
                &work.join("AddCustom.json").display().to_string(),
                "-c",
                "ai_core-Ascend910B2",
                "-lan",
                "cpp",
                "-out",
                &project.display().to_string(),
            ]
            .iter()
            .map(|s| s.to_string())
            .collect();
            assert_eq!(*args, want);
            assert_eq!(*cwd, work);
            assert_eq!(*unset_env, vec!["ASCEND_CUSTOM_OPP_PATH".to_string()]);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        plan.steps[2],
        Step::CopyDir {
            from: pkg.join("op_host"),
            to: project.join("op_host")
        }
    );
    assert_eq!(
        plan.steps[3],
        Step::CopyDir {
            from: pkg.join("op_kernel"),
            to: project.join("op_kernel")
        }
    );
    match &plan.steps[4] {
        Step::SetPresets { path, vars } => {
            assert_eq!(*path, project.join("CMakePresets.json"));
            let vars: Vec<(&str, &str)> =
                vars.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            assert_eq!(
                vars,
                vec![
                    ("ASCEND_COMPUTE_UNIT", "ascend910b"),
                    ("vendor_name", "ascendopt_1a2b"),
                    ("ENABLE_SOURCE_PACKAGE", "False"),
                    ("ENABLE_BINARY_PACKAGE", "True"),
                    ("ASCEND_PACK_SHARED_LIBRARY", "True"),
                ]
            );
        }
        other => panic!("{other:?}"),
    }
    match &plan.steps[5] {
        Step::Run {
            program,
            args,
            cwd,
            set_env,
            unset_env,
        } => {
            assert_eq!(
                (program.as_str(), args.as_slice()),
                ("bash", &["build.sh".to_string()][..])
            );
            assert_eq!(*cwd, project);
            assert_eq!(
                *set_env,
                vec![(
                    "ASCENDC_BUILD_LOG_DIR".to_string(),
                    plan.log_dir.display().to_string()
                )]
            );
            assert_eq!(*unset_env, vec!["ASCEND_CUSTOM_OPP_PATH".to_string()]);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        plan.opapi_lib,
        project.join("build_out/op_api/lib/libcust_opapi.so")
    );
    assert_eq!(
        plan.aclnn_header,
        project.join("build_out/op_api/include/aclnn_add_custom.h")
    );
    assert_eq!(plan.aclnn_function, "aclnnAddCustom");

    // The same plan as a script a user can replay: valid bash, the
    // documented command lines in it.
    let script = build::render_script(&plan);
    assert!(script.contains(&format!(
        "msopgen gen -i {} -c ai_core-Ascend910B2 -lan cpp -out {}",
        work.join("AddCustom.json").display(),
        project.display()
    )));
    assert!(
        script.contains("env -u ASCEND_CUSTOM_OPP_PATH ASCENDC_BUILD_LOG_DIR="),
        "{script}"
    );
    let file = dir.path().join("build.sh");
    std::fs::write(&file, &script).unwrap();
    let syntax = std::process::Command::new("bash")
        .arg("-n")
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        syntax.status.success(),
        "{}",
        String::from_utf8_lossy(&syntax.stderr)
    );

    // A package without op_kernel cannot be planned.
    std::fs::remove_dir_all(pkg.join("op_kernel")).unwrap();
    let err = build::plan(&pkg, &add_custom(), &CannTarget::ascend910b2(), &work, "v").unwrap_err();
    assert!(err.to_string().contains("op_kernel"), "{err}");
}

#[test]
fn cmake_presets_are_edited_in_place_keeping_types() {
    let presets = r#"{
  "version": 1,
  "cmakeMinimumRequired": {"major": 3, "minor": 19, "patch": 0},
  "configurePresets": [
    {
      "name": "default",
      "cacheVariables": {
        "ASCEND_COMPUTE_UNIT": {"type": "STRING", "value": "ascend310b"},
        "vendor_name": {"type": "STRING", "value": "customize"},
        "ENABLE_SOURCE_PACKAGE": {"type": "BOOL", "value": "True"},
        "ENABLE_BINARY_PACKAGE": {"type": "BOOL", "value": "False"},
        "CMAKE_INSTALL_PREFIX": {"type": "PATH", "value": "${sourceDir}/build_out"}
      }
    }
  ]
}"#;
    let vars = vec![
        ("ASCEND_COMPUTE_UNIT".to_string(), "ascend910b".to_string()),
        ("ENABLE_BINARY_PACKAGE".to_string(), "True".to_string()),
        ("ASCEND_PACK_SHARED_LIBRARY".to_string(), "True".to_string()),
    ];
    let edited: serde_json::Value =
        serde_json::from_str(&build::set_presets(presets, &vars).unwrap()).unwrap();
    let cache = &edited["configurePresets"][0]["cacheVariables"];
    assert_eq!(
        cache["ASCEND_COMPUTE_UNIT"],
        json!({"type": "STRING", "value": "ascend910b"})
    );
    assert_eq!(
        cache["ENABLE_BINARY_PACKAGE"],
        json!({"type": "BOOL", "value": "True"})
    );
    assert_eq!(
        cache["ASCEND_PACK_SHARED_LIBRARY"],
        json!({"type": "BOOL", "value": "True"})
    );
    assert_eq!(cache["vendor_name"]["value"], "customize", "untouched");
    assert_eq!(
        cache["CMAKE_INSTALL_PREFIX"]["value"],
        "${sourceDir}/build_out"
    );
    assert!(build::set_presets("{not json", &vars)
        .unwrap_err()
        .to_string()
        .contains("CMakePresets.json"));
    let err = build::set_presets(r#"{"version": 1}"#, &vars).unwrap_err();
    assert!(
        matches!(err, build::PresetsError::Shape(_))
            && err.to_string().contains("configurePresets"),
        "{err}"
    );
}

#[test]
fn snake_case_names_the_aclnn_header() {
    for (camel, snake) in [
        ("AddCustom", "add_custom"),
        ("LeakyReluCustom", "leaky_relu_custom"),
        ("IsInf", "is_inf"),
        ("GeGluV2", "ge_glu_v2"),
        ("AddRmsNormQuant", "add_rms_norm_quant"),
    ] {
        assert_eq!(build::snake_case(camel), snake);
    }
}

fn script(dir: &Path, name: &str, body: &str) {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/bash\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A stand-in msopgen: reads `-i JSON -out DIR`, makes the project skeleton
/// (placeholder sources, CMakePresets.json, a build.sh that checks its
/// environment and the copied kernel, then writes the shared-library
/// layout).
const FAKE_MSOPGEN: &str = r#"
set -e
[ "$1" = gen ] || { echo "msopgen: unknown command $1" >&2; exit 2; }
while [ $# -gt 0 ]; do case "$1" in -i) JSON=$2; shift 2;; -out) OUT=$2; shift 2;; *) shift;; esac; done
[ -f "$JSON" ] || { echo "msopgen: no description $JSON" >&2; exit 1; }
grep -q '"op": "AddCustom"' "$JSON" || { echo "msopgen: bad description" >&2; exit 1; }
mkdir -p "$OUT/op_host" "$OUT/op_kernel"
echo '// generated placeholder' > "$OUT/op_kernel/add_custom.cpp"
cat > "$OUT/CMakePresets.json" <<'P'
{"version": 1, "configurePresets": [{"name": "default", "cacheVariables": {
 "ASCEND_COMPUTE_UNIT": {"type": "STRING", "value": "ascend310b"},
 "vendor_name": {"type": "STRING", "value": "customize"},
 "ENABLE_SOURCE_PACKAGE": {"type": "BOOL", "value": "True"},
 "ENABLE_BINARY_PACKAGE": {"type": "BOOL", "value": "False"}}}]}
P
cat > "$OUT/build.sh" <<'B'
set -e
[ -z "${ASCEND_CUSTOM_OPP_PATH:-}" ] || { echo "build.sh: ASCEND_CUSTOM_OPP_PATH is set" >&2; exit 1; }
[ -n "${ASCENDC_BUILD_LOG_DIR:-}" ] || { echo "build.sh: no log dir" >&2; exit 1; }
grep -q "the package's kernel" op_kernel/add_custom.cpp || { echo "build.sh: placeholder kernel" >&2; exit 1; }
grep -q '"ASCEND_PACK_SHARED_LIBRARY"' CMakePresets.json || { echo "build.sh: not shared-library mode" >&2; exit 1; }
grep -q '"ascend910b"' CMakePresets.json || { echo "build.sh: wrong compute unit" >&2; exit 1; }
if grep -q FAIL_HERE op_kernel/add_custom.cpp; then echo "op_kernel/add_custom.cpp:3: error: use of undeclared identifier 'FAIL_HERE'" >&2; exit 1; fi
mkdir -p build_out/op_api/lib build_out/op_api/include
echo so > build_out/op_api/lib/libcust_opapi.so
echo h > build_out/op_api/include/aclnn_add_custom.h
B
"#;

#[test]
fn the_plan_runs_against_a_scripted_stand_in_of_the_tools() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    script(&bin, "msopgen", FAKE_MSOPGEN);
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let pkg = package(dir.path());
    let work = dir.path().join("work");
    let plan = build::plan(
        &pkg,
        &add_custom(),
        &CannTarget::ascend910b2(),
        &work,
        "ascendopt_1a2b",
    )
    .unwrap();
    build::execute(&plan, &path).unwrap();
    assert!(plan.opapi_lib.is_file() && plan.aclnn_header.is_file());

    // A kernel that does not compile: the step, the status and the
    // compiler's line come back, and the log keeps the whole output.
    std::fs::write(
        pkg.join("op_kernel/add_custom.cpp"),
        "// the package's kernel\nFAIL_HERE\n",
    )
    .unwrap();
    let work2 = dir.path().join("work2");
    let plan = build::plan(
        &pkg,
        &add_custom(),
        &CannTarget::ascend910b2(),
        &work2,
        "ascendopt_1a2c",
    )
    .unwrap();
    let err = build::execute(&plan, &path).unwrap_err();
    assert_eq!(err.index, 6);
    assert!(
        err.message.contains("op_kernel/add_custom.cpp:3: error"),
        "{err}"
    );
    assert!(plan.log_dir.join("step-6.log").is_file());
}

#[test]
fn the_aclnn_runner_calls_the_entry_points_in_the_documented_order() {
    use ascendopt_device::cann::runner::{self, RunnerResult};
    let src = runner::source(&add_custom());
    assert!(src.contains("#include \"aclnn_add_custom.h\""));
    // Inputs, attributes, outputs, then workspace size and executor.
    assert!(
        src.contains(
            "aclnnAddCustomGetWorkspaceSize(in_args[0].tensor, in_args[1].tensor, attrs[0].f, out_args[0].tensor, &ws_size, &exec)"
        ),
        "{src}"
    );
    assert!(src.contains("aclSetAclOpExecutorRepeatable(exec)"));
    assert!(src.contains("aclnnAddCustom(ws, ws_size, exec, stream)"));
    for call in [
        "aclrtRecordEvent(start, stream)",
        "aclrtEventElapsedTime(&ms, start, end)",
        "aclGetRecentErrMsg()",
    ] {
        assert!(src.contains(call), "{call}");
    }
    // No CANN headers here to compile it: only its braces are checked.
    assert_eq!(src.matches('{').count(), src.matches('}').count());

    assert_eq!(
        runner::parse_result("sample_us 20.5\nsample_us 21.0\nstatus ok\n"),
        Some(RunnerResult::Ok {
            samples_us: vec![20.5, 21.0]
        })
    );
    match runner::parse_result(
        "status error 561002 aclnnAddCustomGetWorkspaceSize(...): tiling failed\n",
    ) {
        Some(RunnerResult::Error {
            code,
            message,
            fatal,
        }) => {
            assert_eq!(code, 561002);
            assert!(
                message.contains("tiling failed") && message.contains("561002"),
                "{message}"
            );
            assert!(!fatal);
        }
        other => panic!("{other:?}"),
    }
    match runner::parse_result(
        "sample_us 20.5\nstatus error 507035 aclrtSynchronizeStream(stream): EZ9999\n",
    ) {
        Some(RunnerResult::Error { fatal, message, .. }) => {
            assert!(fatal, "a vector core exception poisons the process");
            assert!(message.contains("vector core exception"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        runner::parse_result("sample_us 20.5\n"),
        None,
        "died before a status"
    );
    assert_eq!(runner::parse_result("sample_us x\nstatus ok\n"), None);
}

/// An operator with every kind of argument the runner passes: a tensor
/// list, an optional input, an input changed in place (an output of the
/// same name: the aclnn `Ref` form, no output argument), string and list
/// attributes, and a list output.
fn every_kind() -> OpDefDesc {
    let mut list = param("xs", &["DT_FLOAT"]);
    list.param_type = ParamType::Dynamic;
    let mut bias = param("bias", &["DT_FLOAT"]);
    bias.param_type = ParamType::Optional;
    let mut ys = param("ys", &["DT_FLOAT"]);
    ys.param_type = ParamType::Dynamic;
    let attr = |name: &str, ty: &str| AttrDesc {
        name: name.into(),
        ty: ty.into(),
        required: true,
        default: None,
    };
    OpDefDesc {
        op_type: "EveryKind".into(),
        error: None,
        tiling: true,
        inputs: vec![list, bias, param("state", &["DT_FLOAT"])],
        outputs: vec![ys, param("state", &["DT_FLOAT"])],
        attrs: vec![
            attr("mode", "String"),
            attr("axes", "ListInt"),
            attr("scales", "ListFloat"),
            attr("keep", "ListBool"),
            attr("eps", "Float"),
        ],
        configs: Vec::new(),
    }
}

#[test]
fn the_runner_passes_lists_absent_inputs_in_place_tensors_and_list_attributes() {
    use ascendopt_device::cann::runner;
    let src = runner::source(&every_kind());
    // The call, in the aclnn order: the Ref input is the state's only
    // argument; attributes between inputs and outputs.
    expect_test::expect![[r#"
        aclnnEveryKindGetWorkspaceSize(in_args[0].list, in_args[1].tensor, in_args[2].tensor, attrs[0].str(), attrs[1].int_array(), attrs[2].float_array(), attrs[3].bool_array(), attrs[4].f, out_args[0].list, &ws_size, &exec)"#]]
    .assert_eq(
        src.lines()
            .filter_map(|l| l.trim().strip_prefix("CHECK("))
            .find(|l| l.contains("GetWorkspaceSize"))
            .map(|l| l.trim_end_matches(");"))
            .unwrap_or(""),
    );
    for declared in [
        r#"const char kInputs[] = "LOT";"#,
        r#"const char kAttrs[] = "sIFIf";"#,
        r#"const char kOutputs[] = "L";"#,
        "aclCreateTensorList(ts.data(), ts.size())",
        "aclCreateIntArray(ints.data(), ints.size())",
        "aclCreateFloatArray(floats.data(), floats.size())",
        "aclCreateBoolArray(v, ints.size())",
    ] {
        assert!(src.contains(declared), "{declared}");
    }
    compiles_against_declared_acl(&src, "every_kind");
    compiles_against_declared_acl(&runner::source(&add_custom()), "add_custom");
}

/// Checks that `src` is C++ that compiles (`g++ -fsyntax-only`) against
/// declarations of the ACL and aclnn calls it makes, written here from
/// their documented signatures (the guide 2.10.2.9 and cann-device.md §3
/// and §4; no CANN headers on this machine). Skipped without g++.
fn compiles_against_declared_acl(src: &str, name: &str) {
    if std::process::Command::new("g++")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skipped: no g++");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("acl")).unwrap();
    std::fs::write(
        dir.path().join("acl/acl.h"),
        r#"// Declarations written for this test from the documented signatures.
#pragma once
#include <cstddef>
#include <cstdint>
typedef int aclError;
typedef int aclnnStatus;
typedef void* aclrtStream;
typedef void* aclrtEvent;
enum aclDataType { ACL_FLOAT = 0, ACL_FLOAT16 = 1 };
enum aclFormat { ACL_FORMAT_ND = 2 };
enum aclrtMemMallocPolicy { ACL_MEM_MALLOC_HUGE_FIRST = 0 };
enum aclrtMemcpyKind { ACL_MEMCPY_HOST_TO_DEVICE = 1, ACL_MEMCPY_DEVICE_TO_HOST = 2 };
struct aclTensor; struct aclTensorList; struct aclIntArray; struct aclFloatArray; struct aclBoolArray; struct aclOpExecutor;
aclError aclInit(const char*); aclError aclFinalize();
aclError aclrtSetDevice(int32_t); aclError aclrtResetDevice(int32_t);
const char* aclGetRecentErrMsg();
size_t aclDataTypeSize(aclDataType);
aclError aclrtSetOpExecuteTimeOut(uint32_t);
aclError aclrtCreateStream(aclrtStream*); aclError aclrtDestroyStream(aclrtStream);
aclError aclrtMalloc(void**, size_t, aclrtMemMallocPolicy); aclError aclrtFree(void*);
aclError aclrtMemcpy(void*, size_t, const void*, size_t, aclrtMemcpyKind);
aclError aclrtSynchronizeStreamWithTimeout(aclrtStream, int32_t);
aclError aclrtCreateEvent(aclrtEvent*); aclError aclrtDestroyEvent(aclrtEvent);
aclError aclrtRecordEvent(aclrtEvent, aclrtStream);
aclError aclrtEventElapsedTime(float*, aclrtEvent, aclrtEvent);
aclTensor* aclCreateTensor(const int64_t*, uint64_t, aclDataType, const int64_t*, int64_t, aclFormat, const int64_t*, uint64_t, void*);
aclTensorList* aclCreateTensorList(const aclTensor* const*, uint64_t);
aclIntArray* aclCreateIntArray(const int64_t*, uint64_t);
aclFloatArray* aclCreateFloatArray(const float*, uint64_t);
aclBoolArray* aclCreateBoolArray(const bool*, uint64_t);
aclnnStatus aclDestroyTensor(const aclTensor*); aclnnStatus aclDestroyTensorList(const aclTensorList*);
aclnnStatus aclDestroyIntArray(const aclIntArray*); aclnnStatus aclDestroyFloatArray(const aclFloatArray*);
aclnnStatus aclDestroyBoolArray(const aclBoolArray*);
aclnnStatus aclSetAclOpExecutorRepeatable(aclOpExecutor*);
"#,
    )
    .unwrap();
    let header = match name {
        "every_kind" => "aclnnStatus aclnnEveryKindGetWorkspaceSize(const aclTensorList* xs, const aclTensor* biasOptional, aclTensor* stateRef, char* mode, const aclIntArray* axes, const aclFloatArray* scales, const aclBoolArray* keep, double eps, const aclTensorList* out, uint64_t* workspaceSize, aclOpExecutor** executor);\naclnnStatus aclnnEveryKind(void*, uint64_t, aclOpExecutor*, aclrtStream);\n",
        _ => "aclnnStatus aclnnAddCustomGetWorkspaceSize(const aclTensor* x, const aclTensor* y, double alpha, const aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor);\naclnnStatus aclnnAddCustom(void*, uint64_t, aclOpExecutor*, aclrtStream);\n",
    };
    std::fs::write(
        dir.path().join(format!("aclnn_{name}.h")),
        format!("#pragma once\n#include <acl/acl.h>\n{header}"),
    )
    .unwrap();
    std::fs::write(dir.path().join("runner.cpp"), src).unwrap();
    let out = std::process::Command::new("g++")
        .args(["-std=c++17", "-fsyntax-only", "-Wall", "-Werror", "-I"])
        .arg(dir.path())
        .arg(dir.path().join("runner.cpp"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
