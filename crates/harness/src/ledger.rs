//! The budget ledger of one operator in one run: how many evaluations each
//! stage may spend, which budget indices are taken, and the charge itself.
//!
//! Every evaluation, whatever its verdict, costs one unit. The ledger hands
//! out a [`Ticket`] per evaluation ([`Ledger::try_spend`]), refusing once the
//! stage's budget is exhausted, and the evaluation is charged when the ticket
//! is recorded ([`Ledger::record`]) — in the run store's transaction, so the
//! charge and the row are one.
//!
//! Resuming: a ledger opened on a run that already has evaluations hands out
//! the lowest budget indices not yet recorded. An evaluation that was in
//! flight when the process died (ticket issued, never recorded) therefore
//! gets its index again; nothing recorded is counted twice, nothing is lost.

use crate::store::{
    NewEvaluation, Recorded, RunId, RunStore, SourceHash, Stage, StageTimings, StoreError,
};
use crate::verdict::Verdict;
use std::collections::{BTreeMap, BTreeSet};

/// Evaluations allowed per stage for one operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BudgetConfig {
    /// Rewind (offline experience building).
    pub rewind: u32,
    /// Online: Stage I refinement and Stage II tiling search together.
    pub online: u32,
}

impl BudgetConfig {
    /// The reference setting of the method: 230 evaluations per operator,
    /// 20 for Rewind and 210 online (ref/method.md §2, "Budget").
    pub const REFERENCE: BudgetConfig = BudgetConfig {
        rewind: 20,
        online: 210,
    };

    /// The budget of one stage.
    pub fn budget(&self, stage: Stage) -> u32 {
        match stage {
            Stage::Rewind => self.rewind,
            Stage::Online => self.online,
        }
    }

    fn pairs(&self) -> Vec<(Stage, u32)> {
        Stage::ALL.iter().map(|&s| (s, self.budget(s))).collect()
    }
}

/// Errors of the ledger.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LedgerError {
    /// Every budget index of the stage is recorded or in flight.
    #[error("the {stage} budget of {op} is exhausted ({budget} evaluations)")]
    Exhausted {
        /// The operator.
        op: String,
        /// The stage.
        stage: Stage,
        /// Its budget.
        budget: u32,
    },
    /// The ticket was issued by another ledger (other run or operator).
    #[error("ticket for {op} #{index} ({stage}) was not issued by this ledger")]
    ForeignTicket {
        /// The ticket's operator.
        op: String,
        /// The ticket's stage.
        stage: Stage,
        /// The ticket's index.
        index: u32,
    },
    /// The run store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The right to run one evaluation, charged when recorded.
#[derive(Debug, PartialEq, Eq)]
pub struct Ticket {
    run: RunId,
    op: String,
    stage: Stage,
    index: u32,
}

impl Ticket {
    /// The stage charged.
    pub fn stage(&self) -> Stage {
        self.stage
    }

    /// The budget index (0-based, unique per run, operator and stage).
    pub fn index(&self) -> u32 {
        self.index
    }

    /// The operator.
    pub fn op(&self) -> &str {
        &self.op
    }
}

/// The outcome of one evaluation, to be charged to a ticket.
#[derive(Debug, Clone, Copy)]
pub struct Charge<'a> {
    /// The candidate's source, already put in the store.
    pub source_hash: &'a SourceHash,
    /// The verdict.
    pub verdict: &'a Verdict,
    /// The input seed.
    pub seed: u64,
    /// Phase timings.
    pub timings: StageTimings,
    /// The candidate's launch key, when the device could tell it.
    pub launch: Option<&'a str>,
}

/// The budget ledger of one operator in one run.
#[derive(Debug)]
pub struct Ledger<'s> {
    store: &'s RunStore,
    run: RunId,
    op: String,
    budgets: BudgetConfig,
    /// Tickets issued and not yet recorded, by stage.
    in_flight: BTreeMap<Stage, BTreeSet<u32>>,
}

