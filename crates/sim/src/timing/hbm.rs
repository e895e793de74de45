//! The chip's HBM as a shared fluid server: every DMA transfer that touches
//! GM (reads and writes alike) takes a share of one bandwidth, no transfer
//! faster than its own per-core cap (max-min fairness, "water filling").
//!
//! The engine adds a flow when a DMA's data starts to move and asks for the
//! next finish time; whenever the set of flows changes the rates are
//! recomputed and every flow's remaining bytes are brought up to date, so a
//! flow's finish time can move later (more contention) or earlier.

use super::engine::Cycle;

/// One transfer in progress.
#[derive(Debug, Clone)]
struct Flow {
    /// Owner: (block index, instruction index).
    owner: (u32, u32),
    /// Bytes still to move.
    remaining: f64,
    /// Fastest this flow may go, bytes per cycle.
    cap: f64,
    /// Current rate, bytes per cycle.
    rate: f64,
    /// GM footprint (space, first byte, end), rounded to the request
    /// granule by the caller.
    footprint: Option<(u32, u64, u64)>,
}

/// The shared bandwidth and the flows using it.
#[derive(Debug, Clone)]
pub(crate) struct Hbm {
    capacity: f64,
    flows: Vec<Flow>,
    last_update: Cycle,
    /// Bumped at every change, so stale completion events can be dropped.
    pub(crate) generation: u64,
}

/// Remaining bytes below this count as finished (float rounding).
const EPS_BYTES: f64 = 1e-3;

impl Hbm {
    /// A server of `capacity` bytes per cycle.
    pub(crate) fn new(capacity: f64) -> Hbm {
        Hbm {
            capacity,
            flows: Vec::new(),
            last_update: 0,
            generation: 0,
        }
    }

    /// Brings every flow's remaining bytes up to `now`.
    fn advance(&mut self, now: Cycle) {
        let dt = now.saturating_sub(self.last_update) as f64;
        if dt > 0.0 {
            for flow in &mut self.flows {
                flow.remaining -= flow.rate * dt;
            }
        }
        self.last_update = now;
    }

    /// Max-min fair rates: the slowest caps are served first, the rest share
    /// what is left equally.
    fn reallocate(&mut self) {
        self.generation += 1;
        let mut order: Vec<usize> = (0..self.flows.len()).collect();
        order.sort_by(|&a, &b| self.flows[a].cap.total_cmp(&self.flows[b].cap));
        let mut left = self.capacity;
        let mut count = order.len();
        for index in order {
            let share = left / count as f64;
            let rate = self.flows[index].cap.min(share);
            self.flows[index].rate = rate;
            left -= rate;
            count -= 1;
        }
    }

    /// Starts a flow of `bytes` for `owner`, at most `cap` bytes per cycle,
    /// touching `footprint` of GM.
    pub(crate) fn add(
        &mut self,
        now: Cycle,
        owner: (u32, u32),
        bytes: f64,
        cap: f64,
        footprint: Option<(u32, u64, u64)>,
    ) {
        self.advance(now);
        self.flows.push(Flow {
            owner,
            remaining: bytes.max(0.0),
            cap: cap.max(1e-9),
            rate: 0.0,
            footprint,
        });
        self.reallocate();
    }

    /// Number of distinct other blocks with a flow in progress whose GM
    /// footprint overlaps `footprint`.
    pub(crate) fn same_range_blocks(&self, block: u32, footprint: (u32, u64, u64)) -> usize {
        let (space, start, end) = footprint;
        let mut blocks: Vec<u32> = self
            .flows
            .iter()
            .filter(|f| f.owner.0 != block)
            .filter(|f| {
                f.footprint
                    .is_some_and(|(s, a, b)| s == space && a < end && start < b)
            })
            .map(|f| f.owner.0)
            .collect();
        blocks.sort_unstable();
        blocks.dedup();
        blocks.len()
    }

