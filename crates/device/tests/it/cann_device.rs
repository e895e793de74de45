//! The CANN device end to end against the scripted stand-in of the CANN
//! tools (`tests/standin/`: msopgen, build.sh, bisheng, the aclnn runner,
//! msprof): build, run, check, time and profile one case, and every
//! failure the chip can report ending as a run outcome with the chip's
//! message, the device usable afterwards. The last test runs on a real
//! NPU and is skipped unless `ASCENDOPT_CANN_TESTS=1`.

use ascendopt_device::cann::device::{CannConfig, CannDevice};
use ascendopt_device::profile::Ops;
use ascendopt_device::Platform;
use ascendopt_device::{Device, DeviceError, ProfileRequest, RunOutcome, RunRequest};
use ascendopt_op::package::OpPackage;
use ascendopt_op::{Dtype, Tensor};
use std::path::{Path, PathBuf};
use std::time::Duration;

fn standin() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/standin")
}

/// The 910B2's sizes as the simulator's profile states them (its UB less
/// the 256 bytes the platform reserves).
fn platform() -> Platform {
    Platform {
        soc_version: "Ascend910B2".into(),
        core_num_aiv: 48,
        core_num_aic: 24,
        ub_size: 196608 - 256,
        l1_size: 524288,
        l0a_size: 65536,
        l0b_size: 65536,
        l0c_size: 131072,
        l2_size: 201326592,
        hbm_size: 68719476736,
    }
}

