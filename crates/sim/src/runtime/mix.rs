//! MIX launches and the synchronisation between the cores of a launch.
//!
//! Kernel types (guide 6.2.3.14.12 "设置Kernel类型"): a kernel declares its
//! type with `KERNEL_TASK_TYPE_DEFAULT` / `KERNEL_TASK_TYPE` (the emulation
//! headers register the declaration when the library loads), or uses the
//! high-level Matmul API, which makes it MIX AIC:AIV 1:2 unless it is
//! compiled with `ASCENDC_CUBE_ONLY`. [`layout`] turns the type and the
//! Block Dim into the cores the launch starts: one thread per core, each
//! with its [`CoreRole`].
//!
//! Identity on each core (guide 6.2.3.9.7-8, 6.2.3.13.3): GetSubBlockNum
//! and GetTaskRatio are 2 on the AIVs of a 1:2 launch and 1 everywhere else;
//! GetSubBlockIdx is the AIV's index within its AI core. GetBlockIdx on an
//! AIV is `group * sub_num + sub` (what the Matmul samples split their
//! work by: `SetDim(2)` on the host, Block Dim 1, AIV block indices 0 and
//! 1), on an AIC the AI core; GetBlockNum is the Block Dim.
//!
//! [`LaunchSync`] holds every cross-core wait of a launch under one lock:
//! SyncAll (all cores, or the AIVs only with `SyncAll<true>` in a MIX
//! launch) and the CrossCoreSetFlag / CrossCoreWaitFlag counters (guide
//! 6.2.3.7.2.4-5; hardware-facts.md section A "Cross-core"): each core has
//! a counter per flag id; a wait blocks until its counter is above zero
//! and counts it down; mode 0 counts up every core of the setter's type
//! once all of them set, mode 1 both AIVs of an AI core once both set,
//! mode 2 the AIVs of the AI core when its AIC sets and the AIC once all
//! its AIVs set. A counter above 15 is a fault (the guide: at most 15
//! sets). Each count remembers the CrossSet instructions that made it, so
//! the timing model orders the wait after exactly those. A wait that no
//! running core can satisfy any more is a deadlock fault, found when every
//! core of the launch is waiting or finished.

use super::fault::Fault;
use crate::trace::CoreRole;
use std::collections::{HashMap, VecDeque};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// A kernel type of the guide's `KernelMetaType` (the values the headers
/// register).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelType {
    /// KERNEL_TYPE_AIV_ONLY.
    AivOnly,
    /// KERNEL_TYPE_AIC_ONLY.
    AicOnly,
    /// KERNEL_TYPE_MIX_AIV_1_0.
    MixAiv1_0,
    /// KERNEL_TYPE_MIX_AIC_1_0.
    MixAic1_0,
    /// KERNEL_TYPE_MIX_AIC_1_1.
    MixAic1_1,
    /// KERNEL_TYPE_MIX_AIC_1_2.
    MixAic1_2,
}

impl KernelType {
    /// From the enum value of `KernelMetaType` (types.h order).
    pub fn from_code(code: i32) -> Option<KernelType> {
        Some(match code {
            0 => KernelType::AivOnly,
            1 => KernelType::AicOnly,
            2 => KernelType::MixAiv1_0,
            3 => KernelType::MixAic1_0,
            4 => KernelType::MixAic1_1,
            5 => KernelType::MixAic1_2,
            _ => return None,
        })
    }

    /// The guide's name.
    pub fn name(self) -> &'static str {
        match self {
            KernelType::AivOnly => "KERNEL_TYPE_AIV_ONLY",
            KernelType::AicOnly => "KERNEL_TYPE_AIC_ONLY",
            KernelType::MixAiv1_0 => "KERNEL_TYPE_MIX_AIV_1_0",
            KernelType::MixAic1_0 => "KERNEL_TYPE_MIX_AIC_1_0",
            KernelType::MixAic1_1 => "KERNEL_TYPE_MIX_AIC_1_1",
            KernelType::MixAic1_2 => "KERNEL_TYPE_MIX_AIC_1_2",
        }
    }

    /// Cube and vector cores per AI core.
    fn cores(self) -> (u32, u32) {
        match self {
            KernelType::AivOnly | KernelType::MixAiv1_0 => (0, 1),
            KernelType::AicOnly | KernelType::MixAic1_0 => (1, 0),
            KernelType::MixAic1_1 => (1, 1),
            KernelType::MixAic1_2 => (1, 2),
        }
    }
}

