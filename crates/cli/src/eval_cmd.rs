//! `ascendopt eval`: check operators on the simulator, with the same
//! hardened judge as the optimiser's loop (static check, poisoned outputs,
//! every case run twice, hazards, the hardware-limit guard, a re-check on
//! fresh inputs); `--quick` for one plain run per case.

use crate::json_doc::JsonDoc;
use crate::Status;
use anyhow::{Context, Result};
use ascendopt_device::msprof_csv;
use ascendopt_device::{Device, DeviceError};
use ascendopt_harness::eval::{self, CaseSelector, CaseVerdict, CheckConfig, OpCheck};
use ascendopt_op::package::OpPackage;
use std::path::{Path, PathBuf};

/// Arguments of `ascendopt eval`.
#[derive(Debug, clap::Args)]
pub struct EvalArgs {
    #[command(flatten)]
    device: crate::device_arg::DeviceArg,
    /// Operator folders (containing op.toml) or built-in operator names;
    /// none = every built-in operator.
    ops: Vec<String>,
    /// Only this case (0-based index or name).
    #[arg(long)]
    case: Option<String>,
    /// Seed of the random inputs.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Print one JSON document instead of text (the shape of
    /// docs/schema/ascendopt-output.schema.json).
    #[arg(long)]
    json: bool,
    /// Print the msprof-style profile of every passing case.
    #[arg(long)]
    profile: bool,
    /// Write msprof op's OpBasicInfo.csv and PipeUtilization.csv of every
    /// passing case into DIR/<op>/<case>/ (implies --profile).
    #[arg(long, value_name = "DIR")]
    msprof_dir: Option<PathBuf>,
    /// Profile without measurement noise (identical latency every run).
    #[arg(long)]
    deterministic: bool,
    /// Write a Chrome Trace Event JSON timeline (Perfetto, chrome://tracing)
    /// of each passing case: to FILE for one case, else FILE with the case
    /// name inserted before the extension.
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// Wall-clock limit of one launch, in seconds.
    #[arg(long, default_value_t = 60)]
    timeout: u64,
    /// One plain run per case: no static check, no second run, no
    /// hardware-limit guard, no re-check.
    #[arg(long)]
    quick: bool,
}

pub fn run(args: EvalArgs) -> Result<Status> {
    let dirs = crate::hiargs::op_dirs(&args.ops)?;
    let args_case = args.case.clone();
    let case = args.case.map(|c| match c.parse::<usize>() {
        Ok(i) => CaseSelector::Index(i),
        Err(_) => CaseSelector::Name(c),
    });
    let cfg = CheckConfig {
        case,
        seed: args.seed,
        profile: args.profile || args.msprof_dir.is_some(),
        deterministic: args.deterministic,
        timeline: args.trace.is_some(),
    };
    let device = crate::hiargs::device(
        &args.device,
        Some(args.timeout),
        ascendopt_harness::compare::CompareConfig::RECOMMENDED.repeats,
    )?;
    let mut packages = Vec::new();
    for dir in &dirs {
        packages.push(OpPackage::load(dir, &ascendopt_golden::BUILTINS)?);
    }
    let mut checks = Vec::new();
    let mut all_passed = true;
    for pkg in &packages {
        let check = if args.quick {
            eval::check_op(&*device, pkg, &cfg)?
        } else {
            eval::judge_op(&*device, pkg, &cfg)?
        };
        all_passed &= check.passed();
        if !args.json {
            print_text(&check, &*device);
        }
        if let Some(path) = &args.trace {
            // The judge's extra runs (re-check, fresh shapes) carry no
            // timeline: only cases with one decide the file names.
            let timelines = check.cases.iter().filter(|c| c.timeline.is_some()).count();
            write_timelines(&check, path, packages.len() * timelines > 1)?;
        }
        if let Some(dir) = &args.msprof_dir {
            write_msprof(&check, &pkg.spec.kernel, dir, !args.json)?;
        }
        checks.push(check);
    }
    if args.json {
        let mut doc = JsonDoc::new("eval");
        for check in &checks {
            doc.operator(eval::to_json(check));
        }
        doc.field(
            "config",
            serde_json::json!({
                "seed": cfg.seed,
                "case": args_case,
                "profile": cfg.profile,
                "deterministic": cfg.deterministic,
                "timeout_s": args.timeout,
            }),
        );
        doc.field(
            "summary",
            serde_json::json!({
                "operators": checks.len(),
                "passed": checks.iter().filter(|c| c.passed()).count(),
            }),
        );
        doc.print()?;
    } else if checks.len() > 1 {
        let passed = checks.iter().filter(|c| c.passed()).count();
        println!("{passed}/{} operators passed", checks.len());
    }
    Ok(if all_passed {
        Status::Ok
    } else {
        Status::Failed
    })
}

