//! Confirming found knobs by running the host tiling alone.
//!
//! A found knob is a guess of the source analysis. Before an evaluation is
//! spent on it, the host tiling runs alone (`Device::tiling`: the tiling
//! function in the worker, no kernel, about 5 ms) on the benchmark case
//! with the knob at other values of its domain:
//!
//! - a knob no value of which changes the tiling (block dim, tiling key,
//!   tiling data, workspace) is dead for this operator and dropped;
//! - values whose tiling fails are infeasible and dropped;
//! - values that give the same tiling are one choice: the code's clamps
//!   (`min(x, cap)`, a per-core minimum) merge them, and only one of them
//!   (the current value, else the smallest) stays in the domain.
//!
//! The host library is built once: the knobbed sources are parametrised
//! (every knob read at run time, `ascendopt_op::tiling`), so a value is
//! only a different entry of the artifact's knob vector. When the build
//! cannot be parametrised, each value is rendered and built (a handful of
//! values per knob).

use crate::session::OpSession;
use crate::AgentError;
use ascendopt_device::Artifact;
use ascendopt_device::{QueryError, TilingInfo};
use ascendopt_harness::pipeline::{bench_case, tiling_request};
use ascendopt_motif::knobfind::{knobbed, with_values, Discovery, FoundKnob};
use ascendopt_motif::Sources;
use ascendopt_op::package::OpPackage;
use std::collections::BTreeMap;

/// Values tried per knob with a parametrised host build.
const MAX_SAMPLES: usize = 48;
/// Values tried per knob when every value needs a build.
const MAX_BUILT_SAMPLES: usize = 6;

/// What confirmation kept.
#[derive(Debug, Clone, Default)]
pub struct Confirmed {
    /// The live knobs, with their domains narrowed to one value per
    /// distinct tiling.
    pub knobs: Vec<FoundKnob>,
    /// `choices=` annotation per kept knob (by name).
    pub domains: BTreeMap<String, String>,
    /// One line per knob found: kept (with its distinct tilings) or
    /// dropped (why).
    pub notes: Vec<String>,
    /// The plain sources with the kept knobs marked (None when none was
    /// kept).
    pub sources: Option<Sources>,
    /// Host tiling runs made.
    pub tiling_runs: u32,
}

type TilingKey = (u32, u64, u64, Vec<u8>);

fn key_of(t: &TilingInfo) -> TilingKey {
    (t.block_dim, t.tiling_key, t.workspace, t.data.clone())
}