/// What the kernel library registered when it loaded (the layout of
/// `ascendopt::KernelTypes` in `ascendopt/kernel/kernel_type.h`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct RegisteredTypes {
    /// KERNEL_TASK_TYPE_DEFAULT's value, -1 when absent.
    pub default_type: i32,
    /// Entries used in `keys` / `types`.
    pub count: i32,
    /// KERNEL_TASK_TYPE's tiling keys.
    pub keys: [u64; 32],
    /// Their types.
    pub types: [i32; 32],
    /// 1 when the kernel constructs a Matmul object (lib/matmul_intf.h).
    pub matmul_api: i32,
    /// 1 when that Matmul was compiled with ASCENDC_CUBE_ONLY.
    pub cube_only: i32,
}

/// A registered kernel type (KERNEL_TASK_TYPE, its default) that the
/// Atlas A2 does not have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("kernel type {code} is not one the Atlas A2 supports (guide 6.2.3.14.12)")]
pub struct UnsupportedKernelType {
    /// The registered value.
    pub code: i32,
}

impl RegisteredTypes {
    /// The kernel type for a tiling key: KERNEL_TASK_TYPE first, then the
    /// default, then MIX 1:2 (AIC only under ASCENDC_CUBE_ONLY) for a
    /// kernel that uses the Matmul API; `None` when nothing says (the
    /// blocks' type then follows from what they do). Err on a value
    /// outside the enum.
    pub fn for_key(&self, key: u64) -> Result<Option<KernelType>, UnsupportedKernelType> {
        let n = self.count.clamp(0, 32) as usize;
        let code = self.keys[..n]
            .iter()
            .position(|&k| k == key)
            .map(|i| self.types[i])
            .or((self.default_type >= 0).then_some(self.default_type));
        match code {
            // KERNEL_TYPE_AICORE .. KERNEL_TYPE_MIX_VECTOR_CORE are types of
            // other products (the Atlas inference series); on the A2 the
            // blocks' type follows from what they do, as without a type.
            Some(6..=9) => Ok(None),
            Some(c) => KernelType::from_code(c)
                .map(Some)
                .ok_or(UnsupportedKernelType { code: c }),
            None if self.matmul_api != 0 && self.cube_only != 0 => Ok(Some(KernelType::AicOnly)),
            None if self.matmul_api != 0 => Ok(Some(KernelType::MixAic1_2)),
            None => Ok(None),
        }
    }
}

/// One core of a launch: its role, and the GetBlockIdx/GetBlockNum it sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CoreSlot {
    /// The role (`None` in an untyped launch).
    pub role: Option<CoreRole>,
    /// GetBlockIdx.
    pub block_idx: u32,
}

/// The cores a launch of `block_dim` starts, in thread order (per AI core:
/// the AIC, then its AIVs).
pub fn layout(kind: Option<KernelType>, block_dim: u32) -> Vec<CoreSlot> {
    let Some(kind) = kind else {
        return (0..block_dim)
            .map(|i| CoreSlot {
                role: None,
                block_idx: i,
            })
            .collect();
    };
    let (cubes, vecs) = kind.cores();
    let mut out = Vec::with_capacity((block_dim * (cubes + vecs)) as usize);
    for group in 0..block_dim {
        for _ in 0..cubes {
            out.push(CoreSlot {
                role: Some(CoreRole {
                    cube: true,
                    group,
                    sub: 0,
                    sub_num: 1,
                }),
                block_idx: group,
            });
        }
        for sub in 0..vecs {
            out.push(CoreSlot {
                role: Some(CoreRole {
                    cube: false,
                    group,
                    sub,
                    sub_num: vecs,
                }),
                block_idx: group * vecs + sub,
            });
        }
    }
    out
}

/// Where a blocked core waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Waiting {
    Running,
    SyncAll {
        barrier: usize,
        generation: u32,
    },
    Cross {
        flag: u8,
    },
    /// The Matmul server's wait for AIV `sub`'s request (see
    /// [`LaunchSync::serve_wait`]).
    Server {
        flag: u8,
        sub: u32,
    },
    Finished,
}

#[derive(Debug, Default)]
struct Barrier {
    arrived: u32,
    generation: u32,
}

