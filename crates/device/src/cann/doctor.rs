//! `ascendopt doctor`: what this machine has for each device, each line
//! OK or the fix.
//!
//! The simulator (the default device) needs a C++17 compiler, the emulation
//! headers and a hardware profile. The CANN side follows
//! ../shared/ref/cann-device.md: the toolkit found through
//! `ASCEND_HOME_PATH` / `ASCEND_TOOLKIT_HOME` or its documented install
//! prefixes (§1), `bisheng`, `msopgen`, `msprof`, `npu-smi` and the chips
//! it lists (§5), and the `ASCEND_CUSTOM_OPP_PATH` trap (§1). Where the
//! toolkit keeps its version is our inference (`version.cfg`, or
//! `<arch>-linux/ascend_toolkit_install.info`, each with a `version=`
//! line): the line says where it read it.
//!
//! Everything the checks read comes in a [`DoctorInput`] (environment,
//! search prefixes, the simulator's facts), so tests run them against a
//! scripted stand-in of the tools; a tool that hangs is killed after
//! [`DoctorInput::tool_timeout`] ([`TOOL_TIMEOUT`] by default).

use super::npu_smi::{self, NpuChip};
use crate::SharedError;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long one tool may run (`npu-smi info` on a sick driver can hang).
pub const TOOL_TIMEOUT: Duration = Duration::from_secs(15);

/// The verdict of one line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LineStatus {
    /// Present and usable.
    Ok,
    /// Usable, with something to know or fix.
    Warn,
    /// Absent or unusable.
    Missing,
}

impl LineStatus {
    /// The word printed at the start of the line.
    pub fn label(self) -> &'static str {
        match self {
            LineStatus::Ok => "OK",
            LineStatus::Warn => "WARN",
            LineStatus::Missing => "MISSING",
        }
    }
}

/// One thing checked.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DoctorLine {
    /// The device it is for: `sim` or `cann`.
    pub device: &'static str,
    /// What was checked.
    pub item: String,
    /// Its verdict.
    pub status: LineStatus,
    /// What was found.
    pub detail: String,
    /// How to fix it (None when nothing is to be done).
    pub fix: Option<String>,
}

/// What the simulator is made of, as the caller configured it.
#[derive(Debug, Clone, PartialEq)]
pub struct SimFacts {
    /// The C++ compiler.
    pub cxx: PathBuf,
    /// The emulation headers' folder.
    pub include_dir: PathBuf,
    /// The hardware profile's name, SoC and core counts, or why it did not
    /// load (the simulator's error).
    pub profile: Result<SimProfileFacts, SharedError>,
}

/// What the doctor says of the simulator's hardware profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimProfileFacts {
    /// The profile's name (`ascend910b2`).
    pub name: String,
    /// The SoC it models (`Ascend910B2`).
    pub soc: String,
    /// Its vector cores.
    pub vector_cores: u32,
    /// Its cube cores.
    pub cube_cores: u32,
}

/// Everything the checks read.
#[derive(Debug, Clone, PartialEq)]
pub struct DoctorInput {
    /// The environment (`PATH`, `HOME`, `ASCEND_*`).
    pub env: BTreeMap<String, String>,
    /// Where a CANN toolkit is looked for when no variable names one.
    pub cann_prefixes: Vec<PathBuf>,
    /// Where `npu-smi` is looked for when it is not on `PATH`.
    pub npu_smi_dirs: Vec<PathBuf>,
    /// The simulator.
    pub sim: SimFacts,
    /// How long one tool may run before it is killed.
    pub tool_timeout: Duration,
}

impl DoctorInput {
    /// This process's environment and the documented install prefixes.
    pub fn from_env(sim: SimFacts) -> DoctorInput {
        let env: BTreeMap<String, String> = std::env::vars().collect();
        let mut cann_prefixes = vec![
            PathBuf::from("/usr/local/Ascend/cann"),
            PathBuf::from("/usr/local/Ascend/ascend-toolkit/latest"),
        ];
        if let Some(home) = env.get("HOME") {
            cann_prefixes.push(Path::new(home).join("Ascend/cann"));
            cann_prefixes.push(Path::new(home).join("Ascend/ascend-toolkit/latest"));
        }
        DoctorInput {
            env,
            cann_prefixes,
            npu_smi_dirs: vec![
                PathBuf::from("/usr/local/sbin"),
                PathBuf::from("/usr/local/bin"),
            ],
            sim,
            tool_timeout: TOOL_TIMEOUT,
        }
    }
}