/// At most `n` values of `all`, spread over the range: both ends, the
/// current value, powers of two, then evenly spaced ones.
pub(crate) fn sample(all: &[i64], current: i64, n: usize) -> Vec<i64> {
    if all.len() <= n {
        return all.to_vec();
    }
    let mut out: Vec<i64> = vec![all[0], all[all.len() - 1], current];
    for &v in all {
        if v > 0 && v & (v - 1) == 0 && out.len() < n / 2 {
            out.push(v);
        }
    }
    let room = n.saturating_sub(out.len()).max(1);
    let stride = (all.len() as f64 / room as f64).max(1.0);
    let mut x = 0.0;
    while (x as usize) < all.len() && out.len() < n {
        out.push(all[x as usize]);
        x += stride;
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Runs the host tiling of `plain` with each found knob at other values
/// and keeps the live ones.
pub fn confirm(
    session: &OpSession<'_>,
    plain: &Sources,
    discovery: &Discovery,
) -> Result<Confirmed, AgentError> {
    let mut out = Confirmed::default();
    if discovery.knobs.is_empty() {
        return Ok(out);
    }
    let device = session.context().device;
    let Some(first) = knobbed(plain, &discovery.knobs, &BTreeMap::new()) else {
        out.notes
            .push("found knobs could not be marked in the source".into());
        return Ok(out);
    };
    let dir = session.materialise(&first)?;
    let pkg = match OpPackage::load(&dir, &ascendopt_golden::BUILTINS) {
        Ok(p) => p,
        Err(e) => {
            out.notes
                .push(format!("the marked host code does not load: {e}"));
            return Ok(out);
        }
    };
    let Some(case) = bench_case(&pkg) else {
        out.notes.push("no case to run the tiling on".into());
        return Ok(out);
    };
    let Some(request) = tiling_request(&pkg, case) else {
        out.notes
            .push("the benchmark case's output shapes are unknown before a run".into());
        return Ok(out);
    };
    let artifact = match device.build(&pkg) {
        Ok(a) => a,
        Err(e) => {
            out.notes
                .push(format!("the marked host code does not build: {e}"));
            return Ok(out);
        }
    };
    let base = match device.tiling(&artifact, &request) {
        Some(Ok(t)) => key_of(&t),
        Some(Err(e)) => {
            out.notes
                .push(format!("the tiling of the input fails: {e}"));
            return Ok(out);
        }
        None => {
            out.notes
                .push("the device cannot run the tiling alone".into());
            return Ok(out);
        }
    };
    out.tiling_runs += 1;
    // The artifact's run-time knob vector, when the build is parametrised:
    // every knob of the package in source order (user knobs included).
    let order: Vec<(String, i64)> = pkg
        .tiling
        .knobs()
        .map(|k| (k.name.clone(), k.value))
        .collect();
    let parametrised = !artifact.host_knobs.is_empty()
        && artifact.host_knobs == order.iter().map(|(_, v)| *v).collect::<Vec<_>>();
    let mut kept = Vec::new();
    for knob in &discovery.knobs {
        let values = knob.candidates();
        let tried = sample(
            &values,
            knob.value,
            if parametrised {
                MAX_SAMPLES
            } else {
                MAX_BUILT_SAMPLES
            },
        );
        // value → tiling (None: the tiling failed).
        let mut groups: BTreeMap<TilingKey, Vec<i64>> = BTreeMap::new();
        groups.insert(base.clone(), vec![knob.value]);
        let mut failed = 0usize;
        for &v in &tried {
            if v == knob.value {
                continue;
            }
            let result = if parametrised {
                let Some(idx) = order.iter().position(|(n, _)| *n == knob.name) else {
                    continue;
                };
                let mut a: Artifact = artifact.clone();
                a.host_knobs[idx] = v;
                device.tiling(&a, &request)
            } else {
                tiling_built(session, plain, knob, v, &request)?
            };
            out.tiling_runs += 1;
            match result {
                Some(Ok(t)) => groups.entry(key_of(&t)).or_default().push(v),
                _ => failed += 1,
            }
        }
        if groups.len() < 2 {
            out.notes.push(format!(
                "dropped {}: none of {} other values changes the tiling{}",
                knob.describe(),
                tried.len().saturating_sub(1),
                if failed > 0 {
                    format!(" ({failed} fail it)")
                } else {
                    String::new()
                }
            ));
            continue;
        }
        let mut reps: Vec<i64> = groups
            .values()
            .map(|vs| {
                if vs.contains(&knob.value) {
                    knob.value
                } else {
                    vs.iter().copied().min().unwrap_or(knob.value)
                }
            })
            .collect();
        reps.sort_unstable();
        out.notes.push(format!(
            "kept {}: {} distinct tilings over {} values tried{}",
            knob.describe(),
            reps.len(),
            tried.len(),
            if failed > 0 {
                format!(", {failed} infeasible")
            } else {
                String::new()
            }
        ));
        let list: Vec<String> = reps.iter().map(i64::to_string).collect();
        out.domains
            .insert(knob.name.clone(), format!("choices={}", list.join(",")));
        kept.push(knob.clone());
    }
    if !kept.is_empty() {
        out.sources = knobbed(plain, &kept, &out.domains);
    }
    out.knobs = kept;
    Ok(out)
}

/// The tiling with one knob at `value`, built anew (no parametrised host).
fn tiling_built(
    session: &OpSession<'_>,
    plain: &Sources,
    knob: &FoundKnob,
    value: i64,
    request: &ascendopt_device::RunRequest,
) -> Result<Option<Result<TilingInfo, QueryError>>, AgentError> {
    let values = BTreeMap::from([(knob.name.clone(), value)]);
    let Some(src) = with_values(plain, std::slice::from_ref(knob), &values) else {
        return Ok(None);
    };
    let dir = session.materialise(&src)?;
    let Ok(pkg) = OpPackage::load(&dir, &ascendopt_golden::BUILTINS) else {
        return Ok(None);
    };
    let device = session.context().device;
    Ok(match device.build(&pkg) {
        Ok(a) => device.tiling(&a, request),
        Err(e) => Some(Err(QueryError::failed(e))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_keep_the_ends_and_the_current_value() {
        let all: Vec<i64> = (1..=1000).collect();
        let s = sample(&all, 337, 20);
        assert!(s.len() <= 24, "{s:?}");
        assert!(s.contains(&1) && s.contains(&1000) && s.contains(&337));
        assert_eq!(sample(&[1, 2, 3], 2, 20), vec![1, 2, 3]);
    }
}
