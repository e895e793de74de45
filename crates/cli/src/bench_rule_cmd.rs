//! `ascendopt bench-rule`: the acceptance rule's error rates under the
//! simulator's default measurement noise.

use crate::hiargs::resolve_op;
use crate::json_doc::JsonDoc;
use crate::Status;
use anyhow::Result;
use ascendopt_experiments::rule_bench::rule_bench;
use ascendopt_harness::compare::CompareConfig;
use ascendopt_op::package::OpPackage;

/// Arguments of `ascendopt bench-rule`.
#[derive(Debug, clap::Args)]
pub struct BenchRuleArgs {
    #[command(flatten)]
    device: crate::device_arg::DeviceArg,
    /// Operators whose benchmark case is measured.
    #[arg(default_values_t = vec!["add_custom".to_string(), "rms_norm".to_string()])]
    ops: Vec<String>,
    /// Trials per operator.
    #[arg(long, default_value_t = 1000)]
    trials: usize,
    /// The true speedup whose detection rate is measured.
    #[arg(long, default_value_t = 1.03)]
    speedup: f64,
    /// Seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Print one JSON document (docs/schema/ascendopt-output.schema.json)
    /// instead of the table.
    #[arg(long)]
    json: bool,
}

pub fn run(args: BenchRuleArgs) -> Result<Status> {
    let cfg = CompareConfig::RECOMMENDED;
    // On a chip every sample is a timed launch: one run measures all the
    // trials' samples (3 sides x the rule's repeats per trial).
    let device = crate::hiargs::device(
        &args.device,
        None,
        args.trials.saturating_mul(3 * cfg.repeats),
    )?;
    let mut doc = JsonDoc::new("bench-rule");
    doc.field(
        "config",
        serde_json::json!({
            "trials": args.trials,
            "speedup": args.speedup,
            "seed": args.seed,
            "rule": {
                "min_effect": cfg.min_effect,
                "z": cfg.z,
                "repeats": cfg.repeats,
            },
        }),
    );
    if !args.json {
        println!(
            "rule: median improvement > max({:.1}%, {} x SE from the incumbent's MAD); {} samples a side, interleaved",
            cfg.min_effect * 100.0,
            cfg.z,
            cfg.repeats
        );
        println!(
            "{:<20} {:<22} {:>12} {:>8} {:>14} {:>18}",
            "operator",
            "case",
            "latency(us)",
            "cv",
            "false accept",
            format!("{:.0}% speedup found", (args.speedup - 1.0) * 100.0)
        );
    }
    for op in &args.ops {
        let pkg = OpPackage::load(&resolve_op(op)?, &ascendopt_golden::BUILTINS)?;
        let r = rule_bench(&*device, &pkg, &cfg, args.speedup, args.trials, args.seed)?;
        if args.json {
            doc.operator(serde_json::json!({
                "op": pkg.name(),
                "case": r.case,
                "latency_us": r.latency_us,
                "cv": r.cv,
                "false_accept": r.false_accept,
                "power": r.power,
                "speedup": r.speedup,
                "trials": r.trials,
                "repeats": r.repeats,
            }));
            continue;
        }
        println!(
            "{:<20} {:<22} {:>12.1} {:>7.2}% {:>13.1}% {:>17.1}%",
            op,
            r.case,
            r.latency_us,
            r.cv * 100.0,
            r.false_accept * 100.0,
            r.power * 100.0
        );
    }
    if args.json {
        doc.print()?;
    }
    Ok(Status::Ok)
}
