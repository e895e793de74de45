//! The simulator and a chip side by side (`ascendopt fidelity --device
//! cann`): a Stage II search runs on the simulator, and every correct
//! candidate it evaluated (the input included) is evaluated again on the
//! chip. Per operator: the input's latency on each, their ratio
//! (chip / simulator), and whether the two rank the candidates the same
//! way (Spearman's rank correlation of the two latencies over the
//! candidates correct on both, and whether both pick the same fastest
//! one). docs/cann.md says how to recalibrate a profile from it.

use crate::bench::BenchError;
use ascendopt_agent::attempts::Tried;
use ascendopt_agent::session::{Action, OpSession, Phase, RunContext};
use ascendopt_agent::tune::{tune, TuneConfig};
use ascendopt_agent::{AgentError, PackageError};
use ascendopt_device::Device;
use ascendopt_harness::compare::CompareConfig;
use ascendopt_harness::ledger::BudgetConfig;
use ascendopt_harness::pipeline::PipelineConfig;
use ascendopt_harness::store::RunStore;
use ascendopt_harness::store::SourceHash;
use ascendopt_motif::{MotifError, Sources};
use ascendopt_op::package::OpPackage;
use std::path::Path;

/// One operator's comparison.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct DeviceComparison {
    /// The operator.
    pub op: String,
    /// Stage II's evaluations on the simulator.
    pub budget: u32,
    /// The input's median latency on the simulator, µs.
    pub sim_us: Option<f64>,
    /// ... and on the chip.
    pub chip_us: Option<f64>,
    /// chip / simulator for the input.
    pub ratio: Option<f64>,
    /// Every candidate (the input first): its latency on each device
    /// (None: not correct there).
    pub candidates: Vec<(Option<f64>, Option<f64>)>,
    /// Spearman's ρ over the candidates correct on both (None: fewer than
    /// two, or one side's latencies all equal).
    pub spearman: Option<f64>,
    /// Both devices' fastest candidate is the same one.
    pub same_best: Option<bool>,
}

/// Ranks of `xs` (1-based), ties getting their average rank.
fn ranks(xs: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..xs.len()).collect();
    order.sort_by(|&a, &b| xs[a].total_cmp(&xs[b]));
    let mut r = vec![0.0; xs.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && xs[order[j + 1]] == xs[order[i]] {
            j += 1;
        }
        let avg = (i + j) as f64 / 2.0 + 1.0;
        for &k in &order[i..=j] {
            r[k] = avg;
        }
        i = j + 1;
    }
    r
}

/// Spearman's rank correlation of paired samples: the Pearson correlation
/// of their ranks (average ranks for ties); None with fewer than two pairs
/// or when one side has no spread.
pub fn spearman(pairs: &[(f64, f64)]) -> Option<f64> {
    if pairs.len() < 2 {
        return None;
    }
    let a = ranks(&pairs.iter().map(|p| p.0).collect::<Vec<_>>());
    let b = ranks(&pairs.iter().map(|p| p.1).collect::<Vec<_>>());
    let n = a.len() as f64;
    let (ma, mb) = (a.iter().sum::<f64>() / n, b.iter().sum::<f64>() / n);
    let (mut sab, mut saa, mut sbb) = (0.0, 0.0, 0.0);
    for (x, y) in a.iter().zip(&b) {
        sab += (x - ma) * (y - mb);
        saa += (x - ma) * (x - ma);
        sbb += (y - mb) * (y - mb);
    }
    if saa == 0.0 || sbb == 0.0 {
        return None;
    }
    Some(sab / (saa * sbb).sqrt())
}

/// `text` (a candidate as the run store holds it: `//== <path> ==`
/// sections) applied over `input`'s sources.
fn sources_of(input: &Sources, text: &str) -> Result<Sources, MotifError> {
    let mut out = input.clone();
    let mut current: Option<(String, String)> = None;
    let flush = |cur: Option<(String, String)>, out: &mut Sources| -> Result<(), MotifError> {
        if let Some((path, body)) = cur {
            if path != "package files (sha256)" {
                out.set(&path, body)?;
            }
        }
        Ok(())
    };
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_end_matches('\n');
        if let Some(path) = trimmed
            .strip_prefix("//== ")
            .and_then(|r| r.strip_suffix(" =="))
        {
            flush(current.take(), &mut out)?;
            current = Some((path.to_string(), String::new()));
        } else if let Some((_, body)) = current.as_mut() {
            body.push_str(line);
        }
    }
    flush(current, &mut out)?;
    Ok(out)
}

