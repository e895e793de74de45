//! ascendopt command-line interface: parses arguments, calls one library
//! function per command, prints the result. Exit codes: 0 success, 1 the
//! command ran and found a failure (a case failed), 2 bad usage or input.

mod bank_cmd;
mod bench_cmd;
mod bench_evals_cmd;
mod bench_naive_cmd;
mod bench_rule_cmd;
mod bench_speed_cmd;
mod bench_tiling_cmd;
mod compat_cmd;
mod device_arg;
mod doctor_cmd;
mod eval_cmd;
mod fidelity_cmd;
mod hiargs;
mod import_cmd;
mod json_doc;
mod llm_args;
mod optimize_cmd;
mod progress;
mod rewind_cmd;
mod run_cmd;
mod suite_cmd;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Make AscendC operators faster (simulated Ascend 910B2 by default).
#[derive(Debug, Parser)]
#[command(name = "ascendopt", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// The main job: Rewind over the built-in operators into a bank, then
    /// Stage I and II on a representative subset; writes a report.
    Run(run_cmd::RunArgs),
    /// Rewind: learn experience entries by removing optimisations from
    /// strong kernels.
    Rewind(rewind_cmd::RewindArgs),
    /// Inspect and move experience banks.
    Bank(bank_cmd::BankArgs),
    /// Optimise one operator: Stage I (kernel refinement) then Stage II
    /// (tiling search) under one budget.
    Optimize(optimize_cmd::OptimizeArgs),
    /// Compare methods at equal budget over operators; writes a report.
    Bench(bench_cmd::BenchArgs),
    /// Build operators, run their cases against the golden reference and
    /// print per-case verdicts.
    Eval(eval_cmd::EvalArgs),
    /// Check every built-in operator, profile its largest case and print
    /// (or write) the operator table of ops/README.md.
    Suite(suite_cmd::SuiteArgs),
    /// Measure the acceptance rule: false accepts of identical kernels and
    /// detection of a true speedup, under the simulator's default noise.
    BenchRule(bench_rule_cmd::BenchRuleArgs),
    /// Measure the tool itself: compile time (cold and cached) and
    /// simulation time of each operator's largest case.
    BenchSpeed(bench_speed_cmd::BenchSpeedArgs),
    /// Measure Stage II against random search at twice its evaluations.
    BenchTiling(bench_tiling_cmd::BenchTilingArgs),
    /// The full method on naive operators (benches/naive) at one or more
    /// budgets, against the strong built-in operators: GM speedup, share of
    /// the gap closed, evaluations spent.
    BenchNaive(bench_naive_cmd::BenchNaiveArgs),
    /// Measure evaluations per minute and where an evaluation's time goes.
    BenchEvals(bench_evals_cmd::BenchEvalsArgs),
    /// The simulator's timing against figures measured on real hardware:
    /// one row per published point, failing when a point leaves its band.
    Fidelity(fidelity_cmd::FidelityArgs),
    /// What this machine has for each device (the simulator; the CANN
    /// toolkit, its tools and the NPUs), each line OK or the fix.
    Doctor(doctor_cmd::DoctorArgs),
    /// Check operator folders written elsewhere: do host and kernel compile,
    /// do the cases run and pass, what blocks each unit, which APIs the
    /// simulator lacks.
    Compat(compat_cmd::CompatArgs),
    /// Write the op.toml (and golden.py) of msopgen operator folders written elsewhere.
    Import(import_cmd::ImportArgs),
}

/// What a command concluded.
pub enum Status {
    /// Everything passed.
    Ok,
    /// The command ran and found failures.
    Failed,
}

fn main() -> ExitCode {
    // The sandboxed worker: the CLI binary doubles as the worker process.
    if std::env::args_os().nth(1).is_some_and(|a| a == "__worker") {
        return ascendopt_sim::worker::worker_main();
    }
    // Whatever this binary is called, it answers `__worker` itself.
    ascendopt_sim::worker::serve_worker_from_this_executable();
    // Evaluations reuse warm heap pages instead of fresh mappings.
    ascendopt_harness::memory::keep_freed_memory();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(args) => run_cmd::run(args),
        Command::Rewind(args) => rewind_cmd::run(args),
        Command::Bank(args) => bank_cmd::run(args),
        Command::Optimize(args) => optimize_cmd::run(args),
        Command::Bench(args) => bench_cmd::run(args),
        Command::BenchTiling(args) => bench_tiling_cmd::run(args),
        Command::BenchNaive(args) => bench_naive_cmd::run(args),
        Command::BenchEvals(args) => bench_evals_cmd::run(args),
        Command::Compat(args) => compat_cmd::run(args),
        Command::Import(args) => import_cmd::run(args),
        Command::Fidelity(args) => fidelity_cmd::run(args),
        Command::Doctor(args) => doctor_cmd::run(args),
        Command::Eval(args) => eval_cmd::run(args),
        Command::Suite(args) => suite_cmd::run(args),
        Command::BenchRule(args) => bench_rule_cmd::run(args),
        Command::BenchSpeed(args) => bench_speed_cmd::run(args),
    };
    match result {
        Ok(Status::Ok) => ExitCode::SUCCESS,
        Ok(Status::Failed) => ExitCode::from(1),
        Err(err) => {
            eprintln!("error: {}", chain_text(&err));
            ExitCode::from(2)
        }
    }
}

/// `err` and its causes joined with `: ` (as `{:#}` does), leaving out a
/// cause whose message the text already holds: the libraries' errors show
/// their typed source in their own message (`path: why`) and also hand it
/// on as their `source()`.
fn chain_text(err: &anyhow::Error) -> String {
    let mut text = err.to_string();
    for cause in err.chain().skip(1) {
        let cause = cause.to_string();
        if !text.contains(&cause) {
            text.push_str(": ");
            text.push_str(&cause);
        }
    }
    text
}
