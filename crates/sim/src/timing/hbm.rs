//! The chip's memory paths as shared fluid servers: every DMA transfer
//! that touches GM moves its bytes through the L2 (reads and writes alike,
//! one bandwidth), and the part that misses L2 (plus the dirty lines it
//! pushes out) also through HBM (another, smaller bandwidth). No transfer
//! goes faster than its own per-core cap. Rates are max-min fair over both
//! servers (progressive filling: every flow's rate grows alike until its
//! cap or a server it uses is full).
//!
//! The engine adds a flow when a DMA's data starts to move and asks for the
//! next finish time; whenever the set of flows changes the rates are
//! recomputed and every flow's remaining bytes are brought up to date, so a
//! flow's finish time can move later (more contention) or earlier.

use super::engine::Cycle;

/// The servers: L2 (index 0) and HBM (index 1).
const SERVERS: usize = 2;

/// One transfer in progress.
#[derive(Debug, Clone)]
struct Flow {
    /// Owner: (block index, instruction index).
    owner: (u32, u32),
    /// Bytes still to move.
    remaining: f64,
    /// Fastest this flow may go, bytes per cycle.
    cap: f64,
    /// Bytes of each server used per byte moved.
    load: [f64; SERVERS],
    /// Current rate, bytes per cycle.
    rate: f64,
    /// GM footprint, in request granules.
    footprint: Option<Footprint>,
}

/// The GM bytes a transfer touches, rounded out to request granules: rows
/// of granules `[lo, hi)` at `first_row * stride`, `first_row + 1`, ... up
/// to `last_row` (a contiguous range is one row with stride 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Footprint {
    space: u32,
    /// Row pitch in bytes (a multiple of the granule), 0 for one row.
    stride: u64,
    first_row: u64,
    last_row: u64,
    /// Granule-rounded byte range inside a row (inside `[0, stride)` for a
    /// strided footprint).
    lo: u64,
    hi: u64,
}

impl Footprint {
    /// The bytes `[start, start + len)` of GM space `space`, rounded out to
    /// `granule`.
    pub(crate) fn span(space: u32, start: u64, len: u64, granule: u64) -> Footprint {
        let g = granule.max(1);
        Footprint {
            space,
            stride: 0,
            first_row: 0,
            last_row: 0,
            lo: start / g * g,
            hi: (start + len.max(1)).div_ceil(g) * g,
        }
    }

    /// `rows` runs of `run` bytes, `stride` bytes apart, the first at
    /// `start`. A stride that is no multiple of the granule, or a run that
    /// crosses a row's end, gives the bounding span (rows then cannot be
    /// told apart in granules).
    pub(crate) fn strided(
        space: u32,
        start: u64,
        rows: u64,
        stride: u64,
        run: u64,
        granule: u64,
    ) -> Footprint {
        let g = granule.max(1);
        let span = || {
            let len = rows.saturating_sub(1) * stride + run;
            Footprint::span(space, start, len, g)
        };
        if rows <= 1 || stride.checked_rem(g) != Some(0) || stride == 0 {
            return span();
        }
        let column = start % stride;
        let lo = column / g * g;
        let hi = (column + run.max(1)).div_ceil(g) * g;
        if hi > stride {
            return span();
        }
        let first_row = start / stride;
        Footprint {
            space,
            stride,
            first_row,
            last_row: first_row + rows - 1,
            lo,
            hi,
        }
    }

    /// Byte range from the first granule to the end of the last.
    fn bounds(&self) -> (u64, u64) {
        (
            self.first_row * self.stride + self.lo,
            self.last_row * self.stride + self.hi,
        )
    }

    /// True when the two touch a common granule.
    fn overlaps(&self, other: &Footprint) -> bool {
        if self.space != other.space {
            return false;
        }
        let (a0, a1) = self.bounds();
        let (b0, b1) = other.bounds();
        if a0 >= b1 || b0 >= a1 {
            return false;
        }
        if self.stride == 0 || self.stride != other.stride {
            // Rows of different pitch (or one range): the bounding spans
            // overlap, count it.
            return true;
        }
        // Same pitch: common rows and common granules within a row.
        self.first_row <= other.last_row
            && other.first_row <= self.last_row
            && self.lo < other.hi
            && other.lo < self.hi
    }
}

/// The shared bandwidths and the flows using them.
#[derive(Debug, Clone)]
pub(crate) struct Hbm {
    capacity: [f64; SERVERS],
    flows: Vec<Flow>,
    last_update: Cycle,
    /// Bumped at every change, so stale completion events can be dropped.
    pub(crate) generation: u64,
    /// Bytes per cycle each server moves from each change on: (cycle,
    /// [L2, HBM]), a new entry only when the rates change.
    pub(crate) usage: Vec<(Cycle, [f64; SERVERS])>,
}

/// Remaining bytes below this count as finished (float rounding).
const EPS_BYTES: f64 = 1e-3;