/// Runs Stage II with `budget` evaluations on `sim` (the simulator's run)
/// and evaluates its correct candidates again on `chip` (the chip's run).
pub fn compare_devices(
    sim: &RunContext<'_>,
    chip: &RunContext<'_>,
    pkg: &OpPackage,
    budget: u32,
    seed: u64,
) -> Result<DeviceComparison, AgentError> {
    let input = Sources::load(&pkg.dir)?;
    let action = |summary: &str| Action {
        proposer: "sim-vs-chip".into(),
        motif: None,
        summary: summary.into(),
        entries: Vec::new(),
    };
    let mut on_sim = OpSession::open(
        sim,
        pkg,
        BudgetConfig {
            rewind: 0,
            online: budget + 1,
        },
    )?;
    let base = on_sim.evaluate(Phase::Baseline, &input, action("the input operator"))?;
    let mut sim_side: Vec<(String, f64)> = Vec::new();
    if let Some(l) = base.latency_us() {
        sim_side.push((base.evaluated.source_hash.as_str().to_string(), l));
        let mut tried = Tried::new();
        tune(
            &mut on_sim,
            &mut crate::tiling::NoEdits,
            base.clone(),
            &TuneConfig::new(budget, seed),
            &mut tried,
            &mut |_| {},
        )?;
        for e in on_sim.log() {
            if e.phase != Phase::Tune || e.source_hash.is_empty() {
                continue;
            }
            if let Some(l) = e.latency_us {
                if !sim_side.iter().any(|(h, _)| *h == e.source_hash) {
                    sim_side.push((e.source_hash.clone(), l));
                }
            }
        }
    }
    let mut on_chip = OpSession::open(
        chip,
        pkg,
        BudgetConfig {
            rewind: 0,
            online: u32::try_from(sim_side.len()).unwrap_or(u32::MAX).max(1),
        },
    )?;
    let mut candidates = Vec::new();
    for (i, (hash, sim_us)) in sim_side.iter().enumerate() {
        // A run-store failure is that error; a hash the store does not hold
        // (or that is no hash) is a candidate the comparison cannot make.
        let stored = match SourceHash::from_hex(hash) {
            Some(h) => sim.store.get_source(&h)?,
            None => None,
        };
        let text = stored.ok_or_else(|| AgentError::Package {
            dir: pkg.dir.clone(),
            source: PackageError::Unusable(format!("candidate {hash} is not in the run store")),
        })?;
        let sources = sources_of(&input, &text)?;
        let phase = if i == 0 { Phase::Baseline } else { Phase::Tune };
        let trial = on_chip.evaluate(phase, &sources, action("a Stage II candidate"))?;
        candidates.push((Some(*sim_us), trial.latency_us()));
    }
    let both: Vec<(f64, f64)> = candidates
        .iter()
        .filter_map(|c| match c {
            (Some(a), Some(b)) => Some((*a, *b)),
            _ => None,
        })
        .collect();
    let argmin = |side: fn(&(f64, f64)) -> f64| {
        both.iter()
            .enumerate()
            .min_by(|a, b| side(a.1).total_cmp(&side(b.1)))
            .map(|(i, _)| i)
    };
    let same_best = match (argmin(|p| p.0), argmin(|p| p.1)) {
        (Some(a), Some(b)) if both.len() >= 2 => Some(a == b),
        _ => None,
    };
    let sim_us = candidates.first().and_then(|c| c.0);
    let chip_us = candidates.first().and_then(|c| c.1);
    Ok(DeviceComparison {
        op: pkg.name().to_string(),
        budget,
        sim_us,
        chip_us,
        ratio: match (sim_us, chip_us) {
            (Some(s), Some(c)) if s > 0.0 => Some(c / s),
            _ => None,
        },
        spearman: spearman(&both),
        same_best,
        candidates,
    })
}

