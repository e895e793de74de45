//! Online optimisation of one operator: Stage I (kernel refinement) then
//! Stage II (tiling search) under one budget, and the ablation switches
//! of the method's Table 3.

use crate::diagnose::Diagnoser;
use crate::outcome::OpOutcome;
use crate::proposer::Proposer;
use crate::session::OpSession;
use crate::AgentError;
use ascendopt_bank::store::Bank;
use serde::{Deserialize, Serialize};

/// The variants of the method's Table 3.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// Stage I with the bank, then Stage II.
    Full,
    /// Stage I with the bank only.
    Stage1,
    /// Stage I without experience (no retrieval) only.
    Stage1Noexp,
    /// Stage II (tiling search) only.
    Tiling,
}

impl Method {
    /// Every variant, in table order.
    pub const ALL: [Method; 4] = [Method::Full, Method::Stage1, Method::Stage1Noexp, Method::Tiling];

    /// The name used on the command line and in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Full => "full",
            Method::Stage1 => "stage1",
            Method::Stage1Noexp => "stage1-noexp",
            Method::Tiling => "tiling",
        }
    }

    /// Parses a name.
    pub fn parse(text: &str) -> Option<Method> {
        Method::ALL.into_iter().find(|m| m.as_str() == text)
    }
}

/// How one operator is optimised.
#[derive(Debug, Clone, PartialEq)]
pub struct OptimizeConfig {
    /// Which stages, with or without experience.
    pub method: Method,
    /// Online evaluations for this operator (the baseline measurement
    /// included).
    pub budget: u32,
    /// Evaluations reserved for Stage I when both stages run; None: Stage
    /// I moves on to Stage II when it stagnates.
    pub stage1_budget: Option<u32>,
    /// Entries retrieved per diagnosis.
    pub k: usize,
    /// Stage I stops after this many evaluations in a row without an
    /// accepted rewrite (when `stage1_budget` is None).
    pub stagnation: u32,
    /// Seed of every random choice.
    pub seed: u64,
}

impl Default for OptimizeConfig {
    fn default() -> OptimizeConfig {
        OptimizeConfig {
            method: Method::Full,
            budget: 210,
            stage1_budget: None,
            k: ascendopt_bank::retrieve::DEFAULT_K,
            stagnation: 12,
            seed: 0,
        }
    }
}

/// Optimises the session's operator with `cfg.method`: measures the input,
/// runs the stages, keeps the incumbent when nothing wins.
pub fn optimize_operator(
    _session: &mut OpSession<'_>,
    _bank: Option<&Bank>,
    _proposer: &mut dyn Proposer,
    _diagnoser: &mut dyn Diagnoser,
    _cfg: &OptimizeConfig,
) -> Result<OpOutcome, AgentError> {
    Err(AgentError::Package {
        dir: std::path::PathBuf::new(),
        message: "optimize_operator is under construction".into(),
    })
}
