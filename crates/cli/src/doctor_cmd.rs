//! `ascendopt doctor`: what this machine has for each device (the
//! simulator; the CANN toolkit, its tools and the NPUs), each line OK or
//! the fix.

use crate::json_doc::JsonDoc;
use crate::Status;
use anyhow::Result;
use ascendopt_device::cann::doctor::{doctor, render, DoctorInput, SimFacts, SimProfileFacts};
use ascendopt_device::SharedError;
use ascendopt_sim::build::Toolchain;
use ascendopt_sim::timing::HwProfile;

/// Arguments of `ascendopt doctor`.
#[derive(Debug, clap::Args)]
pub struct DoctorArgs {
    /// Print the lines as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(args: DoctorArgs) -> Result<Status> {
    let toolchain = Toolchain::from_env();
    let profile = HwProfile::builtin("ascend910b2")
        .map(|hw| SimProfileFacts {
            name: hw.name.clone(),
            soc: hw.soc_version.clone(),
            vector_cores: hw.aiv_cores,
            cube_cores: hw.aic_cores,
        })
        .map_err(SharedError::new);
    let input = DoctorInput::from_env(SimFacts {
        cxx: toolchain.cxx,
        include_dir: toolchain.include_dir,
        profile,
    });
    let report = doctor(&input);
    if args.json {
        JsonDoc::new("doctor")
            .field("lines", serde_json::to_value(&report.lines)?)
            .field("sim_usable", serde_json::json!(report.sim_usable))
            .field(
                "cann_tools_present",
                serde_json::json!(report.cann_tools_present),
            )
            .print()?;
    } else {
        print!("{}", render(&report));
    }
    Ok(if report.sim_usable {
        Status::Ok
    } else {
        Status::Failed
    })
}