impl Hbm {
    /// Servers of `l2` and `hbm` bytes per cycle.
    pub(crate) fn new(l2: f64, hbm: f64) -> Hbm {
        Hbm {
            capacity: [l2, hbm],
            flows: Vec::new(),
            last_update: 0,
            generation: 0,
            usage: Vec::new(),
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

    /// Max-min fair rates by progressive filling.
    fn reallocate(&mut self) {
        self.generation += 1;
        let n = self.flows.len();
        for flow in &mut self.flows {
            flow.rate = 0.0;
        }
        let mut frozen = vec![false; n];
        let mut used = [0.0f64; SERVERS];
        loop {
            let mut step = f64::INFINITY;
            let mut weight = [0.0f64; SERVERS];
            let mut active = 0;
            for (flow, &done) in self.flows.iter().zip(&frozen) {
                if done {
                    continue;
                }
                active += 1;
                step = step.min(flow.cap - flow.rate);
                for (w, l) in weight.iter_mut().zip(flow.load) {
                    *w += l;
                }
            }
            if active == 0 {
                break;
            }
            for server in 0..SERVERS {
                if weight[server] > 0.0 {
                    step = step.min((self.capacity[server] - used[server]) / weight[server]);
                }
            }
            let step = step.max(0.0);
            for (flow, &done) in self.flows.iter_mut().zip(&frozen) {
                if !done {
                    flow.rate += step;
                }
            }
            for server in 0..SERVERS {
                used[server] += step * weight[server];
            }
            let full: Vec<bool> = (0..SERVERS)
                .map(|s| self.capacity[s] - used[s] <= self.capacity[s] * 1e-12)
                .collect();
            let mut progress = false;
            for (flow, done) in self.flows.iter().zip(frozen.iter_mut()) {
                if *done {
                    continue;
                }
                let capped = flow.cap - flow.rate <= flow.cap * 1e-12;
                let blocked = (0..SERVERS).any(|s| full[s] && flow.load[s] > 0.0);
                if capped || blocked {
                    *done = true;
                    progress = true;
                }
            }
            if !progress {
                // Only rounding can get here: stop rather than spin.
                break;
            }
        }
        let mut rates = [0.0; SERVERS];
        for flow in &self.flows {
            for (r, l) in rates.iter_mut().zip(flow.load) {
                *r += flow.rate * l;
            }
        }
        if self.usage.last().map(|(_, last)| *last) != Some(rates) {
            self.usage.push((self.last_update, rates));
        }
    }

    /// Starts a flow of `bytes` for `owner`, at most `cap` bytes per cycle,
    /// touching `footprint` of GM; `hbm_share` bytes of HBM per byte moved
    /// (every byte goes through L2).
    pub(crate) fn add(
        &mut self,
        now: Cycle,
        owner: (u32, u32),
        bytes: f64,
        cap: f64,
        hbm_share: f64,
        footprint: Option<Footprint>,
    ) {
        self.advance(now);
        self.flows.push(Flow {
            owner,
            remaining: bytes.max(0.0),
            cap: cap.max(1e-9),
            load: [1.0, hbm_share.max(0.0)],
            rate: 0.0,
            footprint,
        });
        self.reallocate();
    }

    /// Number of distinct other blocks with a flow in progress whose GM
    /// footprint overlaps `footprint`.
    pub(crate) fn same_range_blocks(&self, block: u32, footprint: Footprint) -> usize {
        let mut blocks: Vec<u32> = self
            .flows
            .iter()
            .filter(|f| f.owner.0 != block)
            .filter(|f| f.footprint.is_some_and(|other| other.overlaps(&footprint)))
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
        let mut hbm = Hbm::new(1e12, 100.0);
        hbm.add(0, (0, 0), 1000.0, 25.0, 1.0, None);
        assert_eq!(hbm.next_finish(0), Some(40));
        assert!(hbm.take_finished(39).is_empty());
        assert_eq!(hbm.take_finished(40), vec![(0, 0)]);
        assert_eq!(hbm.active(), 0);
    }

    #[test]
    fn flows_share_the_capacity_fairly() {
        // 8 flows capped at 25 on a 100 B/cycle server: 12.5 each.
        let mut hbm = Hbm::new(1e12, 100.0);
        for i in 0..8 {
            hbm.add(0, (i, 0), 1000.0, 25.0, 1.0, None);
        }
        assert_eq!(hbm.next_finish(0), Some(80));
        let done = hbm.take_finished(80);
        assert_eq!(done.len(), 8);
    }

    #[test]
    fn a_slow_flow_leaves_its_unused_share_to_the_others() {
        // Caps 10 and 200 on 100: the slow one gets 10, the other 90.
        let mut hbm = Hbm::new(1e12, 100.0);
        hbm.add(0, (0, 0), 900.0, 200.0, 1.0, None);
        hbm.add(0, (1, 0), 100.0, 10.0, 1.0, None);
        assert_eq!(hbm.next_finish(0), Some(10));
        assert_eq!(hbm.take_finished(10), vec![(0, 0), (1, 0)]);
    }

    #[test]
    fn overlapping_footprints_of_other_blocks_are_counted() {
        let span = |space, start, len| Some(Footprint::span(space, start, len, 512));
        let mut hbm = Hbm::new(1e12, 100.0);
        hbm.add(0, (0, 0), 1000.0, 10.0, 1.0, span(1, 0, 512));
        hbm.add(0, (0, 1), 1000.0, 10.0, 1.0, span(1, 512, 512));
        hbm.add(0, (1, 0), 1000.0, 10.0, 1.0, span(1, 0, 1024));
        hbm.add(0, (2, 0), 1000.0, 10.0, 1.0, span(2, 0, 1024));
        let probe = |start, len| Footprint::span(1, start, len, 512);
        // Block 3 on space 1 [0, 512): blocks 0 and 1 overlap, 2 is elsewhere.
        assert_eq!(hbm.same_range_blocks(3, probe(0, 512)), 2);
        // Block 0's own flows do not count.
        assert_eq!(hbm.same_range_blocks(0, probe(0, 512)), 1);
        assert_eq!(hbm.same_range_blocks(3, probe(1024, 1024)), 0);
        // Bytes 100..600 touch granules 0 and 1.
        assert_eq!(Footprint::span(1, 100, 500, 512), probe(0, 1024));
    }

    #[test]
    fn strided_tiles_of_one_matrix_overlap_only_where_rows_and_columns_meet() {
        // A 4096-byte-pitch matrix: tiles of 8 rows x 512 B.
        let tile = |row: u64, col: u64| Footprint::strided(0, row * 4096 + col, 8, 4096, 512, 512);
        // Same rows, other columns (what shuffleK makes cores read): their
        // bounding spans overlap, their granules do not.
        assert!(!tile(0, 0).overlaps(&tile(0, 512)));
        assert!(tile(0, 0).overlaps(&tile(4, 0)), "rows 4-7 in common");
        assert!(!tile(0, 0).overlaps(&tile(8, 0)), "rows 0-7 against 8-15");
        // A row of 600 B at column 100 touches granules 0 and 1.
        let wide = Footprint::strided(0, 100, 8, 4096, 600, 512);
        assert!(wide.overlaps(&tile(0, 512)));
        // Another space never overlaps.
        let other = Footprint::strided(1, 0, 8, 4096, 512, 512);
        assert!(!other.overlaps(&tile(0, 0)));
        // A contiguous range against a strided tile: bounding spans.
        assert!(Footprint::span(0, 4096, 512, 512).overlaps(&tile(0, 512)));
        // A pitch that is no multiple of the granule falls back to the span.
        let odd = Footprint::strided(0, 0, 8, 4000, 512, 512);
        assert_eq!(odd, Footprint::span(0, 0, 7 * 4000 + 512, 512));
        // So does a run that crosses the row's end.
        let crossing = Footprint::strided(0, 3800, 2, 4096, 512, 512);
        assert_eq!(crossing, Footprint::span(0, 3800, 4096 + 512, 512));
    }

    #[test]
    fn flows_that_hit_l2_leave_hbm_to_those_that_miss() {
        // L2 400 B/cycle, HBM 100. Four hits capped at 80 and four misses
        // capped at 80: the misses share HBM (25 each), the hits run at
        // their cap on L2 (4 x 80 + 4 x 25 = 420 > 400: L2 is full too, so
        // the hits get what L2 has left, 75 each).
        let mut hbm = Hbm::new(400.0, 100.0);
        for i in 0..4 {
            hbm.add(0, (i, 0), 8000.0, 80.0, 0.0, None);
            hbm.add(0, (i + 4, 0), 8000.0, 80.0, 1.0, None);
        }
        let rates: Vec<f64> = hbm.flows.iter().map(|f| f.rate).collect();
        for (i, rate) in rates.iter().enumerate() {
            let want = if i % 2 == 0 { 75.0 } else { 25.0 };
            assert!((rate - want).abs() < 1e-6, "flow {i}: {rate} vs {want}");
        }
        assert_eq!(hbm.usage.last().map(|u| u.1), Some([400.0, 100.0]));
        // Dirty write-backs: a flow that moves two HBM bytes per byte.
        let mut hbm = Hbm::new(1e6, 100.0);
        hbm.add(0, (0, 0), 1000.0, 1000.0, 2.0, None);
        assert!((hbm.flows[0].rate - 50.0).abs() < 1e-9);
    }

    #[test]
    fn a_late_flow_slows_an_earlier_one() {
        // Flow A alone at 100 for 5 cycles (500 B left of 1000), then B
        // arrives and both get 50: A finishes at 5 + 10 = 15.
        let mut hbm = Hbm::new(1e12, 100.0);
        hbm.add(0, (0, 0), 1000.0, 100.0, 1.0, None);
        hbm.add(5, (1, 0), 1000.0, 100.0, 1.0, None);
        assert_eq!(hbm.next_finish(5), Some(15));
        assert_eq!(hbm.take_finished(15), vec![(0, 0)]);
        // B moved 500 in 10 cycles at 50, then 500 at 100: done at 20.
        assert_eq!(hbm.next_finish(15), Some(20));
    }
}