/// A device on the stand-in: its tools first on PATH, a fake toolkit;
/// the stand-in chip's state (hung or not, resets) is in
/// `root/work/standin-state`.
fn device(root: &Path, limit: Duration) -> CannDevice {
    let mut cfg = CannConfig::from_env(0, platform());
    cfg.work_dir = root.join("work");
    cfg.path = format!(
        "{}:{}",
        standin().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    cfg.toolkit = Some(root.join("toolkit"));
    cfg.warmup = 2;
    cfg.repeats = 12;
    cfg.run_limit = limit;
    CannDevice::new(cfg)
}

/// The built-in add_custom package copied to `root/<name>`, with `marker`
/// appended to its kernel as a comment line.
fn package(root: &Path, name: &str, marker: &str) -> OpPackage {
    let dir = root.join(name);
    ascendopt_op::package::copy_tree(
        &ascendopt_op::package::builtin_ops_dir().join("add_custom"),
        &dir,
        &[],
    )
    .unwrap();
    if !marker.is_empty() {
        let k = dir.join("op_kernel/add_custom.cpp");
        let mut text = std::fs::read_to_string(&k).unwrap();
        text.push_str(&format!("// {marker}\n"));
        std::fs::write(&k, text).unwrap();
    }
    OpPackage::load(&dir, &ascendopt_golden::BUILTINS).unwrap()
}

fn request(n: usize, keep_trace: bool) -> RunRequest {
    let x: Vec<f64> = (0..n).map(|i| (i % 17) as f64 * 0.25 - 2.0).collect();
    let y: Vec<f64> = (0..n).map(|i| (i % 5) as f64 * 0.5).collect();
    let poison = Tensor::from_f64s(Dtype::Float16, &[n], &vec![f64::NAN; n]);
    RunRequest {
        inputs: vec![
            Tensor::from_f64s(Dtype::Float16, &[n], &x),
            Tensor::from_f64s(Dtype::Float16, &[n], &y),
        ],
        outputs: vec![poison],
        attrs: Vec::new(),
        seed: 1,
        keep_trace,
        layout: None,
    }
}

fn profile_request() -> ProfileRequest {
    ProfileRequest {
        min_bytes: 0,
        input_bytes: 0,
        ops: Ops::vector(0, Dtype::Float16),
        seed: 0,
        deterministic: false,
    }
}

fn resets(root: &Path) -> usize {
    std::fs::read_to_string(root.join("work/standin-state/resets.log"))
        .unwrap_or_default()
        .lines()
        .count()
}

#[test]
fn a_case_is_built_run_checked_timed_and_profiled_on_the_stand_in() {
    let root = tempfile::tempdir().unwrap();
    let dev = device(root.path(), Duration::from_secs(30));
    assert_eq!(dev.name(), "cann-ascend910b2:0");
    let pkg = package(root.path(), "add", "");
    let art = dev.build(&pkg).unwrap();
    assert!(!art.cached);
    assert!(art
        .host_lib
        .ends_with("build_out/op_api/lib/libcust_opapi.so"));
    // The replayable script and the runner's source are kept.
    let build_dir = art.kernel_lib.parent().unwrap().parent().unwrap();
    let script = std::fs::read_to_string(build_dir.join("build.sh")).unwrap();
    assert!(script.contains("msopgen gen -i"), "{script}");
    let runner = std::fs::read_to_string(art.kernel_lib.with_file_name("runner.cpp")).unwrap();
    assert!(
        runner.contains("aclnnAddCustomGetWorkspaceSize(in_args[0].tensor, in_args[1].tensor, out_args[0].tensor, &ws_size, &exec)")
    );
    // Nothing went into a shared opp folder: everything is in the build dir.
    assert!(art.host_lib.starts_with(build_dir));
    let again = dev.build(&pkg).unwrap();
    assert!(again.cached, "an unchanged package is not built twice");
    assert_eq!(again.key, art.key);

    let req = request(1000, true);
    let RunOutcome::Finished(result) = dev.run(&art, &req) else {
        panic!("the run failed");
    };
    let z = &result.outputs[0];
    for i in 0..1000 {
        let want = req.inputs[0].get_f64(i) + req.inputs[1].get_f64(i);
        assert_eq!(z.get_f64(i), want, "element {i}");
    }
    let measured = result.measured.as_ref().unwrap();
    assert_eq!(measured.samples_us.len(), 12);
    let p = dev.profile(&result, &profile_request()).unwrap();
    assert!(p.task_duration_us > 4.0, "{}", p.task_duration_us);
    assert_eq!(p.block_dim, 40);
    assert_eq!(p.freq_mhz, 1800.0);
    assert_eq!(p.blocks.len(), 80, "two vector sub-blocks per block");
    assert_eq!(result.tiling.block_dim, 40);
    // What the chip does not report is absent in the stored profile.
    let json = serde_json::to_value(&p).unwrap();
    assert_eq!(json["launch_overhead(us)"], serde_json::Value::Null);
    assert_eq!(json["core_span(us)"], serde_json::Value::Null);
    assert!(json.get("roofline").is_none());
    assert!(json["Task Duration(us)"].as_f64().unwrap() > 0.0);

    let s = dev.latency_samples(&result, &p, &[1, 2, 3, 4, 5]).unwrap();
    assert_eq!(s, measured.samples_us[..5].to_vec());
    let many: Vec<u64> = (0..13).collect();
    let err = dev
        .latency_samples(&result, &p, &many)
        .unwrap_err()
        .to_string();
    assert!(err.contains("measured 12") && err.contains("13"), "{err}");

    // A run nobody profiles is not profiled, and its job folder is gone.
    let RunOutcome::Finished(plain) = dev.run(&art, &request(64, false)) else {
        panic!("the run failed");
    };
    assert!(dev.profile(&plain, &profile_request()).is_err());
    assert_eq!(
        std::fs::read_dir(root.path().join("work/jobs"))
            .unwrap()
            .count(),
        0
    );
    assert_eq!(resets(root.path()), 0, "nothing needed a reset");
}

/// The built-in operator `name` copied to `root/<name>`.
fn builtin(root: &Path, name: &str) -> OpPackage {
    let dir = root.join(name);
    ascendopt_op::package::copy_tree(
        &ascendopt_op::package::builtin_ops_dir().join(name),
        &dir,
        &[],
    )
    .unwrap();
    OpPackage::load(&dir, &ascendopt_golden::BUILTINS).unwrap()
}

/// A foreach operator (a tensor list in, a tensor list out, a scalar
/// tensor) and an in-place one (a list changed in place, no output
/// argument: the aclnn `xRef` form) run on the stand-in through the job
/// format the generated runner reads.
#[test]
fn tensor_lists_and_in_place_outputs_reach_the_runner() {
    use ascendopt_op::layout::{ArgLayout, ArgSlot};
    let root = tempfile::tempdir().unwrap();
    let dev = device(root.path(), Duration::from_secs(30));
    let xs = [
        Tensor::from_f64s(Dtype::Float32, &[5], &[1.0, -2.0, 3.5, 0.0, 8.0]),
        Tensor::from_f64s(Dtype::Float32, &[2, 3], &[0.5, 1.5, 2.5, 3.5, 4.5, 5.5]),
    ];
    let poison = |t: &Tensor| Tensor::from_f64s(t.dtype, &t.shape, &vec![f64::NAN; t.numel()]);

    let add = dev
        .build(&builtin(root.path(), "foreach_add_scalar"))
        .unwrap();
    let runner = std::fs::read_to_string(add.kernel_lib.with_file_name("runner.cpp")).unwrap();
    assert!(
        runner.contains("aclnnForeachAddScalarGetWorkspaceSize(in_args[0].list, in_args[1].tensor, out_args[0].list, &ws_size, &exec)"),
        "{runner}"
    );
    let req = RunRequest {
        inputs: vec![
            xs[0].clone(),
            xs[1].clone(),
            Tensor::from_f64s(Dtype::Float32, &[1], &[1.25]),
        ],
        outputs: vec![poison(&xs[0]), poison(&xs[1])],
        attrs: Vec::new(),
        seed: 1,
        keep_trace: false,
        layout: Some(ArgLayout {
            inputs: vec![ArgSlot::List(vec![0, 1]), ArgSlot::One(2)],
            outputs: vec![ArgSlot::List(vec![0, 1])],
            in_place: Vec::new(),
            host_values: Vec::new(),
        }),
    };
    let RunOutcome::Finished(r) = dev.run(&add, &req) else {
        panic!("foreach_add_scalar did not run");
    };
    for (x, y) in xs.iter().zip(&r.outputs) {
        assert_eq!(y.shape, x.shape);
        for i in 0..x.numel() {
            assert_eq!(y.get_f64(i), x.get_f64(i) + 1.25, "element {i}");
        }
    }

    let zero = dev
        .build(&builtin(root.path(), "foreach_zero_inplace"))
        .unwrap();
    let runner = std::fs::read_to_string(zero.kernel_lib.with_file_name("runner.cpp")).unwrap();
    assert!(
        runner
            .contains("aclnnForeachZeroInplaceGetWorkspaceSize(in_args[0].list, &ws_size, &exec)"),
        "no output argument: {runner}"
    );
    let req = RunRequest {
        inputs: xs.to_vec(),
        outputs: vec![poison(&xs[0]), poison(&xs[1])],
        attrs: Vec::new(),
        seed: 1,
        keep_trace: false,
        layout: Some(ArgLayout {
            inputs: vec![ArgSlot::List(vec![0, 1])],
            outputs: Vec::new(),
            in_place: vec![(0, 0), (1, 1)],
            host_values: Vec::new(),
        }),
    };
    let RunOutcome::Finished(r) = dev.run(&zero, &req) else {
        panic!("foreach_zero_inplace did not run");
    };
    for (x, y) in xs.iter().zip(&r.outputs) {
        assert_eq!(y.data.len(), x.data.len());
        assert!(
            (0..x.numel()).all(|i| y.get_f64(i) == 0.0),
            "read back from x"
        );
    }
    // A layout the operator does not take is the runner's job error, a
    // device failure naming it.
    let mut wrong = req.clone();
    wrong.layout = Some(ArgLayout {
        inputs: vec![ArgSlot::One(0), ArgSlot::One(1)],
        outputs: Vec::new(),
        in_place: vec![(0, 0), (1, 1)],
        host_values: Vec::new(),
    });
    match dev.run(&zero, &wrong) {
        RunOutcome::DeviceFailed { message } => {
            assert!(message.contains("job"), "{message}")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn chip_failures_end_as_outcomes_and_the_device_stays_usable() {
    let root = tempfile::tempdir().unwrap();
    let dev = device(root.path(), Duration::from_secs(3));
    let good = dev.build(&package(root.path(), "good", "")).unwrap();
    let outcome = |marker: &str| {
        let art = dev
            .build(&package(root.path(), &marker.replace('=', "_"), marker))
            .unwrap();
        dev.run(&art, &request(256, true))
    };
    let fine = || {
        matches!(
            dev.run(&good, &request(256, false)),
            RunOutcome::Finished(_)
        )
    };

    match outcome("STANDIN_FAIL=561002") {
        RunOutcome::TilingFailed { message } => {
            assert!(
                message.contains("561002") && message.contains("EZ1001"),
                "{message}"
            )
        }
        other => panic!("{other:?}"),
    }
    match outcome("STANDIN_FAIL=561003") {
        RunOutcome::DeviceFailed { message } => {
            assert!(message.contains("kernel not found"), "{message}")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        resets(root.path()),
        0,
        "tiling and lookup failures poison nothing"
    );
    for code in ["507015", "507035"] {
        match outcome(&format!("STANDIN_FAIL={code}")) {
            RunOutcome::Fault { block, message, .. } => {
                assert!(
                    message.contains(code) && message.contains("EZ9999"),
                    "{message}"
                );
                assert_eq!(block, 3, "the plog's core id");
            }
            other => panic!("{other:?}"),
        }
        assert!(fine(), "usable after {code}");
    }
    assert_eq!(
        resets(root.path()),
        2,
        "each AI Core exception reset the device"
    );

    let t = std::time::Instant::now();
    match outcome("STANDIN_FAIL=hang") {
        RunOutcome::TimedOut { after_ms } => assert!((3000..10_000).contains(&after_ms)),
        other => panic!("{other:?}"),
    }
    assert!(t.elapsed() < Duration::from_secs(15));
    assert_eq!(resets(root.path()), 3);
    assert!(fine(), "the reset in a fresh process cleared the hang");

    match outcome("STANDIN_FAIL=crash") {
        RunOutcome::Crashed { signal, .. } => assert_eq!(signal, "signal 11"),
        other => panic!("{other:?}"),
    }
    assert_eq!(resets(root.path()), 4);
    assert!(fine());

    // A down-clocked chip's profile is rejected after the retries.
    match outcome("STANDIN_DOWNCLOCK") {
        RunOutcome::Finished(r) => {
            let err = dev.profile(&r, &profile_request()).unwrap_err().to_string();
            assert!(err.contains("800") && err.contains("rated 1800"), "{err}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn compile_errors_name_the_package_file_and_line() {
    let root = tempfile::tempdir().unwrap();
    let dev = device(root.path(), Duration::from_secs(30));
    let pkg = package(root.path(), "broken", "STANDIN_COMPILE_ERROR");
    let kernel = pkg.dir.join("op_kernel/add_custom.cpp");
    let line = std::fs::read_to_string(&kernel).unwrap().lines().count();
    match dev.build(&pkg) {
        Err(DeviceError::Compile {
            summary,
            units,
            diagnostics,
        }) => {
            assert_eq!(units.len(), 1);
            assert_eq!(units[0].unit, "kernel");
            assert_eq!(units[0].location, format!("{}:{line}", kernel.display()));
            assert!(summary.contains(&units[0].location), "{summary}");
            assert!(diagnostics.contains("Error 1"), "{diagnostics}");
        }
        other => panic!("{other:?}"),
    }

    // A build that never ends is killed at the limit: a compile failure.
    let mut cfg = dev.config().clone();
    cfg.build_limit = Duration::from_secs(2);
    let t = std::time::Instant::now();
    match CannDevice::new(cfg).build(&package(root.path(), "slow", "STANDIN_BUILD_HANG")) {
        Err(DeviceError::Compile { summary, .. }) => {
            assert!(summary.contains("did not finish"), "{summary}")
        }
        other => panic!("{other:?}"),
    }
    assert!(t.elapsed() < Duration::from_secs(20));

    // No toolkit, or no tools: a setup error that says what to do.
    let mut cfg = dev.config().clone();
    cfg.toolkit = None;
    let err = CannDevice::new(cfg.clone())
        .build(&package(root.path(), "ok", ""))
        .unwrap_err();
    assert!(err.to_string().contains("set_env.sh"), "{err}");
    cfg.toolkit = Some(root.path().join("toolkit"));
    cfg.path = "/usr/bin:/bin".into();
    cfg.work_dir = root.path().join("work-no-tools");
    let err = CannDevice::new(cfg)
        .build(&package(root.path(), "ok2", ""))
        .unwrap_err();
    assert!(
        matches!(&err, DeviceError::Setup(e) if e.to_string().contains("msopgen")),
        "{err:?}"
    );

    // An operator written for another chip: refused before any tool runs,
    // naming the op.toml, its chip and the NPU's; its own family builds.
    let other = |name: &str, chip: &str| {
        let pkg = package(root.path(), name, "");
        let toml = pkg.dir.join("op.toml");
        let text = std::fs::read_to_string(&toml).unwrap();
        let text = text.replacen("[op]\n", &format!("[op]\nchip = \"{chip}\"\n"), 1);
        std::fs::write(&toml, text).unwrap();
        OpPackage::load(&pkg.dir, &ascendopt_golden::BUILTINS).unwrap()
    };
    let pkg = other("for_310b", "ascend310b");
    assert_eq!(pkg.spec.chip.as_deref(), Some("ascend310b"));
    let err = dev.build(&pkg).unwrap_err();
    let message = err.to_string();
    assert!(
        matches!(&err, DeviceError::Setup(_))
            && message.contains(
                "op.toml's chip `ascend310b` is not this NPU's Ascend910B2 (`ascend910b`)"
            ),
        "{message}"
    );
    dev.build(&other("for_910b3", "ascend910b3"))
        .expect("a 910B3 operator builds for the 910B2's compute unit");
}

/// On a real NPU (CANN sourced, `ASCENDOPT_CANN_TESTS=1`): the built-in
/// add_custom built, run, checked against x + y, timed and profiled.
#[test]
fn on_a_real_npu_add_custom_runs_and_is_profiled() {
    if std::env::var("ASCENDOPT_CANN_TESTS").as_deref() != Ok("1") {
        eprintln!(
            "skipped: set ASCENDOPT_CANN_TESTS=1 on a machine with an Ascend NPU and CANN sourced"
        );
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let mut cfg = CannConfig::from_env(0, platform());
    cfg.work_dir = root.path().join("work");
    let dev = CannDevice::new(cfg);
    let art = dev.build(&package(root.path(), "add", "")).unwrap();
    let req = request(48 * 8192, true);
    let RunOutcome::Finished(result) = dev.run(&art, &req) else {
        panic!("the run failed");
    };
    for i in (0..48 * 8192).step_by(997) {
        let want = req.inputs[0].get_f64(i) + req.inputs[1].get_f64(i);
        assert_eq!(result.outputs[0].get_f64(i), want, "element {i}");
    }
    let p = dev.profile(&result, &profile_request()).unwrap();
    assert!(p.task_duration_us > 0.0 && p.block_dim > 0);
}