/// Writes msprof's CSV files of every profiled case into
/// `dir/<op>/<case>/`.
fn write_msprof(check: &OpCheck, kernel: &str, dir: &Path, say: bool) -> Result<()> {
    for c in &check.cases {
        let Some(Ok(profile)) = &c.profile else {
            continue;
        };
        let case_dir = dir.join(&check.op).join(&c.name);
        msprof_csv::write_dir(&case_dir, kernel, profile)
            .with_context(|| format!("writing msprof files into {}", case_dir.display()))?;
        if say {
            eprintln!(
                "msprof files of {}/{} written to {}",
                check.op,
                c.name,
                case_dir.display()
            );
        }
    }
    Ok(())
}

fn write_timelines(check: &OpCheck, path: &Path, several: bool) -> Result<()> {
    for c in &check.cases {
        let Some(timeline) = &c.timeline else {
            continue;
        };
        let json = timeline
            .as_ref()
            .map_err(|e| anyhow::anyhow!("{}/{}: no timeline: {e}", check.op, c.name))?;
        let file = if several {
            let stem = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let ext = path
                .extension()
                .map(|e| format!(".{}", e.to_string_lossy()))
                .unwrap_or_default();
            path.with_file_name(format!("{stem}.{}.{}{ext}", check.op, c.name))
        } else {
            path.to_path_buf()
        };
        std::fs::write(&file, json).with_context(|| format!("writing {}", file.display()))?;
        eprintln!(
            "timeline of {}/{} written to {}",
            check.op,
            c.name,
            file.display()
        );
    }
    Ok(())
}

fn print_text(check: &OpCheck, device: &dyn Device) {
    for note in &check.notes {
        println!("{}: note: {note}", check.op);
    }
    match &check.build {
        Ok(a) => println!(
            "{} on {}{}: built{}",
            check.op,
            device.name(),
            match &a.chip {
                // The chip the operator is judged on, when it is not the
                // device's default (op.toml `chip`, or --chip).
                Some(chip) if !device.name().ends_with(chip.as_str()) => {
                    format!(", chip {chip}")
                }
                _ => String::new(),
            },
            if a.cached {
                " (cached)".to_string()
            } else {
                format!(" in {} ms", a.compile_ms)
            }
        ),
        Err(DeviceError::Compile {
            summary,
            diagnostics,
            units,
        }) => {
            if units.is_empty() {
                println!("{}: COMPILE ERROR: {summary}", check.op);
            }
            for u in units {
                println!(
                    "{}: COMPILE ERROR ({}): {}: {}",
                    check.op, u.unit, u.location, u.message
                );
            }
            for line in diagnostics.lines().take(40) {
                println!("    {line}");
            }
            return;
        }
        Err(e) => {
            println!("{}: BUILD FAILED: {e}", check.op);
            return;
        }
    }
    for c in &check.cases {
        let head = format!("  {:<24} {:<44}", c.name, c.signature);
        match &c.verdict {
            CaseVerdict::Hazard => {
                println!("{head} FAIL  hazards in the trace (results would depend on timing on the NPU):");
                if let Some(r) = &c.run {
                    for h in &r.hazards {
                        println!("      {} : {}", h.kind, h.message);
                    }
                }
            }
            CaseVerdict::Pass | CaseVerdict::Mismatch => {
                let label = if c.verdict.passed() { "PASS" } else { "FAIL" };
                let worst_abs = c
                    .outputs
                    .iter()
                    .map(|o| o.report.max_abs_err)
                    .fold(0.0, f64::max);
                let worst_rel = c
                    .outputs
                    .iter()
                    .map(|o| o.report.max_rel_err)
                    .fold(0.0, f64::max);
                let bad: usize = c.outputs.iter().map(|o| o.report.mismatches).sum();
                let total: usize = c.outputs.iter().map(|o| o.report.total).sum();
                let blocks = c.run.as_ref().map(|r| r.tiling.block_dim).unwrap_or(0);
                println!(
                    "{head} {label}  max abs {worst_abs:.2e}  max rel {worst_rel:.2e}  {bad}/{total} bad  blocks {blocks}  {} ms",
                    c.run_ms
                );
                for o in c.outputs.iter().filter(|o| !o.report.passed()) {
                    println!("      {}: {}", o.name, o.report);
                }
            }
            CaseVerdict::RunFailed(o) => println!("{head} FAIL  {}", o.summary()),
            CaseVerdict::GoldenFailed(m) => println!("{head} FAIL  golden: {m}"),
            CaseVerdict::Refused(m) => println!("{head} FAIL  {m}"),
        }
        if let Some(r) = &c.run {
            for f in &r.findings {
                println!("      note ({}): {}", f.kind, f.message);
            }
        }
        match &c.profile {
            Some(Ok(p)) => {
                for line in p.render_text().lines() {
                    println!("      {line}");
                }
            }
            Some(Err(e)) => println!("      profile: {e}"),
            None => {}
        }
    }
}
