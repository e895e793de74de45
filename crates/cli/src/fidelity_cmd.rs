//! `ascendopt fidelity`: the simulator's timing against figures measured on
//! real hardware, one row per published point: measured figure, model
//! figure, their ratio and its band; fails when a point leaves its band
//! (points the model is known to miss say why and do not fail).
//! With `--device cann[:N]`: the simulator against that chip instead, per
//! operator (`ascendopt_agent::sim_vs_chip`).

use crate::json_doc::JsonDoc;
use crate::Status;
use anyhow::{bail, Result};
use ascendopt_device::select::DeviceChoice;
use ascendopt_experiments::sim_vs_chip;
use ascendopt_harness::compare::CompareConfig;
use ascendopt_simtools::fidelity::{self, Options};

/// Arguments of `ascendopt fidelity`.
#[derive(Debug, clap::Args)]
pub struct FidelityArgs {
    /// Only the points that need no kernel build (what CI runs).
    #[arg(long)]
    fast: bool,
    /// Print the points as JSON.
    #[arg(long)]
    json: bool,
    /// Seed of the fixture kernels' inputs.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// `cann` or `cann:N` (or `sim,cann:N`): compare the simulator with
    /// that chip on OPS instead: a Stage II search on the simulator, its
    /// correct candidates measured again on the chip; per operator the
    /// latency ratio and Spearman's rank correlation.
    #[command(flatten)]
    device: crate::device_arg::DeviceArg,
    /// Operators compared with `--device cann` (names or folders).
    #[arg(requires = "device", default_values_t = vec!["add_custom".to_string()])]
    ops: Vec<String>,
    /// Stage II evaluations on the simulator per operator (`--device cann`).
    #[arg(long, default_value_t = 12)]
    budget: u32,
    /// Where `--device cann` keeps its run store and candidates (default:
    /// a temporary folder).
    #[arg(long, value_name = "DIR")]
    out: Option<std::path::PathBuf>,
}

pub fn run(args: FidelityArgs) -> Result<Status> {
    let chips: Vec<u32> = args
        .device
        .choices()?
        .into_iter()
        .filter_map(|c| match c {
            DeviceChoice::Cann { id } => Some(id),
            DeviceChoice::Sim => None,
        })
        .collect();
    match chips.as_slice() {
        [] => {}
        [id] => return side_by_side(&args, *id),
        _ => bail!("fidelity compares the simulator with one chip: give --device cann:N"),
    }
    let device = crate::hiargs::sim_device(None)?;
    let points = fidelity::run(
        &device,
        &Options {
            fast: args.fast,
            seed: args.seed,
        },
    )?;
    if args.json {
        let count = |status| points.iter().filter(|p| p.status() == status).count();
        let rows: Vec<serde_json::Value> = points
            .iter()
            .map(|p| {
                let mut row = serde_json::to_value(p).unwrap_or_default();
                row["ratio"] = serde_json::json!(p.ratio());
                row["status"] = serde_json::json!(p.status().label());
                row
            })
            .collect();
        JsonDoc::new("fidelity")
            .field("points", serde_json::Value::Array(rows))
            .field(
                "summary",
                serde_json::json!({
                    "points": points.len(),
                    "pass": count(fidelity::Status::Pass),
                    "known_misses": count(fidelity::Status::KnownMiss),
                    "fail": count(fidelity::Status::Fail),
                }),
            )
            .print()?;
    } else {
        print!("{}", fidelity::render(&points));
    }
    Ok(
        if points.iter().any(|p| p.status() == fidelity::Status::Fail) {
            Status::Failed
        } else {
            Status::Ok
        },
    )
}

/// `fidelity --device cann:N`: the simulator against chip `id`.
fn side_by_side(args: &FidelityArgs, id: u32) -> Result<Status> {
    let tmp;
    let root = match &args.out {
        Some(d) => d.clone(),
        None => {
            tmp = tempfile::tempdir()?;
            tmp.path().to_path_buf()
        }
    };
    let sim = crate::hiargs::sim_device(None)?;
    let chip = crate::hiargs::device_of(
        DeviceChoice::Cann { id },
        None,
        CompareConfig::RECOMMENDED.repeats,
    )?;
    let dirs = args
        .ops
        .iter()
        .map(|op| crate::hiargs::resolve_op(op))
        .collect::<Result<Vec<_>>>()?;
    let pkgs = crate::hiargs::load_packages(&dirs)?;
    let rows = sim_vs_chip::compare_all(&sim, &*chip, &pkgs, &root, args.budget, args.seed)?;
    if args.json {
        let mut doc = JsonDoc::new("fidelity device");
        doc.field("device", serde_json::json!(chip.name()));
        for r in &rows {
            doc.operator(serde_json::to_value(r)?);
        }
        doc.print()?;
    } else {
        println!("simulator against {}:", chip.name());
        print!("{}", sim_vs_chip::render(&rows));
    }
    Ok(if rows.iter().all(|r| r.chip_us.is_some()) {
        Status::Ok
    } else {
        Status::Failed
    })
}
