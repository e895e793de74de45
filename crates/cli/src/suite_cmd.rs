//! `ascendopt suite`: check every built-in operator and write the table of
//! ops/README.md.

use crate::hiargs::resolve_op;
use crate::json_doc::JsonDoc;
use crate::Status;
use anyhow::{Context, Result};
use ascendopt_experiments::suite::{render_markdown, suite_row, SuiteRow};
use ascendopt_op::package::{builtin_ops_dir, package_dirs, OpPackage};
use std::path::PathBuf;

/// Arguments of `ascendopt suite`.
#[derive(Debug, clap::Args)]
pub struct SuiteArgs {
    #[command(flatten)]
    device: crate::device_arg::DeviceArg,
    /// Operators (folders or built-in names); none = every built-in operator.
    ops: Vec<String>,
    /// Write the Markdown table to this file (e.g. ops/README.md) instead of
    /// printing it.
    #[arg(long, value_name = "FILE")]
    write: Option<PathBuf>,
    /// Seed of the random inputs.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Print one JSON document (docs/schema/ascendopt-output.schema.json)
    /// instead of the table.
    #[arg(long, conflicts_with = "write")]
    json: bool,
}

/// One row as a `--json` operator item.
fn row_json(row: &SuiteRow) -> serde_json::Value {
    serde_json::json!({
        "op": row.op,
        "level": row.level,
        "dtypes": row.dtypes,
        "cases": row.cases,
        "passed": row.passed,
        "largest_case": row.largest,
        "latency_us": row.latency_us,
        "floor_us": row.floor_us,
        "launch_us": row.launch_us,
        "roofline_fraction": row.roofline_fraction(),
        "launch_share": row.launch_share(),
        "memory_bound": row.memory_bound,
        "meets_bar": row.meets_bar(),
        "note": row.note,
        "deviation": row.deviation,
        "failure": row.failure,
    })
}

pub fn run(args: SuiteArgs) -> Result<Status> {
    let dirs = if args.ops.is_empty() {
        package_dirs(&builtin_ops_dir()).context("listing the built-in operators")?
    } else {
        args.ops
            .iter()
            .map(|a| resolve_op(a))
            .collect::<Result<Vec<_>>>()?
    };
    let device = crate::hiargs::device(
        &args.device,
        None,
        ascendopt_harness::compare::CompareConfig::RECOMMENDED.repeats,
    )?;
    let mut rows = Vec::new();
    for dir in &dirs {
        // A package that does not load is a failed row, not the end of the
        // table.
        let row = match OpPackage::load(dir, &ascendopt_golden::BUILTINS) {
            Ok(pkg) => suite_row(&*device, &pkg, args.seed),
            Err(e) => SuiteRow::failed(
                &dir.file_name().unwrap_or_default().to_string_lossy(),
                e.to_string(),
            ),
        };
        eprintln!(
            "{:<28} {}/{} cases  {}",
            row.op,
            row.passed,
            row.cases,
            match (row.roofline_fraction(), row.launch_share(), row.meets_bar()) {
                (Some(f), Some(l), true) =>
                    format!("{:.1}% of roofline, launch {:.1}%", f * 100.0, l * 100.0),
                (Some(f), Some(l), false) => format!(
                    "{:.1}% of roofline, launch {:.1}% — BELOW THE BAR",
                    f * 100.0,
                    l * 100.0
                ),
                _ => row.failure.clone().unwrap_or_else(|| "no profile".into()),
            }
        );
        rows.push(row);
    }
    let markdown = render_markdown(
        &rows,
        "cargo run --release -p ascendopt -- suite --write ops/README.md",
    );
    if args.json {
        let mut doc = JsonDoc::new("suite");
        for row in &rows {
            doc.operator(row_json(row));
        }
        doc.field(
            "summary",
            serde_json::json!({
                "operators": rows.len(),
                "meet_bar": rows.iter().filter(|r| r.meets_bar()).count(),
            }),
        );
        doc.field("config", serde_json::json!({ "seed": args.seed }));
        doc.print()?;
        return Ok(if rows.iter().all(|r| r.meets_bar()) {
            Status::Ok
        } else {
            Status::Failed
        });
    }
    match &args.write {
        Some(path) => {
            std::fs::write(path, &markdown)
                .with_context(|| format!("writing {}", path.display()))?;
            eprintln!("wrote {}", path.display());
        }
        None => print!("{markdown}"),
    }
    Ok(if rows.iter().all(|r| r.meets_bar()) {
        Status::Ok
    } else {
        Status::Failed
    })
}
