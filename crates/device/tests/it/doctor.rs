//! `doctor` on this machine (no CANN: every CANN line says what is missing
//! and how to get it) and against a scripted stand-in of the CANN tools
//! (shell scripts named bisheng, msopgen, msprof and npu-smi that print the
//! documented formats), failures and a hanging tool included.

use ascendopt_device::cann::doctor::{doctor, DoctorInput, LineStatus, SimFacts, SimProfileFacts};
use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn sim() -> SimFacts {
    SimFacts {
        cxx: PathBuf::from("g++"),
        include_dir: Path::new(env!("CARGO_MANIFEST_DIR")).join("../sim/include"),
        profile: Ok(SimProfileFacts {
            name: "ascend910b2".into(),
            soc: "Ascend910B2".into(),
            vector_cores: 48,
            cube_cores: 24,
        }),
    }
}

fn input(path: &str, extra: &[(&str, &str)], prefixes: Vec<PathBuf>) -> DoctorInput {
    let mut env = BTreeMap::new();
    env.insert("PATH".to_string(), path.to_string());
    for (k, v) in extra {
        env.insert(k.to_string(), v.to_string());
    }
    DoctorInput {
        env,
        cann_prefixes: prefixes,
        npu_smi_dirs: Vec::new(),
        sim: sim(),
        tool_timeout: Duration::from_secs(10),
    }
}

fn script(dir: &Path, name: &str, body: &str) {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

const NPU_SMI_INFO: &str = "\
+---------------------------+---------------+----------------------------------------------------+
| NPU   Name                | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|
| Chip                      | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)        |
+===========================+===============+====================================================+
| 0     910B3               | OK            | 93.6        40                0    / 0             |
| 0                         | 0000:C1:00.0  | 0           0    / 0          3161 / 65536         |
+===========================+===============+====================================================+
| No running processes found in NPU 0                                                            |
+===========================+===============+====================================================+";

#[test]
fn without_cann_every_cann_line_says_what_is_missing_and_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let d = doctor(&input(
        "/usr/bin:/bin",
        &[],
        vec![dir.path().join("no-cann")],
    ));
    assert!(d.sim_usable, "{d:?}");
    assert!(!d.cann_tools_present);
    for line in &d.lines {
        match line.device {
            "sim" => assert_eq!(line.status, LineStatus::Ok, "{line:?}"),
            _ if line.item == "ASCEND_CUSTOM_OPP_PATH" => assert_eq!(line.status, LineStatus::Ok),
            _ => {
                assert_eq!(line.status, LineStatus::Missing, "{line:?}");
                assert!(
                    line.fix.as_deref().is_some_and(|f| !f.is_empty()),
                    "{line:?}"
                );
            }
        }
    }
    let text = ascendopt_device::cann::doctor::render(&d);
    for item in [
        "CANN toolkit",
        "bisheng",
        "msopgen",
        "msprof",
        "npu-smi",
        "cann device",
    ] {
        assert!(text.contains(item), "{item} missing from\n{text}");
    }
    assert!(text.contains("install the CANN toolkit"), "{text}");
    assert!(
        text.contains("--device cann needs the toolkit, bisheng, msopgen, msprof, a healthy NPU (missing here)"),
        "{text}"
    );
    assert!(text.contains("simulator: ready"), "{text}");
}