/// The CrossSet instructions behind one count: (core, instruction index).
pub type Sources = Vec<(u32, u32)>;

/// Sets collected towards one count-up of a multi-setter mode.
#[derive(Debug, Default)]
struct Gathering {
    /// Per generation, the sets that arrived.
    generations: Vec<Vec<(u32, u32)>>,
    /// Sets each participant made so far.
    made: HashMap<u32, usize>,
}

#[derive(Debug)]
struct State {
    waiting: Vec<Waiting>,
    barriers: [Barrier; 2],
    /// Counts per (core, flag): each one the sets that made it.
    counts: HashMap<(u32, u8), VecDeque<Sources>>,
    gathering: HashMap<(u8, u32, u8), Gathering>,
}

/// Most counts a flag of one core may hold (guide 6.2.3.7.2.5).
pub const MAX_FLAG_COUNT: usize = 15;

/// Highest user flag id on the Atlas A2 (guide 6.2.3.7.2.4: 0-10).
pub const MAX_USER_FLAG: u8 = 10;

/// Internal mode of the Matmul API's messages: an AIV to its AIC.
pub const MODE_TO_AIC: u8 = 16;
/// Internal mode: the AIC to the AIV `mode - MODE_TO_AIV`.
pub const MODE_TO_AIV: u8 = 32;
/// Internal wait mode of the Matmul server on an AIC
/// ([`LaunchSync::serve_wait`]; the flag argument holds the AIV in its
/// bits 8 and up).
pub const MODE_SERVER: u8 = 64;

/// The cross-core synchronisation state of one launch.
pub struct LaunchSync {
    slots: Vec<CoreSlot>,
    mixed: bool,
    state: Mutex<State>,
    cv: Condvar,
}

impl LaunchSync {
    /// For a launch with these cores.
    pub fn new(slots: Vec<CoreSlot>) -> LaunchSync {
        let mixed = slots.iter().any(|s| s.role.is_some_and(|r| r.cube))
            && slots.iter().any(|s| s.role.is_some_and(|r| !r.cube));
        let n = slots.len();
        LaunchSync {
            slots,
            mixed,
            state: Mutex::new(State {
                waiting: vec![Waiting::Running; n],
                barriers: Default::default(),
                counts: HashMap::new(),
                gathering: HashMap::new(),
            }),
            cv: Condvar::new(),
        }
    }

    /// The cores, in thread order.
    pub fn slots(&self) -> &[CoreSlot] {
        &self.slots
    }

    /// True when the launch has cube and vector cores.
    pub fn is_mixed(&self) -> bool {
        self.mixed
    }

