//! `ascendopt compat`: how far operator folders written elsewhere get on
//! the simulator, or on the device of `--device` (compile host and kernel,
//! run and pass, first blockers, APIs the simulator lacks).

use crate::json_doc::JsonDoc;
use crate::Status;
use anyhow::Result;
use ascendopt_harness::pool;
use ascendopt_simtools::compat;
use std::path::PathBuf;

/// Arguments of `ascendopt compat`.
#[derive(Debug, clap::Args)]
pub struct CompatArgs {
    #[command(flatten)]
    device: crate::device_arg::DeviceArg,
    /// Operator folders (with op_host/ and op_kernel/), or folders to search
    /// for them.
    #[arg(required = true)]
    dirs: Vec<PathBuf>,
    /// Print one JSON document (docs/schema/ascendopt-output.schema.json)
    /// instead of the table.
    #[arg(long)]
    json: bool,
    /// Seed of the random inputs.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Operators checked at once.
    #[arg(short = 'j', long, default_value_t = 1)]
    jobs: usize,
    /// Import each folder without an op.toml first (`ascendopt import`,
    /// which writes op.toml and golden.py into it), so that its cases run.
    #[arg(long = "import")]
    import: bool,
}

pub fn run(args: CompatArgs) -> Result<Status> {
    for dir in &args.dirs {
        if !dir.is_dir() {
            anyhow::bail!("{}: not a folder", dir.display());
        }
    }
    let dirs = compat::operator_dirs(&args.dirs);
    if dirs.is_empty() {
        anyhow::bail!(
            "no operator folder (one with op_host/ and op_kernel/) at or under {}",
            args.dirs
                .iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let cfg = crate::hiargs::compat_config(args.seed)?;
    let device = crate::hiargs::device(&args.device, None, 1)?;
    if args.import {
        let import_cfg = crate::hiargs::import_config(false)?;
        let todo: Vec<PathBuf> = dirs
            .iter()
            .filter(|d| !d.join("op.toml").exists())
            .cloned()
            .collect();
        let n = todo.len();
        let mut done = 0;
        pool::for_each_result(
            todo,
            args.jobs,
            |dir| ascendopt_simtools::import::import_one(&import_cfg, &dir),
            |_, report| {
                done += 1;
                match &report.error {
                    None => eprintln!(
                        "[import {done}/{n}] {}: op.toml written",
                        report.dir.display()
                    ),
                    Some(e) => eprintln!("[import {done}/{n}] {}: {e}", report.dir.display()),
                }
            },
        );
    }
    let total = dirs.len();
    let mut rows = vec![None; total];
    let mut done = 0;
    pool::for_each_result(
        dirs,
        args.jobs,
        |dir| compat::check_dir(&*device, &cfg, &dir),
        |i, row| {
            done += 1;
            eprintln!(
                "[{done}/{total}] {}: host {}, kernel {}, run {}",
                row.name,
                row.host.label(),
                row.kernel.label(),
                row.run.label()
            );
            rows[i] = Some(row);
        },
    );
    let rows: Vec<_> = rows.into_iter().flatten().collect();
    if args.json {
        // compat's own document ({summary, operators}) in the one shape:
        // each operator item also named by "op".
        let mut legacy = compat::to_json(&rows);
        let mut doc = JsonDoc::new("compat");
        if let Some(items) = legacy["operators"].as_array_mut() {
            for (item, row) in items.iter_mut().zip(&rows) {
                if let Some(obj) = item.as_object_mut() {
                    obj.insert("op".into(), serde_json::json!(row.name));
                }
                doc.operator(item.take());
            }
        }
        doc.field("summary", legacy["summary"].take());
        doc.field("config", serde_json::json!({ "seed": args.seed }));
        doc.print()?;
    } else {
        print!("{}", compat::render_table(&rows));
    }
    let all_pass = rows.iter().all(|r| r.run.passed());
    Ok(if all_pass { Status::Ok } else { Status::Failed })
}