/// The whole check.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Doctor {
    /// Every line, simulator first.
    pub lines: Vec<DoctorLine>,
    /// The simulator can build and run operators here.
    pub sim_usable: bool,
    /// The CANN tools and a healthy chip are present.
    pub cann_tools_present: bool,
}

/// Why a tool the doctor asks did not answer.
#[derive(Debug, thiserror::Error)]
enum ToolError {
    /// It could not be started.
    #[error("cannot run {}: {source}", program.display())]
    Spawn {
        /// The tool.
        program: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// It did not end within the limit.
    #[error("{} {args} did not finish within {} s", program.display(), timeout.as_secs_f64())]
    Hung {
        /// The tool.
        program: PathBuf,
        /// Its arguments, joined.
        args: String,
        /// The limit.
        timeout: Duration,
    },
    /// Waiting for it, or reading its output, failed.
    #[error("{doing} {}: {source}", program.display())]
    Wait {
        /// `waiting for`, `reading`.
        doing: &'static str,
        /// The tool.
        program: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// It exited with a failure.
    #[error("{} {args} failed ({status}){}", program.display(), said.as_deref().map(|l| format!(": {l}")).unwrap_or_default())]
    Failed {
        /// The tool.
        program: PathBuf,
        /// Its arguments, joined.
        args: String,
        /// Its exit status.
        status: std::process::ExitStatus,
        /// The first line it printed (stderr first).
        said: Option<String>,
    },
}

/// Runs a tool with a time limit; its stdout, or why not.
fn run_tool(
    program: &Path,
    args: &[&str],
    env: &BTreeMap<String, String>,
    timeout: Duration,
) -> Result<String, ToolError> {
    let mut cmd = Command::new(program);
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(path) = env.get("PATH") {
        cmd.env("PATH", path);
    }
    let mut child = cmd.spawn().map_err(|source| ToolError::Spawn {
        program: program.to_path_buf(),
        source,
    })?;
    let deadline = Instant::now() + timeout;
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(ToolError::Hung {
                    program: program.to_path_buf(),
                    args: args.join(" "),
                    timeout,
                });
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(source) => {
                return Err(ToolError::Wait {
                    doing: "waiting for",
                    program: program.to_path_buf(),
                    source,
                })
            }
        }
    }
    let out = child.wait_with_output().map_err(|source| ToolError::Wait {
        doing: "reading",
        program: program.to_path_buf(),
        source,
    })?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if out.status.success() {
        Ok(stdout)
    } else {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let said = stderr
            .lines()
            .chain(stdout.lines())
            .find(|l| !l.trim().is_empty())
            .map(|l| l.trim().to_string());
        Err(ToolError::Failed {
            program: program.to_path_buf(),
            args: args.join(" "),
            status: out.status,
            said,
        })
    }
}

