//! Screening Stage II candidates by their host tiling before an
//! evaluation is spent on them.
//!
//! A knob assignment whose host tiling fails (the tiling function returns
//! an error: a Matmul tiling whose base blocks do not fit L0A, L0B or L0C
//! or whose L1 blocks do not fit L1, `GetTiling` returning -1; a tile the
//! host code's own checks refuse) would fail its evaluation on the first
//! case and cost one unit of budget. The host library of the incumbent is
//! built once with its knobs read at run time (the simulator's
//! parametrised host build, `Artifact::host_knobs`), so a candidate's
//! tiling on every case is one run of the tiling function alone per case
//! (`Device::tiling`, a few milliseconds, no kernel): a candidate whose
//! tiling fails on any case is refused without charge, and the search
//! learns the infeasible region as if it had been evaluated.
//!
//! The screen is off (every candidate passes) when the device cannot run
//! a tiling alone, when the incumbent's host build is not parametrised, or
//! when a case's output shapes are known only from its golden.

use ascendopt_device::{Artifact, Device, RunRequest};
use ascendopt_harness::pipeline::tiling_request;
use ascendopt_op::package::OpPackage;
use std::collections::BTreeMap;
use std::path::Path;

/// The incumbent's parametrised host build and the tiling requests of its
/// cases.
pub(crate) struct TilingScreen<'d> {
    device: &'d dyn Device,
    artifact: Artifact,
    /// The package's knob names in the order of `Artifact::host_knobs`.
    order: Vec<String>,
    requests: Vec<(String, RunRequest)>,
}

impl<'d> TilingScreen<'d> {
    /// The screen of the package in `dir`, or None when it cannot screen
    /// (see the module header).
    pub(crate) fn new(device: &'d dyn Device, dir: &Path) -> Option<TilingScreen<'d>> {
        let pkg = OpPackage::load(dir, &ascendopt_golden::BUILTINS).ok()?;
        let order: Vec<(String, i64)> = pkg
            .tiling
            .knobs()
            .map(|k| (k.name.clone(), k.value))
            .collect();
        if order.is_empty() {
            return None;
        }
        let mut requests = Vec::new();
        for case in pkg.cases() {
            requests.push((case.name.clone(), tiling_request(&pkg, case)?));
        }
        let artifact = device.build(&pkg).ok()?;
        let values: Vec<i64> = order.iter().map(|(_, v)| *v).collect();
        if artifact.host_knobs.is_empty() || artifact.host_knobs != values {
            return None;
        }
        // The incumbent's own tiling must run alone on every case.
        for (_, request) in &requests {
            match device.tiling(&artifact, request) {
                Some(Ok(_)) => {}
                _ => return None,
            }
        }
        Some(TilingScreen {
            device,
            artifact,
            order: order.into_iter().map(|(n, _)| n).collect(),
            requests,
        })
    }

    /// Why the host tiling of `assignment` fails (the case and the
    /// device's message), or None when it runs on every case (or the
    /// assignment names a knob the build does not read).
    pub(crate) fn refuses(&self, assignment: &BTreeMap<String, i64>) -> Option<String> {
        let mut a = self.artifact.clone();
        for (i, name) in self.order.iter().enumerate() {
            let v = assignment.get(name)?;
            let slot = a.host_knobs.get_mut(i)?;
            *slot = *v;
        }
        for (case, request) in &self.requests {
            if let Some(Err(e)) = self.device.tiling(&a, request) {
                let message = e.to_string();
                let first = message.lines().next().unwrap_or("").trim().to_string();
                return Some(format!("the host tiling fails on case {case}: {first}"));
            }
        }
        None
    }
}
