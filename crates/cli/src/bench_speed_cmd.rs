//! `ascendopt bench-speed`: how fast the tool itself is: compile time of an
//! operator (cold and cached), functional simulation and timing of its
//! largest case (with `--device cann`: the chip's build, run and profile;
//! no instruction count).

use crate::json_doc::JsonDoc;
use crate::Status;
use anyhow::Result;
use ascendopt_device::select::DeviceChoice;
use ascendopt_device::Device;
use ascendopt_simtools::speed::{self, SpeedRow};

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
    let pkgs = crate::hiargs::load_packages(&dirs)?;
    // A private cache: the first build of each operator is a real compile.
    let cache_dir = tempfile::tempdir()?;
    // On a chip the device's own build folder serves (a build found there
    // is reported as cached, its compile time 0).
    let (device, cache): (Box<dyn Device>, Option<&std::path::Path>) = match args.device.choice()? {
        DeviceChoice::Sim => (
            Box::new(crate::hiargs::sim_device_cached_at(cache_dir.path())?),
            Some(cache_dir.path()),
        ),
        chip => (crate::hiargs::device_of(chip, None, 1)?, None),
    };
    let json = args.json;
    let mut doc = JsonDoc::new("bench-speed");
    if !json {
        println!(
            "{:<28} {:>11} {:>10} {:>24} {:>10} {:>10} {:>9}",
            "operator", "compile ms", "cached ms", "largest case", "run ms", "timing ms", "instrs"
        );
    }
    let summary = speed::measure(&*device, &pkgs, cache, &mut |row| {
        if json {
            doc.operator(serde_json::to_value(row).unwrap_or_default());
            return;
        }
        match row {
            SpeedRow::BuildFailed { op, error } => println!("{op:<28} {error}"),
            SpeedRow::RunFailed {
                op,
                compile_ms,
                cached_ms,
                case,
                error,
            } => println!("{op:<28} {compile_ms:>11} {cached_ms:>10} {case:>24} {error}"),
            SpeedRow::Measured {
                op,
                compile_ms,
                cached_ms,
                case,
                run_ms,
                timing_ms,
                instructions,
            } => println!(
                "{op:<28} {compile_ms:>11} {cached_ms:>10} {case:>24} {run_ms:>10} {timing_ms:>10} {instructions:>9}"
            ),
        }
    })?;
    if json {
        doc.field("summary", serde_json::to_value(summary)?);
        doc.print()?;
        return Ok(Status::Ok);
    }
    println!(
        "median compile {} ms (host and kernel in parallel); median simulation of the largest case {} ms (worker launch + functional run + timing)",
        summary.median_compile_ms, summary.median_simulation_ms
    );
    Ok(Status::Ok)
}
