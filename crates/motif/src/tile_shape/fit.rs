//! Which base blocks (baseM x baseN x baseK) fit a cube core, and the
//! shapes the tile-shape motif moves a block to.
//!
//! Capacities (hardware-facts.md section E "Per-core memory", from the
//! 910B2's [INI] `AICoreSpec`): L1 512 KB, L0A and L0B 64 KB each, L0C
//! 128 KB, the bias table 1 KB. Constraints (guide 6.2.4.2.2, table
//! 6-1073, and hardware-facts.md section D): `baseM x baseK x size x
//! dbL0A <= L0A`, `baseN x baseK x size x dbL0B <= L0B`, `baseM x baseN
//! x 4 x dbL0C <= L0C` (float or int32 in L0C), `baseN x sizeof(bias) <=`
//! the bias table, the A and B blocks held in L1 (and the bias row) within
//! L1; baseM and baseN multiples of 16, baseK a multiple of 16 and of C0
//! (32 bytes of the type: 32 int8). The guide writes `<` for the L0
//! bounds, but its own recommended block (128, 256, 64) with dbL0B = 2
//! fills L0B exactly, and the emulated GetTiling and the fixtures' hosts
//! accept a block that fills a buffer: `<=` here.
//!
//! Several Matmul objects in one kernel share the AI core's buffers: each
//! gets an equal part (the flash attention package gives each of its two
//! objects half of L1, L0A, L0B and L0C).

/// L1 bytes of a cube core.
pub(crate) const L1_BYTES: i64 = 512 * 1024;
/// L0A bytes.
pub(crate) const L0A_BYTES: i64 = 64 * 1024;
/// L0B bytes.
pub(crate) const L0B_BYTES: i64 = 64 * 1024;
/// L0C bytes.
pub(crate) const L0C_BYTES: i64 = 128 * 1024;
/// Bias table bytes.
pub(crate) const BT_BYTES: i64 = 1024;
/// Bytes of an L0C element (float or int32).
const L0C_ELEM: i64 = 4;
/// The output block from which a block counts as large (the motif's
/// present form): half the area of the largest block that fits a
/// double-buffered L0A/L0B and a single L0C with half inputs, 128 x 256
/// (the guide's recommended base block, TCubeTiling结构体 "性能调优推荐取值").
pub(crate) const LARGE_AREA: i64 = 128 * 128;
/// Side lengths a grown block may take: powers of two, so that the
/// power-of-two problem sizes common in matmul shapes divide into whole
/// blocks (a side may also keep its current value).
const SIDES: [i64; 5] = [16, 32, 64, 128, 256];
/// The baseK a grown block takes when its current one is smaller: the
/// emulated GetTiling's default for 2-byte types and the guide's
/// recommended 64.
const DEFAULT_K: i64 = 64;

/// What a block must fit: element size, buffer counts and the share of
/// the core's memories one Matmul object (or the kernel) has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Budget {
    /// Bytes of an A/B element.
    pub elem: i64,
    /// Buffers of A in L0A (dbL0A, or the A2 queue's depth).
    pub db_a: i64,
    /// Buffers of B in L0B.
    pub db_b: i64,
    /// Buffers of C in L0C.
    pub db_c: i64,
    /// Base blocks of A held in L1 per K step (2: double-buffered).
    pub l1_a: i64,
    /// Base blocks of B held in L1 per K step.
    pub l1_b: i64,
    /// Bytes of a bias element in the bias table and L1 (0: no bias).
    pub bias: i64,
    /// Matmul objects sharing the core's memories (at least 1).
    pub share: i64,
}

impl Budget {
    /// The alignment of baseK: 16 elements and C0 (32 bytes).
    pub fn k_align(&self) -> i64 {
        (32 / self.elem.max(1)).max(16)
    }

    /// True when a baseM x baseN x baseK block fits and is aligned.
    pub fn fits(&self, m: i64, n: i64, k: i64) -> bool {
        self.fits_aligned(m, n, k, self.k_align())
    }

    /// [`Budget::fits`] with baseK aligned to `k_align`.
    fn fits_aligned(&self, m: i64, n: i64, k: i64, k_align: i64) -> bool {
        let share = self.share.max(1);
        m > 0
            && n > 0
            && k > 0
            && m % 16 == 0
            && n % 16 == 0
            && k % k_align == 0
            && m * k * self.elem * self.db_a <= L0A_BYTES / share
            && n * k * self.elem * self.db_b <= L0B_BYTES / share
            && m * n * L0C_ELEM * self.db_c <= L0C_BYTES / share
            && n * self.bias <= BT_BYTES
            && (self.l1_a * m + self.l1_b * n) * k * self.elem + n * self.bias <= L1_BYTES / share
    }

    /// The baseK a block of m x n takes: the largest aligned value up to
    /// the current one (at least [`DEFAULT_K`]) that fits; None when none
    /// does.
    fn k_for(&self, m: i64, n: i64, current_k: i64) -> Option<i64> {
        let align = self.k_align();
        let mut k = current_k.max(DEFAULT_K) / align * align;
        while k >= align {
            if self.fits(m, n, k) {
                return Some(k);
            }
            k -= align;
        }
        None
    }
}

