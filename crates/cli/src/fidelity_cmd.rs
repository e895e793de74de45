//! `ascendopt fidelity`: the simulator's timing against figures measured on
//! real hardware, one row per published point: measured figure, model
//! figure, their ratio and its band; fails when a point leaves its band
//! (points the model is known to miss say why and do not fail).

use crate::json_doc::JsonDoc;
use crate::Status;
use anyhow::Result;
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
}

pub fn run(args: FidelityArgs) -> Result<Status> {
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