impl<'s> Ledger<'s> {
    /// Opens the ledger of `op` in `run`, registering the operator with
    /// `budgets` on first use. A resumed run must pass the same budgets.
    pub fn open(
        store: &'s RunStore,
        run: RunId,
        op: &str,
        level: &str,
        budgets: BudgetConfig,
    ) -> Result<Ledger<'s>, LedgerError> {
        store.register_operator(run, op, level, &budgets.pairs())?;
        Ok(Ledger {
            store,
            run,
            op: op.to_string(),
            budgets,
            in_flight: BTreeMap::new(),
        })
    }

    /// The budgets.
    pub fn budgets(&self) -> BudgetConfig {
        self.budgets
    }

    /// Takes the lowest free budget index of `stage`, or refuses when every
    /// index is recorded or in flight.
    pub fn try_spend(&mut self, stage: Stage) -> Result<Ticket, LedgerError> {
        let budget = self.budgets.budget(stage);
        let recorded: BTreeSet<u32> = self
            .store
            .recorded_indices(self.run, &self.op, stage)?
            .into_iter()
            .collect();
        let in_flight = self.in_flight.entry(stage).or_default();
        let free = (0..budget).find(|i| !recorded.contains(i) && !in_flight.contains(i));
        match free {
            Some(index) => {
                in_flight.insert(index);
                Ok(Ticket {
                    run: self.run,
                    op: self.op.clone(),
                    stage,
                    index,
                })
            }
            None => Err(LedgerError::Exhausted {
                op: self.op.clone(),
                stage,
                budget,
            }),
        }
    }

    /// Records the evaluation a ticket paid for and charges it, in one
    /// store transaction.
    pub fn record(&mut self, ticket: Ticket, charge: Charge<'_>) -> Result<Recorded, LedgerError> {
        if ticket.run != self.run || ticket.op != self.op {
            return Err(LedgerError::ForeignTicket {
                op: ticket.op,
                stage: ticket.stage,
                index: ticket.index,
            });
        }
        let recorded = self.store.record_evaluation(&NewEvaluation {
            run: self.run,
            op: &self.op,
            stage: ticket.stage,
            budget_index: ticket.index,
            source_hash: charge.source_hash,
            verdict: charge.verdict,
            seed: charge.seed,
            timings: charge.timings,
            launch: charge.launch,
        })?;
        if let Some(set) = self.in_flight.get_mut(&ticket.stage) {
            set.remove(&ticket.index);
        }
        Ok(recorded)
    }

    /// Evaluations recorded for `stage`.
    pub fn spent(&self, stage: Stage) -> Result<u32, LedgerError> {
        Ok(self.store.budget_spent(self.run, &self.op, stage)?)
    }

    /// Tickets of `stage` issued and not yet recorded.
    pub fn in_flight(&self, stage: Stage) -> u32 {
        self.in_flight
            .get(&stage)
            .map_or(0, |s| u32::try_from(s.len()).unwrap_or(u32::MAX))
    }

    /// Tickets `stage` can still issue.
    pub fn remaining(&self, stage: Stage) -> Result<u32, LedgerError> {
        let used = self.spent(stage)?.saturating_add(self.in_flight(stage));
        Ok(self.budgets.budget(stage).saturating_sub(used))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tempfile::TempDir;

    const SMALL: BudgetConfig = BudgetConfig {
        rewind: 2,
        online: 3,
    };

    fn charge<'a>(hash: &'a SourceHash, verdict: &'a Verdict) -> Charge<'a> {
        Charge {
            source_hash: hash,
            verdict,
            seed: 1,
            timings: StageTimings {
                compile_ms: 1,
                correctness_ms: 2,
                profile_ms: 3,
            },
            launch: None,
        }
    }

    #[test]
    fn spends_until_exhausted_whatever_the_verdict() {
        let dir = TempDir::new().unwrap();
        let store = RunStore::open(&dir.path().join("r.db")).unwrap();
        let run = store.create_run(&serde_json::json!({})).unwrap();
        let mut ledger = Ledger::open(&store, run, "add", "L1", SMALL).unwrap();
        let hash = store.put_source("k").unwrap();
        let failures = [
            Verdict::CompileError {
                diagnostics: "e".into(),
            },
            Verdict::Timeout { after_ms: 5 },
            Verdict::RejectedStatic {
                reason: "asm".into(),
            },
        ];
        for (i, v) in failures.iter().enumerate() {
            let t = ledger.try_spend(Stage::Online).unwrap();
            assert_eq!(t.index(), i as u32);
            assert!(ledger.record(t, charge(&hash, v)).unwrap().is_new);
        }
        assert_eq!(ledger.spent(Stage::Online).unwrap(), 3);
        assert_eq!(ledger.remaining(Stage::Online).unwrap(), 0);
        match ledger.try_spend(Stage::Online) {
            Err(LedgerError::Exhausted {
                budget: 3,
                stage: Stage::Online,
                ..
            }) => {}
            other => panic!("expected Exhausted, got {other:?}"),
        }
        // Rewind is a separate pool.
        assert_eq!(ledger.remaining(Stage::Rewind).unwrap(), 2);
        assert_eq!(ledger.try_spend(Stage::Rewind).unwrap().index(), 0);
    }

    #[test]
    fn in_flight_tickets_count_and_lost_ones_are_reissued_after_restart() {
        let dir = TempDir::new().unwrap();
        let path = dir.path().join("r.db");
        let hash;
        let run;
        {
            let store = RunStore::open(&path).unwrap();
            run = store.create_run(&serde_json::json!({})).unwrap();
            hash = store.put_source("k").unwrap();
            let mut ledger = Ledger::open(&store, run, "add", "L1", SMALL).unwrap();
            let t0 = ledger.try_spend(Stage::Online).unwrap();
            let t1 = ledger.try_spend(Stage::Online).unwrap();
            let t2 = ledger.try_spend(Stage::Online).unwrap();
            assert_eq!((t0.index(), t1.index(), t2.index()), (0, 1, 2));
            assert_eq!(ledger.remaining(Stage::Online).unwrap(), 0);
            assert!(matches!(
                ledger.try_spend(Stage::Online),
                Err(LedgerError::Exhausted { .. })
            ));
            // Workers finish 2 and 0; the process dies with 1 in flight.
            let v = Verdict::Timeout { after_ms: 1 };
            ledger.record(t2, charge(&hash, &v)).unwrap();
            ledger.record(t0, charge(&hash, &v)).unwrap();
            drop(t1);
        }
        let store = RunStore::open(&path).unwrap();
        store.resume_run(run).unwrap();
        let mut ledger = Ledger::open(&store, run, "add", "L1", SMALL).unwrap();
        assert_eq!(ledger.spent(Stage::Online).unwrap(), 2);
        let again = ledger.try_spend(Stage::Online).unwrap();
        assert_eq!(again.index(), 1, "the lost index is issued again");
        assert!(matches!(
            ledger.try_spend(Stage::Online),
            Err(LedgerError::Exhausted { .. })
        ));
        // A resumed run with other budgets is refused.
        let other = BudgetConfig {
            rewind: 2,
            online: 4,
        };
        assert!(matches!(
            Ledger::open(&store, run, "add", "L1", other),
            Err(LedgerError::Store(StoreError::BudgetMismatch { .. }))
        ));
    }

    #[test]
    fn tickets_of_another_operator_are_refused() {
        let dir = TempDir::new().unwrap();
        let store = RunStore::open(&dir.path().join("r.db")).unwrap();
        let run = store.create_run(&serde_json::json!({})).unwrap();
        let hash = store.put_source("k").unwrap();
        let mut add = Ledger::open(&store, run, "add", "L1", SMALL).unwrap();
        let mut mul = Ledger::open(&store, run, "mul", "L1", SMALL).unwrap();
        let ticket = mul.try_spend(Stage::Online).unwrap();
        let v = Verdict::Timeout { after_ms: 1 };
        assert!(matches!(
            add.record(ticket, charge(&hash, &v)),
            Err(LedgerError::ForeignTicket { .. })
        ));
        assert_eq!(add.spent(Stage::Online).unwrap(), 0);
        assert_eq!(mul.spent(Stage::Online).unwrap(), 0);
    }

    #[test]
    fn reference_budget_is_230() {
        let b = BudgetConfig::REFERENCE;
        assert_eq!(
            (b.budget(Stage::Rewind), b.budget(Stage::Online)),
            (20, 210)
        );
    }
}