/// `name` in one of `PATH`'s folders.
fn on_path(name: &str, env: &BTreeMap<String, String>) -> Option<PathBuf> {
    let path = env.get("PATH")?;
    std::env::split_paths(path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// The first `version=` value of a file.
fn version_in(file: &Path) -> Option<String> {
    let text = std::fs::read_to_string(file).ok()?;
    text.lines().find_map(|l| {
        let (key, value) = l.split_once('=')?;
        key.trim()
            .eq_ignore_ascii_case("version")
            .then(|| value.trim().trim_matches(['"', '[', ']']).to_string())
            .filter(|v| !v.is_empty())
    })
}

/// The toolkit's version and the file it was read from.
fn cann_version(home: &Path) -> Option<(String, PathBuf)> {
    let arch = format!("{}-linux", std::env::consts::ARCH);
    [
        home.join("version.cfg"),
        home.join(&arch).join("ascend_toolkit_install.info"),
    ]
    .into_iter()
    .find_map(|f| version_in(&f).map(|v| (v, f)))
}

/// A tool of the toolkit: on `PATH`, else at its place in the toolkit.
fn cann_tool(
    lines: &mut Vec<DoctorLine>,
    input: &DoctorInput,
    home: Option<&Path>,
    name: &str,
    in_toolkit: &[&str],
    version_args: Option<&[&str]>,
) -> Option<PathBuf> {
    let env = &input.env;
    let found = on_path(name, env).or_else(|| {
        let home = home?;
        in_toolkit
            .iter()
            .map(|rel| home.join(rel))
            .find(|p| p.is_file())
    });
    match &found {
        Some(path) => {
            let version = version_args
                .and_then(|args| run_tool(path, args, env, input.tool_timeout).ok())
                .and_then(|out| {
                    out.lines()
                        .find(|l| !l.trim().is_empty())
                        .map(|l| l.trim().to_string())
                });
            let on_path = on_path(name, env).is_some();
            lines.push(DoctorLine {
                device: "cann",
                item: name.to_string(),
                status: if on_path { LineStatus::Ok } else { LineStatus::Warn },
                detail: match version {
                    Some(v) => format!("{} ({v})", path.display()),
                    None => path.display().to_string(),
                },
                fix: (!on_path).then(|| {
                    "it is not on PATH: source the toolkit's set_env.sh in the shell that runs ascendopt"
                        .to_string()
                }),
            });
        }
        None => lines.push(DoctorLine {
            device: "cann",
            item: name.to_string(),
            status: LineStatus::Missing,
            detail: "not found on PATH or in the toolkit".into(),
            fix: Some(format!(
                "{name} comes with the CANN toolkit: install it and source its set_env.sh"
            )),
        }),
    }
    found
}

/// Runs every check.
pub fn doctor(input: &DoctorInput) -> Doctor {
    let mut lines = Vec::new();
    let env = &input.env;

    // ---- the simulator ----
    let cxx = run_tool(&input.sim.cxx, &["--version"], env, input.tool_timeout);
    let cxx_ok = cxx.is_ok();
    lines.push(match cxx {
        Ok(out) => DoctorLine {
            device: "sim",
            item: "C++ compiler".into(),
            status: LineStatus::Ok,
            detail: format!(
                "{} ({})",
                input.sim.cxx.display(),
                out.lines().next().unwrap_or("").trim()
            ),
            fix: None,
        },
        Err(why) => DoctorLine {
            device: "sim",
            item: "C++ compiler".into(),
            status: LineStatus::Missing,
            detail: why.to_string(),
            fix: Some(
                "install g++ with C++17 (Debian/Ubuntu: `apt install g++`), or set ASCENDOPT_CXX"
                    .into(),
            ),
        },
    });
    let headers_ok = input.sim.include_dir.join("kernel_operator.h").is_file();
    lines.push(DoctorLine {
        device: "sim",
        item: "emulation headers".into(),
        status: if headers_ok {
            LineStatus::Ok
        } else {
            LineStatus::Missing
        },
        detail: input.sim.include_dir.display().to_string(),
        fix: (!headers_ok).then(|| {
            "the binary reads the headers from the source tree it was built in: keep that \
             checkout, or set ASCENDOPT_SIM_INCLUDE to an ascendopt checkout's crates/sim/include \
             (and ASCENDOPT_SIM_RUNTIME_SRC to its crates/sim/runtime_src)"
                .into()
        }),
    });
    let profile_ok = input.sim.profile.is_ok();
    lines.push(match &input.sim.profile {
        Ok(SimProfileFacts {
            name,
            soc,
            vector_cores: aiv,
            cube_cores: aic,
        }) => DoctorLine {
            device: "sim",
            item: "hardware profile".into(),
            status: LineStatus::Ok,
            detail: format!("{name}: {soc}, {aiv} vector + {aic} cube cores"),
            fix: None,
        },
        Err(why) => DoctorLine {
            device: "sim",
            item: "hardware profile".into(),
            status: LineStatus::Missing,
            detail: why.to_string(),
            fix: Some("rebuild ascendopt from a clean checkout".into()),
        },
    });
    let sim_usable = cxx_ok && headers_ok && profile_ok;

    // ---- CANN ----
    let named = ["ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME"]
        .iter()
        .find_map(|v| {
            env.get(*v)
                .filter(|p| !p.is_empty())
                .map(|p| (*v, PathBuf::from(p)))
        });
    let home: Option<PathBuf> = match &named {
        Some((var, path)) if path.is_dir() => {
            let version = cann_version(path);
            lines.push(DoctorLine {
                device: "cann",
                item: "CANN toolkit".into(),
                status: LineStatus::Ok,
                detail: match version {
                    Some((v, file)) => format!("{} (from {var}; version {v}, read from {})", path.display(), file.display()),
                    None => format!("{} (from {var}; version not found in version.cfg or ascend_toolkit_install.info)", path.display()),
                },
                fix: None,
            });
            Some(path.clone())
        }
        Some((var, path)) => {
            lines.push(DoctorLine {
                device: "cann",
                item: "CANN toolkit".into(),
                status: LineStatus::Missing,
                detail: format!("{var}={} is not a folder", path.display()),
                fix: Some(
                    "source the set_env.sh of an installed toolkit, or unset the variable".into(),
                ),
            });
            None
        }
        None => match input.cann_prefixes.iter().find(|p| p.is_dir()) {
            Some(prefix) => {
                let env_sh = [prefix.join("set_env.sh"), prefix.join("../set_env.sh")]
                    .into_iter()
                    .find(|p| p.is_file())
                    .unwrap_or_else(|| prefix.join("set_env.sh"));
                lines.push(DoctorLine {
                    device: "cann",
                    item: "CANN toolkit".into(),
                    status: LineStatus::Warn,
                    detail: format!(
                        "installed at {} but its environment is not set (no ASCEND_HOME_PATH)",
                        prefix.display()
                    ),
                    fix: Some(format!("source {}", env_sh.display())),
                });
                Some(prefix.clone())
            }
            None => {
                lines.push(DoctorLine {
                    device: "cann",
                    item: "CANN toolkit".into(),
                    status: LineStatus::Missing,
                    detail: format!(
                        "no ASCEND_HOME_PATH or ASCEND_TOOLKIT_HOME, nothing at {}",
                        input
                            .cann_prefixes
                            .iter()
                            .map(|p| p.display().to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                    fix: Some(
                        "install the CANN toolkit (9.0: the cann package, then `source \
                         /usr/local/Ascend/cann/set_env.sh`; 8.x: `source \
                         /usr/local/Ascend/ascend-toolkit/set_env.sh`; a non-root install lives \
                         under $HOME/Ascend)"
                            .into(),
                    ),
                });
                None
            }
        },
    };
    let arch = format!("{}-linux", std::env::consts::ARCH);
    let bisheng_rel = [
        format!("{arch}/ccec_compiler/bin/bisheng"),
        "compiler/ccec_compiler/bin/bisheng".to_string(),
    ];
    let bisheng_rel: Vec<&str> = bisheng_rel.iter().map(String::as_str).collect();
    let bisheng = cann_tool(
        &mut lines,
        input,
        home.as_deref(),
        "bisheng",
        &bisheng_rel,
        Some(&["--version"]),
    );
    let msopgen = cann_tool(
        &mut lines,
        input,
        home.as_deref(),
        "msopgen",
        &["python/site-packages/bin/msopgen"],
        None,
    );
    let msprof = cann_tool(
        &mut lines,
        input,
        home.as_deref(),
        "msprof",
        &["tools/profiler/bin/msprof"],
        None,
    );

    // npu-smi and the chips.
    let npu_smi = on_path("npu-smi", env).or_else(|| {
        input
            .npu_smi_dirs
            .iter()
            .map(|d| d.join("npu-smi"))
            .find(|p| p.is_file())
    });
    let mut chips: Vec<NpuChip> = Vec::new();
    match &npu_smi {
        None => lines.push(DoctorLine {
            device: "cann",
            item: "npu-smi".into(),
            status: LineStatus::Missing,
            detail: "not found: no Ascend NPU driver on this machine".into(),
            fix: Some(
                "install the Ascend NPU driver and firmware (npu-smi comes with the driver); \
                 without an NPU, the simulator is the device"
                    .into(),
            ),
        }),
        Some(path) => match run_tool(path, &["info"], env, input.tool_timeout) {
            Err(why) => lines.push(DoctorLine {
                device: "cann",
                item: "npu-smi".into(),
                status: LineStatus::Missing,
                detail: why.to_string(),
                fix: Some("check the driver: `npu-smi info` must list the chips".into()),
            }),
            Ok(out) => {
                chips = npu_smi::parse_info(&out);
                if chips.is_empty() {
                    lines.push(DoctorLine {
                        device: "cann",
                        item: "npu-smi".into(),
                        status: LineStatus::Missing,
                        detail: format!("{} info listed no chip", path.display()),
                        fix: Some("check the driver and that this user may use the devices".into()),
                    });
                }
                for chip in &chips {
                    let healthy = chip.health.eq_ignore_ascii_case("OK");
                    lines.push(DoctorLine {
                        device: "cann",
                        item: format!("NPU {}", chip.npu),
                        status: if healthy { LineStatus::Ok } else { LineStatus::Warn },
                        detail: format!(
                            "{}, health {}, bus {}, HBM {} MB free of {} MB",
                            chip.soc_name(),
                            chip.health,
                            chip.bus_id,
                            chip.hbm_free_mb(),
                            chip.hbm_total_mb
                        ),
                        fix: (!healthy).then(|| {
                            "the chip is not healthy: see `npu-smi info -t health -i N` before timing on it"
                                .into()
                        }),
                    });
                }
            }
        },
    }
    // The simulator's profile against the chips.
    if let (Ok(SimProfileFacts { name, soc, .. }), Some(first)) =
        (&input.sim.profile, chips.first())
    {
        let same = first.soc_name() == *soc;
        lines.push(DoctorLine {
            device: "cann",
            item: "simulator profile vs chip".into(),
            status: if same { LineStatus::Ok } else { LineStatus::Warn },
            detail: if same {
                format!("profile {name} models {soc}, the chip of NPU {}", first.npu)
            } else {
                format!(
                    "profile {name} models {soc}; NPU {} is {}: simulated latencies are for another chip",
                    first.npu,
                    first.soc_name()
                )
            },
            fix: (!same).then(|| {
                "compare the two on the same candidates before trusting the simulator's ranking for this chip"
                    .into()
            }),
        });
    }
    let custom = env.get("ASCEND_CUSTOM_OPP_PATH").filter(|v| !v.is_empty());
    lines.push(DoctorLine {
        device: "cann",
        item: "ASCEND_CUSTOM_OPP_PATH".into(),
        status: if custom.is_some() { LineStatus::Warn } else { LineStatus::Ok },
        detail: custom.map_or_else(|| "not set".to_string(), |v| format!("set to {v}")),
        fix: custom.map(|_| {
            "unset it before operator builds: an installed custom package would shadow the build".into()
        }),
    });
    let missing: Vec<&str> = [
        ("the toolkit", home.is_some()),
        ("bisheng", bisheng.is_some()),
        ("msopgen", msopgen.is_some()),
        ("msprof", msprof.is_some()),
        (
            "a healthy NPU",
            chips.iter().any(|c| c.health.eq_ignore_ascii_case("OK")),
        ),
    ]
    .iter()
    .filter(|(_, present)| !present)
    .map(|(name, _)| *name)
    .collect();
    let cann_tools_present = missing.is_empty();
    lines.push(DoctorLine {
        device: "cann",
        item: "cann device".into(),
        status: if cann_tools_present {
            LineStatus::Ok
        } else {
            LineStatus::Missing
        },
        detail: if cann_tools_present {
            "--device cann[:N] can build, run and profile here (tested against scripted stand-ins of the CANN tools, not yet on a chip: docs/cann.md)".into()
        } else {
            format!("--device cann needs {} (missing here)", missing.join(", "))
        },
        fix: (!cann_tools_present).then(|| {
            "install what the lines above mark MISSING; until then the simulator is the device (no fix needed to use ascendopt)".into()
        }),
    });
    Doctor {
        lines,
        sim_usable,
        cann_tools_present,
    }
}

/// The lines as text, one per check: `STATUS  device  item: detail`, and
/// the fix indented below.
pub fn render(doctor: &Doctor) -> String {
    let mut out = String::new();
    for l in &doctor.lines {
        out.push_str(&format!(
            "{:<8} {:<5} {}: {}\n",
            l.status.label(),
            l.device,
            l.item,
            l.detail
        ));
        if let Some(fix) = &l.fix {
            out.push_str(&format!("{:<14} fix: {fix}\n", ""));
        }
    }
    out.push_str(&format!(
        "\nsimulator: {}\n",
        if doctor.sim_usable {
            "ready (the default device)"
        } else {
            "NOT usable: see the lines above"
        }
    ));
    out
}