/// A base block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Block {
    /// baseM.
    pub m: i64,
    /// baseN.
    pub n: i64,
    /// baseK (-1: left to the tiling, which fits it to L0A/L0B itself).
    pub k: i64,
}

impl std::fmt::Display for Block {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} x {} x {}", self.m, self.n, self.k)
    }
}

/// The baseK the emulated GetTiling picks for a block whose baseK is left
/// to it (-1): 64 elements of a 2-byte type, 32 of float, 128 of int8,
/// made smaller by C0 while the block does not fit L0A/L0B
/// (`lib/matmul_tiling.h`).
fn tiling_k(b: &Budget, m: i64, n: i64) -> i64 {
    let c0 = 32 / b.elem.max(1);
    let share = b.share.max(1);
    let mut k = match b.elem {
        1 => 128,
        4 => 32,
        _ => 64,
    };
    while k > c0
        && (m * k * b.elem * b.db_a > L0A_BYTES / share
            || n * k * b.elem * b.db_b > L0B_BYTES / share)
    {
        k -= c0;
    }
    k
}

/// True when `block` fits `budget` (a baseK of -1 as the tiling picks it,
/// a multiple of C0).
pub(crate) fn block_fits(budget: &Budget, block: Block) -> bool {
    if block.k > 0 {
        budget.fits(block.m, block.n, block.k)
    } else {
        let c0 = 32 / budget.elem.max(1);
        budget.fits_aligned(block.m, block.n, tiling_k(budget, block.m, block.n), c0)
    }
}

/// The weaker block of the removal: the longer of baseM and baseN halved
/// (baseN on a tie: shorter Fixpipe rows and more reloads of A), rounded
/// down to a multiple of 16, at least 16; `admit` says which values a
/// side may take (an annotated knob's domain) and picks the largest
/// admitted value at most the target. None when the side cannot shrink.
pub(crate) fn shrunk(
    block: Block,
    admit_m: &dyn Fn(i64) -> bool,
    admit_n: &dyn Fn(i64) -> bool,
) -> Option<Block> {
    let halve_n = block.n >= block.m;
    let (side, admit) = if halve_n {
        (block.n, admit_n)
    } else {
        (block.m, admit_m)
    };
    let target = (side / 2) / 16 * 16;
    let mut v = target;
    while v >= 16 && !admit(v) {
        v -= 16;
    }
    if v < 16 || v >= side {
        return None;
    }
    Some(if halve_n {
        Block { n: v, ..block }
    } else {
        Block { m: v, ..block }
    })
}

/// The larger blocks of the application, far one first: the largest
/// output block that fits (each side at least its current value, from
/// [`SIDES`]; of equal areas the squarer, whose A and B traffic 1/baseM +
/// 1/baseN is the least, then the larger baseN, as the guide's 128 x
/// 256), then
/// both sides doubled, then the shorter side doubled (baseN on a tie);
/// each with its baseK ([`Budget::k_for`]; a baseK of -1 stays -1, the
/// tiling fits it). Only blocks that fit, are larger than `block` and
/// that `admit` accepts (side and baseK values), without repeats.
pub(crate) fn grown(budget: &Budget, block: Block, admit: &dyn Fn(Block) -> bool) -> Vec<Block> {
    let area = block.m * block.n;
    let with_k = |m: i64, n: i64| -> Option<Block> {
        let k = if block.k <= 0 {
            block.k
        } else {
            budget.k_for(m, n, block.k)?
        };
        let b = Block { m, n, k };
        (block_fits(budget, b) && admit(b)).then_some(b)
    };
    let sides = |current: i64| -> Vec<i64> {
        let mut v: Vec<i64> = SIDES.iter().copied().filter(|&s| s >= current).collect();
        if !v.contains(&current) {
            v.push(current);
        }
        v
    };
    let mut best: Option<Block> = None;
    for &m in &sides(block.m) {
        for &n in &sides(block.n) {
            if m * n <= area {
                continue;
            }
            let Some(b) = with_k(m, n) else {
                continue;
            };
            let better = match best {
                None => true,
                Some(o) => {
                    (b.m * b.n, b.m.min(b.n), b.n, b.k) > (o.m * o.n, o.m.min(o.n), o.n, o.k)
                }
            };
            if better {
                best = Some(b);
            }
        }
    }
    let mut out: Vec<Block> = Vec::new();
    let mut push = |b: Option<Block>| {
        if let Some(b) = b {
            if b.m * b.n > area && !out.contains(&b) {
                out.push(b);
            }
        }
    };
    push(best);
    push(with_k(block.m * 2, block.n * 2));
    if block.n <= block.m {
        push(with_k(block.m, block.n * 2));
    } else {
        push(with_k(block.m * 2, block.n));
    }
    out
}