/// `ascendopt fidelity --device cann:N` as one call: every package of
/// `pkgs` compared ([`compare_devices`]), each side in a run of its own in
/// the run store `root/runs.sqlite` (candidates under `root/work/sim` and
/// `root/work/chip`), measured with noise and the acceptance rule's
/// repeats.
pub fn compare_all(
    sim: &dyn Device,
    chip: &dyn Device,
    pkgs: &[OpPackage],
    root: &Path,
    budget: u32,
    seed: u64,
) -> Result<Vec<DeviceComparison>, BenchError> {
    std::fs::create_dir_all(root).map_err(|e| crate::bench::io(root, e))?;
    let store = RunStore::open(&root.join("runs.sqlite"))?;
    let compare = CompareConfig::RECOMMENDED;
    let pipeline = PipelineConfig {
        repeats: compare.repeats,
        deterministic: false,
        seed,
    };
    let mut rows = Vec::new();
    for pkg in pkgs {
        let run = |name: &str| {
            store.create_run(&serde_json::json!({
                "command": "fidelity", "device": name, "op": pkg.name(),
                "budget": budget, "seed": seed,
            }))
        };
        let sim_ctx = RunContext {
            device: sim,
            store: &store,
            run: run("sim")?,
            pipeline: pipeline.clone(),
            compare,
            workdir: root.join("work").join("sim"),
        };
        let chip_ctx = RunContext {
            device: chip,
            store: &store,
            run: run("chip")?,
            pipeline: pipeline.clone(),
            compare,
            workdir: root.join("work").join("chip"),
        };
        rows.push(compare_devices(&sim_ctx, &chip_ctx, pkg, budget, seed)?);
    }
    Ok(rows)
}

/// The comparison as a table, one row per operator.
pub fn render(rows: &[DeviceComparison]) -> String {
    let opt = |v: Option<f64>, p: usize| v.map_or("-".to_string(), |v| format!("{v:.p$}"));
    let mut out = format!(
        "{:<22} {:>10} {:>10} {:>10} {:>10} {:>10} {:>9}\n",
        "operator", "candidates", "sim(us)", "chip(us)", "chip/sim", "spearman", "same best"
    );
    for r in rows {
        let both = r
            .candidates
            .iter()
            .filter(|c| c.0.is_some() && c.1.is_some())
            .count();
        out.push_str(&format!(
            "{:<22} {:>10} {:>10} {:>10} {:>10} {:>10} {:>9}\n",
            r.op,
            format!("{both}/{}", r.candidates.len()),
            opt(r.sim_us, 2),
            opt(r.chip_us, 2),
            opt(r.ratio, 3),
            opt(r.spearman, 3),
            r.same_best.map_or("-", |b| if b { "yes" } else { "no" }),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spearman_of_known_rankings() {
        let same = [(1.0, 10.0), (2.0, 20.0), (3.0, 35.0), (4.0, 36.0)];
        assert_eq!(spearman(&same), Some(1.0));
        let reversed = [(1.0, 4.0), (2.0, 3.0), (3.0, 2.0), (4.0, 1.0)];
        assert_eq!(spearman(&reversed), Some(-1.0));
        // Textbook case: d = (0, 1, -1, 0, 0): rho = 1 - 6*2/(5*24) = 0.9.
        let one_swap = [(1.0, 1.0), (2.0, 3.0), (3.0, 2.0), (4.0, 4.0), (5.0, 5.0)];
        assert!((spearman(&one_swap).unwrap() - 0.9).abs() < 1e-12);
        // Ties take their average rank.
        assert_eq!(ranks(&[5.0, 1.0, 5.0, 2.0]), vec![3.5, 1.0, 3.5, 2.0]);
        assert_eq!(spearman(&[(1.0, 2.0)]), None);
        assert_eq!(spearman(&[(1.0, 2.0), (2.0, 2.0)]), None, "no spread");
    }

    #[test]
    fn a_stored_candidate_is_applied_over_the_input() {
        let input = Sources::from_files([
            ("op_host/a.cpp", "int a = 1;\n"),
            ("op_kernel/k.cpp", "k\n"),
        ]);
        let text = "//== op_host/a.cpp ==\nint a = 2;\n//== op_kernel/k.cpp ==\nk\n//== package files (sha256) ==\nabc  op.toml\n";
        let s = sources_of(&input, text).unwrap();
        assert_eq!(s.get("op_host/a.cpp"), Some("int a = 2;\n"));
        assert_eq!(s.get("op_kernel/k.cpp"), Some("k\n"));
        assert_eq!(s.get("op.toml"), None);
    }
}
