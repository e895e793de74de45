//! `ascendopt bench-speed`: how fast the tool itself is: compile time of an
//! operator (cold and cached), functional simulation and timing of its
//! largest case (with `--device cann`: the chip's build, run and profile;
//! no instruction count).

use crate::json_doc::JsonDoc;
use crate::Status;
use anyhow::Result;
use ascendopt_device::select::DeviceChoice;
use ascendopt_device::{Device, ProfileRequest, RunOutcome};
use ascendopt_harness::eval::{prepare_case, profile_request};
use ascendopt_harness::pipeline::bench_case;
use ascendopt_op::package::OpPackage;
use ascendopt_sim::build::BuildCache;
use ascendopt_sim::{SimDevice, SimDeviceConfig};
use std::time::Instant;

/// Arguments of `ascendopt bench-speed`.
#[derive(Debug, clap::Args)]
pub struct BenchSpeedArgs {
    #[command(flatten)]
    device: crate::device_arg::DeviceArg,
    /// Operators; none = every built-in operator.
    ops: Vec<String>,
    /// Print one JSON document (docs/schema/ascendopt-output.schema.json)
    /// instead of the table.
    #[arg(long)]
    json: bool,
}

pub fn run(args: BenchSpeedArgs) -> Result<Status> {
    let dirs = crate::hiargs::op_dirs(&args.ops)?;
    // A private cache: the first build of each operator is a real compile.
    let cache_dir = tempfile::tempdir()?;
    // On a chip the device's own build folder serves (a build found there
    // is reported as cached, its compile time 0).
    let device: Box<dyn Device> = match args.device.choice()? {
        DeviceChoice::Sim => {
            let mut config = SimDeviceConfig::standard()?;
            config.cache = BuildCache::at(cache_dir.path());
            Box::new(SimDevice::new(config))
        }
        chip => crate::hiargs::device_of(chip, None, 1)?,
    };
    let json = args.json;
    let mut doc = JsonDoc::new("bench-speed");
    if !json {
        println!(
            "{:<28} {:>11} {:>10} {:>24} {:>10} {:>10} {:>9}",
            "operator", "compile ms", "cached ms", "largest case", "run ms", "timing ms", "instrs"
        );
    }
    let mut compile = Vec::new();
    let mut sim = Vec::new();
    for (i, dir) in dirs.iter().enumerate() {
        let pkg = OpPackage::load(dir, &ascendopt_golden::BUILTINS)?;
        if i == 0 {
            // Warm the shared runtime objects so every figure is one operator.
            let _ = device.build(&pkg);
            for entry in std::fs::read_dir(cache_dir.path())?.flatten() {
                if !entry.file_name().to_string_lossy().starts_with("rt-") {
                    let _ = std::fs::remove_file(entry.path());
                }
            }
        }
        let t = Instant::now();
        let first = device.build(&pkg);
        let cold = t.elapsed().as_millis() as u64;
        let t = Instant::now();
        let artifact = match device.build(&pkg) {
            Ok(a) => a,
            Err(e) => {
                if json {
                    doc.operator(serde_json::json!({
                        "op": pkg.name(), "error": format!("build failed: {e}"),
                    }));
                } else {
                    println!("{:<28} build failed: {e}", pkg.name());
                }
                continue;
            }
        };
        let cached = t.elapsed().as_millis() as u64;
        let cold = if first.as_ref().map(|a| a.cached).unwrap_or(false) {
            0
        } else {
            cold
        };
        let Some(case) = bench_case(&pkg) else {
            continue;
        };
        let prepared = prepare_case(&pkg, case, 1).map_err(anyhow::Error::msg)?;
        let t = Instant::now();
        let outcome = device.run(&artifact, &prepared.request);
        let run_ms = t.elapsed().as_millis() as u64;
        let RunOutcome::Finished(result) = outcome else {
            if json {
                doc.operator(serde_json::json!({
                    "op": pkg.name(), "compile_ms": cold, "cached_ms": cached,
                    "case": case.name, "error": outcome.summary(),
                }));
            } else {
                println!(
                    "{:<28} {cold:>11} {cached:>10} {:>24} {}",
                    pkg.name(),
                    case.name,
                    outcome.summary()
                );
            }
            continue;
        };
        let req: ProfileRequest = profile_request(&prepared, 1, true);
        let t = Instant::now();
        let _ = device.profile(&result, &req);
        let timing_ms = t.elapsed().as_millis() as u64;
        let instrs = ascendopt_sim::device::trace_of(&result).map_or(0, |t| t.len());
        if json {
            doc.operator(serde_json::json!({
                "op": pkg.name(), "compile_ms": cold, "cached_ms": cached,
                "case": case.name, "run_ms": run_ms, "timing_ms": timing_ms,
                "instructions": instrs,
            }));
        } else {
            println!(
                "{:<28} {cold:>11} {cached:>10} {:>24} {run_ms:>10} {timing_ms:>10} {instrs:>9}",
                pkg.name(),
                case.name
            );
        }
        if cold > 0 {
            compile.push(cold);
        }
        sim.push(run_ms + timing_ms);
    }
    let median = |v: &mut Vec<u64>| {
        v.sort();
        v.get(v.len() / 2).copied().unwrap_or(0)
    };
    let (median_compile, median_sim) = (median(&mut compile), median(&mut sim));
    if json {
        doc.field(
            "summary",
            serde_json::json!({
                "median_compile_ms": median_compile,
                "median_simulation_ms": median_sim,
            }),
        );
        doc.print()?;
        return Ok(Status::Ok);
    }
    println!(
        "median compile {median_compile} ms (host and kernel in parallel); median simulation of the largest case {median_sim} ms (worker launch + functional run + timing)",
    );
    Ok(Status::Ok)
}