    fn lock(&self) -> Result<MutexGuard<'_, State>, Fault> {
        self.state.lock().map_err(|_| Fault::Deadlock {
            what: "cross-core state poisoned".into(),
        })
    }

    fn is_cube(&self, core: u32) -> bool {
        self.slots
            .get(core as usize)
            .and_then(|s| s.role)
            .is_some_and(|r| r.cube)
    }

    fn describe(&self, core: u32) -> String {
        match self.slots.get(core as usize).and_then(|s| s.role) {
            Some(r) if r.cube => format!("the AIC of AI core {}", r.group),
            Some(r) => format!("AIV {} of AI core {}", r.sub, r.group),
            None => format!("block {core}"),
        }
    }

    /// The AIVs of core `core`'s AI core.
    pub fn vector_peers(&self, core: u32) -> Vec<u32> {
        let Some(role) = self.slots.get(core as usize).and_then(|s| s.role) else {
            return Vec::new();
        };
        (0..self.slots.len() as u32)
            .filter(|&c| {
                self.slots[c as usize]
                    .role
                    .is_some_and(|r| !r.cube && r.group == role.group)
            })
            .collect()
    }

    /// The AIVs of core `core`'s AI core that have not returned yet.
    pub fn running_vector_peers(&self, core: u32) -> u32 {
        let peers = self.vector_peers(core);
        match self.state.lock() {
            Ok(s) => peers
                .iter()
                .filter(|&&c| s.waiting[c as usize] != Waiting::Finished)
                .count() as u32,
            Err(_) => 0,
        }
    }

    /// Participants of SyncAll barrier `barrier` (0 all, 1 the AIVs).
    fn barrier_members(&self, barrier: usize) -> Vec<u32> {
        (0..self.slots.len() as u32)
            .filter(|&c| barrier == 0 || !self.is_cube(c))
            .collect()
    }

    /// A core returned from the kernel.
    pub fn finished(&self, core: u32) {
        if let Ok(mut s) = self.state.lock() {
            if let Some(w) = s.waiting.get_mut(core as usize) {
                *w = Waiting::Finished;
            }
        }
        self.cv.notify_all();
    }

    /// Wakes every waiting core (another core faulted).
    pub fn wake_all(&self) {
        self.cv.notify_all();
    }

    /// True when core `core`'s wait can complete now.
    fn satisfied(&self, s: &State, core: usize) -> bool {
        match s.waiting[core] {
            Waiting::Running | Waiting::Finished => true,
            Waiting::SyncAll {
                barrier,
                generation,
            } => s.barriers[barrier].generation != generation,
            Waiting::Cross { flag } => s
                .counts
                .get(&(core as u32, flag))
                .is_some_and(|q| !q.is_empty()),
            Waiting::Server { flag, sub } => self.server_pick(s, core as u32, flag, sub).is_some(),
        }
    }

    /// What the Matmul server waiting for AIV `sub`'s request (flag
    /// `flag + sub`) can do now: Some(Some(s)) serve AIV s's request,
    /// Some(None) stop waiting for `sub` (it returned), None wait.
    fn server_pick(&self, s: &State, core: u32, flag: u8, sub: u32) -> Option<Option<u32>> {
        let peers = self.vector_peers(core);
        let has = |i: u32| {
            s.counts
                .get(&(core, flag + i as u8))
                .is_some_and(|q| !q.is_empty())
        };
        if has(sub) {
            return Some(Some(sub));
        }
        let Some(&me) = peers.get(sub as usize) else {
            return Some(None);
        };
        if s.waiting[me as usize] == Waiting::Finished {
            return Some(None);
        }
        // AIV `sub` waits for something only the other AIV (or a core that
        // needs it) can give: serve the other's request meanwhile.
        let blocked = matches!(
            s.waiting[me as usize],
            Waiting::SyncAll { .. } | Waiting::Cross { .. }
        ) && !self.satisfied(s, me as usize);
        let other = 1 - sub.min(1);
        if blocked && (other as usize) < peers.len() && has(other) {
            return Some(Some(other));
        }
        None
    }

    /// The Matmul server's wait on the AIC `core`: for AIV `sub`'s request
    /// (a count of flag `flag + sub`), or until that AIV returned, or, while
    /// it is blocked on something the other AIV must do first, for the
    /// other's request. The order the server serves in is then a function
    /// of the AIVs' programs, never of thread timing, so the AIC's trace is
    /// the same on every run. Returns the sets of the count taken and the
    /// AIV served (None: AIV `sub` returned).
    pub fn serve_wait(
        &self,
        core: u32,
        flag: u8,
        sub: u32,
        aborted: &dyn Fn() -> bool,
    ) -> Result<(Sources, Option<u32>), Fault> {
        let mut s = self.lock()?;
        s.waiting[core as usize] = Waiting::Server { flag, sub };
        let what = || format!("the Matmul server on the AIC of core {core}");
        let mut s = self.wait_loop(s, core, aborted, &what)?;
        match self.server_pick(&s, core, flag, sub) {
            Some(Some(i)) => {
                let sources = s
                    .counts
                    .get_mut(&(core, flag + i as u8))
                    .and_then(|q| q.pop_front())
                    .unwrap_or_default();
                Ok((sources, Some(i)))
            }
            _ => Ok((Vec::new(), None)),
        }
    }

    /// True when every core waits for something no running core can give.
    fn stuck(&self, s: &State) -> bool {
        (0..s.waiting.len()).all(|c| {
            s.waiting[c] == Waiting::Finished
                || (s.waiting[c] != Waiting::Running && !self.satisfied(s, c))
        })
    }

    fn wait_loop<'s>(
        &'s self,
        mut s: MutexGuard<'s, State>,
        core: u32,
        aborted: &dyn Fn() -> bool,
        what: &dyn Fn() -> String,
    ) -> Result<MutexGuard<'s, State>, Fault> {
        let c = core as usize;
        loop {
            if self.satisfied(&s, c) {
                s.waiting[c] = Waiting::Running;
                return Ok(s);
            }
            if aborted() {
                s.waiting[c] = Waiting::Running;
                return Err(Fault::Deadlock {
                    what: format!("{} interrupted: another core faulted", what()),
                });
            }
            if self.stuck(&s) {
                let finished = s
                    .waiting
                    .iter()
                    .filter(|w| **w == Waiting::Finished)
                    .count();
                s.waiting[c] = Waiting::Running;
                self.cv.notify_all();
                return Err(Fault::Deadlock {
                    what: format!(
                        "{} can never complete: every core of the launch waits or has returned ({finished} returned)",
                        what()
                    ),
                });
            }
            let (guard, _) = self
                .cv
                .wait_timeout(s, Duration::from_millis(50))
                .map_err(|_| Fault::Deadlock {
                    what: "cross-core state poisoned".into(),
                })?;
            s = guard;
        }
    }

    /// SyncAll of core `core`: `aiv_only` (SyncAll<true>) in a MIX launch
    /// waits for the AIVs only. Returns the generation passed, with the
    /// high bit set for an AIV-only barrier of a MIX launch.
    pub fn sync_all(
        &self,
        core: u32,
        aiv_only: bool,
        aborted: &dyn Fn() -> bool,
    ) -> Result<u32, Fault> {
        let barrier = usize::from(aiv_only && self.mixed);
        if barrier == 1 && self.is_cube(core) {
            return Err(Fault::InvalidArg {
                api: "SyncAll",
                what: "SyncAll<true> (the AIVs only) called on the AIC of a MIX launch".into(),
            });
        }
        let members = self.barrier_members(barrier).len() as u32;
        let mut s = self.lock()?;
        let generation = s.barriers[barrier].generation;
        s.barriers[barrier].arrived += 1;
        let tag = generation | if barrier == 1 { 1 << 31 } else { 0 };
        if s.barriers[barrier].arrived == members {
            s.barriers[barrier].arrived = 0;
            s.barriers[barrier].generation += 1;
            self.cv.notify_all();
            return Ok(tag);
        }
        s.waiting[core as usize] = Waiting::SyncAll {
            barrier,
            generation,
        };
        let what = || "SyncAll".to_string();
        self.wait_loop(s, core, aborted, &what).map(|_| tag)
    }

    /// CrossCoreSetFlag<mode>(flag) of core `core`, recorded as its
    /// instruction `instr`.
    pub fn cross_set(&self, core: u32, mode: u8, flag: u8, instr: u32) -> Result<(), Fault> {
        let api = "CrossCoreSetFlag";
        let me = self
            .slots
            .get(core as usize)
            .copied()
            .ok_or(Fault::InvalidArg {
                api,
                what: format!("core {core} is not part of the launch"),
            })?;
        let role = me.role.ok_or_else(|| Fault::InvalidArg {
            api,
            what: "cross-core flags need a kernel type (KERNEL_TASK_TYPE_DEFAULT; guide 6.2.3.7.2.4: KERNEL_TYPE_MIX_AIV_1_0 or KERNEL_TYPE_MIX_AIC_1_0 for a pure vector or cube kernel)".into(),
        })?;
        let all = 0..self.slots.len() as u32;
        let same_group = |c: &u32| {
            self.slots[*c as usize]
                .role
                .is_some_and(|r| r.group == role.group)
        };
        let (participants, targets): (Vec<u32>, Vec<u32>) = match mode {
            0 => {
                let same: Vec<u32> = all.filter(|&c| self.is_cube(c) == role.cube).collect();
                (same.clone(), same)
            }
            1 => {
                if role.cube {
                    return Err(Fault::InvalidArg {
                        api,
                        what: "mode 1 synchronises the AIVs of an AI core; it was called on an AIC"
                            .into(),
                    });
                }
                let aivs: Vec<u32> = all.filter(|c| same_group(c) && !self.is_cube(*c)).collect();
                (aivs.clone(), aivs)
            }
            2 => {
                if !self.mixed {
                    return Err(Fault::InvalidArg {
                        api,
                        what: "mode 2 synchronises the AIC with its AIVs; the launch has only one kind of core (KERNEL_TYPE_MIX_AIC_1_1 or _1_2 starts both)".into(),
                    });
                }
                let aic: Vec<u32> = all
                    .clone()
                    .filter(|c| same_group(c) && self.is_cube(*c))
                    .collect();
                let aivs: Vec<u32> = all.filter(|c| same_group(c) && !self.is_cube(*c)).collect();
                if role.cube {
                    (vec![core], aivs)
                } else {
                    (aivs, aic)
                }
            }
            MODE_TO_AIC => {
                let aic: Vec<u32> = all.filter(|c| same_group(c) && self.is_cube(*c)).collect();
                (vec![core], aic)
            }
            m if (MODE_TO_AIV..MODE_TO_AIV + 2).contains(&m) => {
                let sub = u32::from(m - MODE_TO_AIV);
                let aiv: Vec<u32> = all
                    .filter(|c| {
                        same_group(c)
                            && self.slots[*c as usize]
                                .role
                                .is_some_and(|r| !r.cube && r.sub == sub)
                    })
                    .collect();
                (vec![core], aiv)
            }
            4 => {
                return Err(Fault::InvalidArg {
                    api,
                    what: "mode 4 exists only on the Atlas 350 (guide 6.2.3.7.2.4); the 910B is an Atlas A2".into(),
                })
            }
            m => {
                return Err(Fault::InvalidArg {
                    api,
                    what: format!("mode {m} is not 0, 1 or 2"),
                })
            }
        };
        if targets.is_empty() {
            return Err(Fault::InvalidArg {
                api,
                what: format!(
                    "mode {mode} from {} reaches no core of this launch",
                    self.describe(core)
                ),
            });
        }
        let mut s = self.lock()?;
        let sources = if participants.len() == 1 {
            Some(vec![(core, instr)])
        } else {
            // Mode 0 gathers over the cores of one type, the others over
            // the AI core.
            let scope = if mode == 0 {
                u32::from(role.cube)
            } else {
                role.group
            };
            let g = s.gathering.entry((mode, scope, flag)).or_default();
            let made = g.made.entry(core).or_insert(0);
            let generation = *made;
            *made += 1;
            if g.generations.len() <= generation {
                g.generations.resize_with(generation + 1, Vec::new);
            }
            g.generations[generation].push((core, instr));
            (g.generations[generation].len() == participants.len())
                .then(|| std::mem::take(&mut g.generations[generation]))
        };
        if let Some(sources) = sources {
            for t in targets {
                let q = s.counts.entry((t, flag)).or_default();
                if q.len() >= MAX_FLAG_COUNT {
                    return Err(Fault::InvalidArg {
                        api,
                        what: format!(
                            "flag {flag} of {} would count past {MAX_FLAG_COUNT} (the guide allows at most 15 outstanding sets; the kernel hangs on the device)",
                            self.describe(t)
                        ),
                    });
                }
                q.push_back(sources.clone());
            }
            self.cv.notify_all();
        }
        Ok(())
    }

    /// CrossCoreWaitFlag(flag) of core `core`: blocks until its counter is
    /// above zero; returns the sets of the count it took.
    pub fn cross_wait(
        &self,
        core: u32,
        flag: u8,
        aborted: &dyn Fn() -> bool,
    ) -> Result<Vec<(u32, u32)>, Fault> {
        let mut s = self.lock()?;
        s.waiting[core as usize] = Waiting::Cross { flag };
        let who = self.describe(core);
        let what = || format!("CrossCoreWaitFlag({flag}) on {who}");
        let mut s = self.wait_loop(s, core, aborted, &what)?;
        Ok(s.counts
            .get_mut(&(core, flag))
            .and_then(|q| q.pop_front())
            .unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn never() -> bool {
        false
    }

    #[test]
    fn mix_1_2_layout_numbers_the_vector_cores_by_ai_core() {
        let slots = layout(Some(KernelType::MixAic1_2), 2);
        let idx: Vec<(bool, u32, u32)> = slots
            .iter()
            .map(|s| {
                let r = s.role.expect("typed");
                (r.cube, r.sub, s.block_idx)
            })
            .collect();
        assert_eq!(
            idx,
            vec![
                (true, 0, 0),
                (false, 0, 0),
                (false, 1, 1),
                (true, 0, 1),
                (false, 0, 2),
                (false, 1, 3)
            ]
        );
        assert_eq!(layout(None, 3).len(), 3);
        assert_eq!(layout(Some(KernelType::MixAic1_1), 3).len(), 6);
    }

    #[test]
    fn registered_types_prefer_the_key_then_default_then_matmul() {
        let mut r = RegisteredTypes {
            default_type: -1,
            count: 1,
            keys: [0; 32],
            types: [0; 32],
            matmul_api: 1,
            cube_only: 0,
        };
        r.keys[0] = 7;
        r.types[0] = 1;
        assert_eq!(r.for_key(7), Ok(Some(KernelType::AicOnly)));
        assert_eq!(r.for_key(1), Ok(Some(KernelType::MixAic1_2)));
        r.default_type = 0;
        assert_eq!(r.for_key(1), Ok(Some(KernelType::AivOnly)));
        r.default_type = 9;
        assert_eq!(r.for_key(1), Ok(None));
        r.default_type = 12;
        assert!(r.for_key(1).is_err());
    }

    #[test]
    fn mode_2_counts_the_aic_once_both_aivs_set() {
        let sync = LaunchSync::new(layout(Some(KernelType::MixAic1_2), 1));
        // AIV 0 sets: not yet a count on the AIC.
        sync.cross_set(1, 2, 3, 10).expect("set");
        {
            let s = sync.lock().expect("lock");
            assert!(!s.counts.contains_key(&(0, 3)));
        }
        sync.cross_set(2, 2, 3, 20).expect("set");
        let sources = sync.cross_wait(0, 3, &never).expect("wait");
        assert_eq!(sources, vec![(1, 10), (2, 20)]);
        // The AIC sets: each AIV gets one count.
        sync.cross_set(0, 2, 4, 5).expect("set");
        assert_eq!(sync.cross_wait(1, 4, &never).expect("wait"), vec![(0, 5)]);
        assert_eq!(sync.cross_wait(2, 4, &never).expect("wait"), vec![(0, 5)]);
    }

    #[test]
    fn a_wait_nobody_can_satisfy_is_a_deadlock() {
        let sync = LaunchSync::new(layout(Some(KernelType::MixAic1_2), 1));
        sync.finished(0);
        sync.finished(2);
        let err = sync.cross_wait(1, 0, &never).expect_err("deadlock");
        assert!(
            err.to_string().contains("CrossCoreWaitFlag(0) on AIV 0"),
            "{err}"
        );
    }

    #[test]
    fn the_server_takes_the_aivs_in_turn_whatever_arrives_first() {
        let sync = LaunchSync::new(layout(Some(KernelType::MixAic1_2), 1));
        // AIV 1 asks first; the server waiting for AIV 0 does not take it
        // while AIV 0 runs.
        sync.cross_set(2, MODE_TO_AIC, 21, 7).expect("set");
        {
            let s = sync.lock().expect("lock");
            assert_eq!(sync.server_pick(&s, 0, 20, 0), None);
        }
        sync.cross_set(1, MODE_TO_AIC, 20, 3).expect("set");
        assert_eq!(
            sync.serve_wait(0, 20, 0, &never).expect("wait"),
            (vec![(1, 3)], Some(0))
        );
        assert_eq!(
            sync.serve_wait(0, 20, 1, &never).expect("wait"),
            (vec![(2, 7)], Some(1))
        );
        // AIV 0 returns: the wait for it ends without a request.
        sync.finished(1);
        assert_eq!(
            sync.serve_wait(0, 20, 0, &never).expect("wait"),
            (vec![], None)
        );
    }

    #[test]
    fn sixteen_outstanding_sets_are_a_fault() {
        let sync = LaunchSync::new(layout(Some(KernelType::MixAic1_2), 1));
        for i in 0..15 {
            sync.cross_set(0, 2, 1, i).expect("set");
        }
        let err = sync.cross_set(0, 2, 1, 15).expect_err("16th");
        assert!(err.to_string().contains("past 15"), "{err}");
    }

    #[test]
    fn mode_0_releases_every_vector_core_once_all_set() {
        let sync = LaunchSync::new(layout(Some(KernelType::MixAiv1_0), 3));
        sync.cross_set(0, 0, 8, 1).expect("set");
        sync.cross_set(1, 0, 8, 1).expect("set");
        {
            let s = sync.lock().expect("lock");
            assert!(s.counts.is_empty());
        }
        sync.cross_set(2, 0, 8, 2).expect("set");
        for c in 0..3 {
            assert_eq!(sync.cross_wait(c, 8, &never).expect("wait").len(), 3);
        }
    }
}