#[test]
fn a_scripted_cann_install_is_read_tool_by_tool() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    let home = dir.path().join("cann");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("version.cfg"), "# toolkit\nversion=9.0.0\n").unwrap();
    script(&bin, "bisheng", "echo 'bisheng version 9.0.0 (clang 15)'");
    script(&bin, "msopgen", "exit 0");
    script(&bin, "msprof", "exit 0");
    script(
        &bin,
        "npu-smi",
        &format!("cat <<'END'\n{NPU_SMI_INFO}\nEND"),
    );
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let home_s = home.display().to_string();
    let d = doctor(&input(
        &path,
        &[
            ("ASCEND_HOME_PATH", &home_s),
            ("ASCEND_CUSTOM_OPP_PATH", "/opt/vendors/x"),
        ],
        Vec::new(),
    ));
    let line = |item: &str| {
        d.lines
            .iter()
            .find(|l| l.item == item)
            .unwrap_or_else(|| panic!("{item}: {d:?}"))
    };
    assert_eq!(line("CANN toolkit").status, LineStatus::Ok);
    assert!(
        line("CANN toolkit").detail.contains("version 9.0.0"),
        "{:?}",
        line("CANN toolkit")
    );
    assert_eq!(line("bisheng").status, LineStatus::Ok);
    assert!(line("bisheng").detail.contains("bisheng version 9.0.0"));
    assert_eq!(line("msopgen").status, LineStatus::Ok);
    assert_eq!(line("msprof").status, LineStatus::Ok);
    let npu = line("NPU 0");
    assert_eq!(npu.status, LineStatus::Ok);
    assert!(
        npu.detail.contains("Ascend910B3") && npu.detail.contains("62375 MB free of 65536 MB"),
        "{npu:?}"
    );
    // The simulator models a 910B2; this chip is a 910B3.
    assert_eq!(line("simulator profile vs chip").status, LineStatus::Warn);
    assert_eq!(line("ASCEND_CUSTOM_OPP_PATH").status, LineStatus::Warn);
    assert!(d.cann_tools_present);
    // Everything the CANN device needs is here: it says so, and that it has
    // not been run on a chip by the project.
    assert_eq!(line("cann device").status, LineStatus::Ok);
    assert!(line("cann device").detail.contains("not yet on a chip"));
}

#[test]
fn a_toolkit_installed_but_not_sourced_says_which_set_env_to_source() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("Ascend/cann");
    std::fs::create_dir_all(&prefix).unwrap();
    std::fs::write(prefix.join("set_env.sh"), "export ASCEND_HOME_PATH=...\n").unwrap();
    let d = doctor(&input("/usr/bin:/bin", &[], vec![prefix.clone()]));
    let toolkit = d.lines.iter().find(|l| l.item == "CANN toolkit").unwrap();
    assert_eq!(toolkit.status, LineStatus::Warn);
    assert_eq!(
        toolkit.fix.as_deref(),
        Some(format!("source {}", prefix.join("set_env.sh").display()).as_str())
    );
}

#[test]
fn a_failing_or_hanging_npu_smi_is_a_line_not_a_hang() {
    let dir = tempfile::tempdir().unwrap();
    script(
        dir.path(),
        "npu-smi",
        "echo 'dcmi module initialize failed. ret is -8005' >&2; exit 1",
    );
    let path = format!("{}:/usr/bin:/bin", dir.path().display());
    let d = doctor(&input(&path, &[], Vec::new()));
    let smi = d.lines.iter().find(|l| l.item == "npu-smi").unwrap();
    assert_eq!(smi.status, LineStatus::Missing);
    assert!(
        smi.detail.contains("dcmi module initialize failed"),
        "{smi:?}"
    );

    script(dir.path(), "npu-smi", "exec sleep 30");
    let mut slow = input(&path, &[], Vec::new());
    slow.tool_timeout = Duration::from_millis(300);
    let t = Instant::now();
    let d = doctor(&slow);
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    let smi = d.lines.iter().find(|l| l.item == "npu-smi").unwrap();
    assert_eq!(smi.status, LineStatus::Missing);
    assert!(smi.detail.contains("did not finish"), "{smi:?}");
}

#[test]
fn a_simulator_without_its_headers_or_compiler_is_not_usable() {
    let mut broken = input("/usr/bin:/bin", &[], Vec::new());
    broken.sim.include_dir = PathBuf::from("/nonexistent/include");
    broken.sim.cxx = PathBuf::from("/nonexistent/g++");
    let d = doctor(&broken);
    assert!(!d.sim_usable);
    let headers = d
        .lines
        .iter()
        .find(|l| l.item == "emulation headers")
        .unwrap();
    assert_eq!(headers.status, LineStatus::Missing);
    assert!(headers
        .fix
        .as_deref()
        .unwrap()
        .contains("ASCENDOPT_SIM_INCLUDE"));
    let cxx = d.lines.iter().find(|l| l.item == "C++ compiler").unwrap();
    assert_eq!(cxx.status, LineStatus::Missing);
}