    /// Removes and returns the flows finished by `now`.
    pub(crate) fn take_finished(&mut self, now: Cycle) -> Vec<(u32, u32)> {
        self.advance(now);
        let mut done = Vec::new();
        self.flows.retain(|flow| {
            if flow.remaining <= EPS_BYTES {
                done.push(flow.owner);
                false
            } else {
                true
            }
        });
        if !done.is_empty() {
            self.reallocate();
        }
        done
    }

    /// When the next flow finishes at the current rates.
    pub(crate) fn next_finish(&self, now: Cycle) -> Option<Cycle> {
        self.flows
            .iter()
            .map(|flow| {
                if flow.remaining <= EPS_BYTES || flow.rate <= 0.0 {
                    now
                } else {
                    now + (flow.remaining / flow.rate).ceil() as Cycle
                }
            })
            .min()
    }

    /// Number of flows in progress.
    #[cfg(test)]
    pub(crate) fn active(&self) -> usize {
        self.flows.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_flow_runs_at_its_cap() {
        let mut hbm = Hbm::new(100.0);
        hbm.add(0, (0, 0), 1000.0, 25.0, None);
        assert_eq!(hbm.next_finish(0), Some(40));
        assert!(hbm.take_finished(39).is_empty());
        assert_eq!(hbm.take_finished(40), vec![(0, 0)]);
        assert_eq!(hbm.active(), 0);
    }

    #[test]
    fn flows_share_the_capacity_fairly() {
        // 8 flows capped at 25 on a 100 B/cycle server: 12.5 each.
        let mut hbm = Hbm::new(100.0);
        for i in 0..8 {
            hbm.add(0, (i, 0), 1000.0, 25.0, None);
        }
        assert_eq!(hbm.next_finish(0), Some(80));
        let done = hbm.take_finished(80);
        assert_eq!(done.len(), 8);
    }

    #[test]
    fn a_slow_flow_leaves_its_unused_share_to_the_others() {
        // Caps 10 and 200 on 100: the slow one gets 10, the other 90.
        let mut hbm = Hbm::new(100.0);
        hbm.add(0, (0, 0), 900.0, 200.0, None);
        hbm.add(0, (1, 0), 100.0, 10.0, None);
        assert_eq!(hbm.next_finish(0), Some(10));
        assert_eq!(hbm.take_finished(10), vec![(0, 0), (1, 0)]);
    }

    #[test]
    fn overlapping_footprints_of_other_blocks_are_counted() {
        let mut hbm = Hbm::new(100.0);
        hbm.add(0, (0, 0), 1000.0, 10.0, Some((1, 0, 512)));
        hbm.add(0, (0, 1), 1000.0, 10.0, Some((1, 512, 1024)));
        hbm.add(0, (1, 0), 1000.0, 10.0, Some((1, 0, 1024)));
        hbm.add(0, (2, 0), 1000.0, 10.0, Some((2, 0, 1024)));
        // Block 3 on space 1 [0, 512): blocks 0 and 1 overlap, 2 is elsewhere.
        assert_eq!(hbm.same_range_blocks(3, (1, 0, 512)), 2);
        // Block 0's own flows do not count.
        assert_eq!(hbm.same_range_blocks(0, (1, 0, 512)), 1);
        assert_eq!(hbm.same_range_blocks(3, (1, 1024, 2048)), 0);
    }

    #[test]
    fn a_late_flow_slows_an_earlier_one() {
        // Flow A alone at 100 for 5 cycles (500 B left of 1000), then B
        // arrives and both get 50: A finishes at 5 + 10 = 15.
        let mut hbm = Hbm::new(100.0);
        hbm.add(0, (0, 0), 1000.0, 100.0, None);
        hbm.add(5, (1, 0), 1000.0, 100.0, None);
        assert_eq!(hbm.next_finish(5), Some(15));
        assert_eq!(hbm.take_finished(15), vec![(0, 0)]);
        // B moved 500 in 10 cycles at 50, then 500 at 100: done at 20.
        assert_eq!(hbm.next_finish(15), Some(20));
    }
}
