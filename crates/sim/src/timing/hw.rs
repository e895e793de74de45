//! The hardware profile: every number the timing model uses, read from a
//! TOML file where each number is written `{ value = ..., source = "..." }`.
//!
//! Built-in profiles (`crates/sim/profiles/*.toml`) are embedded with
//! `include_str!`, so the binary works anywhere; [`HwProfile::load`] reads a
//! user's file. A load error names the file and the dotted key. Unknown keys
//! are errors too, so a typo cannot silently fall back to nothing.
//!
//! Units in the file are the natural ones (MHz, GB/s, µs, cycles, bytes);
//! [`HwProfile`] holds them converted to cycles and bytes per cycle.

use crate::trace::VecOp;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Why a hardware profile could not be loaded.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum HwProfileError {
    /// The file could not be read.
    #[error("cannot read hardware profile {file}: {message}")]
    Io {
        /// The file.
        file: PathBuf,
        /// The OS message.
        message: String,
    },
    /// The file is not valid TOML.
    #[error("hardware profile {file} is not valid TOML: {message}")]
    Parse {
        /// The file.
        file: PathBuf,
        /// The parser's message.
        message: String,
    },
    /// A key is missing, has the wrong type, lacks a source, or is out of
    /// range.
    #[error("hardware profile {file}, key `{key}`: {message}")]
    Key {
        /// The file.
        file: PathBuf,
        /// Dotted key, e.g. `dma.gm_to_ub.latency_cycles`.
        key: String,
        /// What is wrong.
        message: String,
    },
    /// No built-in profile has this name.
    #[error("no built-in hardware profile `{name}` (known: {known})")]
    UnknownBuiltin {
        /// The name asked for.
        name: String,
        /// The names that exist.
        known: String,
    },
}

/// The built-in profiles: (name, file name, contents).
const BUILTIN: &[(&str, &str, &str)] = &[
    (
        "ascend910b2",
        "ascend910b2.toml",
        include_str!("../../profiles/ascend910b2.toml"),
    ),
    (
        "ascend910b3",
        "ascend910b3.toml",
        include_str!("../../profiles/ascend910b3.toml"),
    ),
    (
        "ascend310b",
        "ascend310b.toml",
        include_str!("../../profiles/ascend310b.toml"),
    ),
];

/// The name of the default built-in profile (the chip an operator runs on
/// unless its op.toml names another).
pub const DEFAULT_CHIP: &str = "ascend910b2";

/// Cost of one data path (a DMA direction).
#[derive(Debug, Clone, PartialEq)]
pub struct DmaPath {
    /// Cycles the MTE spends on a copy before data flows (descriptor issue);
    /// the pipe is busy, no bandwidth is used.
    pub issue_cycles: f64,
    /// Cycles from the last byte leaving the pipe to completion; the pipe is
    /// free again (pipelined), dependants wait.
    pub latency_cycles: f64,
    /// Peak bytes per cycle of one core on this path.
    pub bytes_per_cycle: f64,
    /// Peak bytes per cycle of one core for the GM bytes of a read that
    /// L2 holds (optional key `l2_hit_bytes_per_cycle`; `bytes_per_cycle`
    /// when the profile gives none).
    pub l2_hit_bytes_per_cycle: f64,
}

/// DMA costs of every path plus the GM alignment rules.
#[derive(Debug, Clone, PartialEq)]
pub struct DmaCosts {
    /// GM -> UB (MTE2).
    pub gm_to_ub: DmaPath,
    /// UB -> GM (MTE3).
    pub ub_to_gm: DmaPath,
    /// GM -> L1 (MTE2).
    pub gm_to_l1: DmaPath,
    /// UB -> UB (MTE2 on A2).
    pub ub_to_ub: DmaPath,
    /// UB -> L1 (MTE3).
    pub ub_to_l1: DmaPath,
    /// L1 -> L0A (MTE1).
    pub l1_to_l0a: DmaPath,
    /// L1 -> L0B (MTE1).
    pub l1_to_l0b: DmaPath,
    /// L0C -> GM/L1/UB (FIX).
    pub l0c_out: DmaPath,
    /// GM alignment that gives the full rate (512 B).
    pub gm_align_bytes: u64,
    /// Rate factor when the GM side is not `gm_align_bytes` aligned.
    pub unaligned_rate_factor: f64,
    /// Cycles the MTE needs per burst of a multi-burst copy, overlapped with
    /// the data of the previous burst: such a copy moves at most
    /// `burst bytes / burst_cycles` bytes per cycle.
    pub burst_cycles: f64,
    /// UB/L1 granule a burst is rounded up to (32 B).
    pub granule_bytes: u64,
    /// Rate cap divisor per other core accessing the same 512 B ranges at
    /// the same time: cap / (1 + penalty * k).
    pub same_range_penalty: f64,
}

/// Cost of a vector API call: `head + per_repeat * repeats` cycles.
#[derive(Debug, Clone, PartialEq)]
pub struct VecCostRule {
    /// Operations this rule covers; empty = every operation.
    pub ops: Vec<VecOp>,
    /// Widest operand element sizes (bytes) it covers; empty = every size.
    pub elem_bytes: Vec<u32>,
    /// Completion latency after the last repeat is issued, in cycles.
    pub head_cycles: f64,
    /// Pipe occupancy per repeat (256 B of the widest operand), in cycles.
    pub per_repeat_cycles: f64,
}

/// Costs of the scalar unit.
#[derive(Debug, Clone, PartialEq)]
pub struct ScalarCosts {
    /// Scalar cycles to issue a vector API call.
    pub issue_vector_cycles: f64,
    /// Scalar cycles to issue a DMA API call.
    pub issue_dma_cycles: f64,
    /// Scalar cycles to issue a flag operation (SetFlag/WaitFlag and the
    /// queue calls lowered to them).
    pub issue_sync_cycles: f64,
    /// Scalar cycles to issue a PipeBarrier.
    pub issue_barrier_cycles: f64,
    /// Scalar cycles of API overhead around a GetValue/SetValue.
    pub issue_access_cycles: f64,
    /// An arithmetic, logic or branch instruction of the kernel's own code.
    pub alu_cycles: f64,
    /// A scalar load from UB.
    pub load_cycles: f64,
    /// A scalar store to UB.
    pub store_cycles: f64,
    /// A GM scalar access that misses the data cache.
    pub gm_miss_cycles: f64,
    /// Data cache line size.
    pub dcache_line_bytes: u64,
    /// Data cache size.
    pub dcache_bytes: u64,
    /// DataCacheCleanAndInvalid.
    pub dcache_flush_cycles: f64,
}

/// Costs of synchronisation.
#[derive(Debug, Clone, PartialEq)]
pub struct SyncCosts {
    /// Cycles from a SetFlag firing until the waiting pipe sees it.
    pub flag_latency_cycles: f64,
    /// Cycles of a SyncAll after the last block arrives.
    pub sync_all_cycles: f64,
    /// Cycles from a CrossCoreSetFlag firing until the waiting core sees
    /// its count.
    pub cross_core_cycles: f64,
}

/// Launch (head) overhead: `base + per_block * min(block_dim, cores)`.
#[derive(Debug, Clone, PartialEq)]
pub struct LaunchCost {
    /// Fixed part, µs.
    pub base_us: f64,
    /// Growth per launched block, µs.
    pub per_block_us: f64,
}

/// Peak compute per core per cycle, for the roofline.
#[derive(Debug, Clone, PartialEq)]
pub struct PeakCompute {
    /// Bytes of vector operands processed per AIV per cycle (one repeat).
    pub vector_bytes_per_cycle: f64,
    /// fp16/bf16 multiply-accumulates per AIC per cycle.
    pub cube_macs_f16_per_cycle: f64,
}

/// Costs of the cube unit (PIPE_M): an Mmad takes `head` plus one cycle per
/// step of `16 x 16 x k_step` multiply-accumulates.
#[derive(Debug, Clone, PartialEq)]
pub struct CubeCosts {
    /// Cycles from the last step to the result in L0C.
    pub mmad_head_cycles: f64,
    /// K elements per step for fp16/bf16 inputs.
    pub k_step_b16: f64,
    /// K elements per step for int8 inputs.
    pub k_step_b8: f64,
    /// K elements per step for fp32 inputs.
    pub k_step_b32: f64,
    /// Cycles from the end of a Load3D (img2col) transfer to its data in
    /// L0A/L0B (in place of the L1 -> L0 path's Load2D latency).
    pub load3d_latency_cycles: f64,
}

impl CubeCosts {
    /// K elements one cube step consumes for inputs of `elem_bytes`.
    pub fn k_step(&self, elem_bytes: usize) -> f64 {
        match elem_bytes {
            1 => self.k_step_b8,
            4 => self.k_step_b32,
            _ => self.k_step_b16,
        }
    }
}

/// Default measurement noise of the device.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NoiseLevel {
    /// Relative standard deviation of the task duration.
    pub rel_sigma: f64,
    /// Absolute standard deviation, µs.
    pub abs_sigma_us: f64,
}

/// A chip, as the timing model sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct HwProfile {
    /// Profile name (`ascend910b2`).
    pub name: String,
    /// SoC name reported by the platform (`Ascend910B2`).
    pub soc_version: String,
    /// `__NPU_ARCH__` of the device compiler for this chip's AI cores
    /// (2201 on the 910B).
    pub npu_arch: u32,
    /// `__CCE_AICORE__` of the device compiler (220 on the 910B).
    pub cce_aicore: u32,
    /// The core macro the device compiler defines for a vector kernel
    /// (`__DAV_C220_VEC__` on the 910B).
    pub core_macro: String,
    /// Core clock, Hz.
    pub clock_hz: f64,
    /// Vector cores (AIV).
    pub aiv_cores: u32,
    /// Cube cores (AIC).
    pub aic_cores: u32,
    /// UB bytes per AIV.
    pub ub_bytes: u64,
    /// L1 bytes per AIC.
    pub l1_bytes: u64,
    /// L0A bytes.
    pub l0a_bytes: u64,
    /// L0B bytes.
    pub l0b_bytes: u64,
    /// L0C bytes.
    pub l0c_bytes: u64,
    /// L2 bytes (chip).
    pub l2_bytes: u64,
    /// HBM bytes (chip).
    pub hbm_bytes: u64,
    /// HBM bandwidth shared by every core, reads and writes together, in
    /// bytes per cycle.
    pub hbm_bytes_per_cycle: f64,
    /// L2 bandwidth shared by every core, reads and writes together, in
    /// bytes per cycle.
    pub l2_bytes_per_cycle: f64,
    /// L2 line size, bytes.
    pub l2_line_bytes: u64,
    /// Issue queue depth per pipe.
    pub issue_queue_depth: u32,
    /// Launch overhead.
    pub launch: LaunchCost,
    /// DMA costs.
    pub dma: DmaCosts,
    /// Vector costs, first matching rule wins.
    pub vector: Vec<VecCostRule>,
    /// Scalar costs.
    pub scalar: ScalarCosts,
    /// Sync costs.
    pub sync: SyncCosts,
    /// Peak compute.
    pub peak: PeakCompute,
    /// Cube unit costs.
    pub cube: CubeCosts,
    /// Default measurement noise.
    pub noise: NoiseLevel,
    /// The source of every number, by dotted key.
    pub sources: BTreeMap<String, String>,
}

impl HwProfile {
    /// The defines of the device compiler's architecture macros for a
    /// kernel built for this chip: `__NPU_ARCH__`, `__CCE_AICORE__` and the
    /// core macro, so a kernel takes the branches it takes on the chip.
    pub fn kernel_arch_defines(&self) -> Vec<String> {
        vec![
            format!("__NPU_ARCH__={}", self.npu_arch),
            format!("__CCE_AICORE__={}", self.cce_aicore),
            self.core_macro.clone(),
        ]
    }

    /// A built-in profile by name (`ascend910b2`, `ascend910b3`,
    /// `ascend310b`; case and a `.toml` suffix are ignored).
    pub fn builtin(name: &str) -> Result<HwProfile, HwProfileError> {
        let wanted = name.trim().to_ascii_lowercase();
        let wanted = wanted.strip_suffix(".toml").unwrap_or(&wanted);
        for (builtin_name, file, text) in BUILTIN {
            if *builtin_name == wanted {
                return HwProfile::parse(Path::new(file), text);
            }
        }
        Err(HwProfileError::UnknownBuiltin {
            name: name.to_string(),
            known: HwProfile::builtin_names().join(", "),
        })
    }

    /// Names of the built-in profiles.
    pub fn builtin_names() -> Vec<&'static str> {
        BUILTIN.iter().map(|(name, _, _)| *name).collect()
    }

    /// Reads a profile from a file.
    pub fn load(path: &Path) -> Result<HwProfile, HwProfileError> {
        let text = std::fs::read_to_string(path).map_err(|e| HwProfileError::Io {
            file: path.to_path_buf(),
            message: e.to_string(),
        })?;
        HwProfile::parse(path, &text)
    }

    /// Parses a profile's text; `file` is used in error messages.
    pub fn parse(file: &Path, text: &str) -> Result<HwProfile, HwProfileError> {
        let table: toml::Table = toml::from_str(text).map_err(|e| HwProfileError::Parse {
            file: file.to_path_buf(),
            message: e.to_string(),
        })?;
        let mut reader = Reader {
            file: file.to_path_buf(),
            root: &table,
            used: BTreeSet::new(),
            sources: BTreeMap::new(),
        };
        let profile = read_profile(&mut reader)?;
        reader.check_all_used()?;
        Ok(HwProfile {
            sources: reader.sources,
            ..profile
        })
    }

    /// Converts µs to cycles.
    pub fn us_to_cycles(&self, us: f64) -> f64 {
        us * self.clock_hz / 1e6
    }

    /// Converts cycles to µs.
    pub fn cycles_to_us(&self, cycles: f64) -> f64 {
        cycles * 1e6 / self.clock_hz
    }

    /// Launch overhead in µs for a launch of `block_dim` blocks.
    pub fn launch_overhead_us(&self, block_dim: u32, cores: u32) -> f64 {
        let launched = block_dim.min(cores.max(1)).max(1);
        self.launch.base_us + self.launch.per_block_us * f64::from(launched)
    }

    /// HBM bandwidth in GB/s (1e9 B/s).
    pub fn hbm_gbps(&self) -> f64 {
        self.hbm_bytes_per_cycle * self.clock_hz / 1e9
    }

    /// L2 bandwidth in GB/s (1e9 B/s).
    pub fn l2_gbps(&self) -> f64 {
        self.l2_bytes_per_cycle * self.clock_hz / 1e9
    }

    /// The vector cost rule for an operation on elements of `elem_bytes`.
    pub fn vector_rule(&self, op: VecOp, elem_bytes: u32) -> Option<&VecCostRule> {
        self.vector.iter().find(|rule| {
            (rule.ops.is_empty() || rule.ops.contains(&op))
                && (rule.elem_bytes.is_empty() || rule.elem_bytes.contains(&elem_bytes))
        })
    }
}

/// Walks the TOML table, remembering which keys were read and their
/// sources.
struct Reader<'a> {
    file: PathBuf,
    root: &'a toml::Table,
    used: BTreeSet<String>,
    sources: BTreeMap<String, String>,
}

impl<'a> Reader<'a> {
    fn err(&self, key: &str, message: impl Into<String>) -> HwProfileError {
        HwProfileError::Key {
            file: self.file.clone(),
            key: key.to_string(),
            message: message.into(),
        }
    }

    fn lookup(&self, key: &str) -> Option<&'a toml::Value> {
        let mut parts = key.split('.');
        let first = parts.next()?;
        let mut value = self.root.get(first)?;
        for part in parts {
            value = value.as_table()?.get(part)?;
        }
        Some(value)
    }

    /// A plain (unsourced) string.
    fn string(&mut self, key: &str) -> Result<String, HwProfileError> {
        let value = self.lookup(key).ok_or_else(|| self.err(key, "missing"))?;
        let text = value
            .as_str()
            .ok_or_else(|| self.err(key, "expected a string"))?;
        self.used.insert(key.to_string());
        Ok(text.to_string())
    }

    /// A sourced number `{ value = x, source = "..." }` at a dotted key.
    fn num(&mut self, key: &str) -> Result<f64, HwProfileError> {
        let value = self.lookup(key).ok_or_else(|| self.err(key, "missing"))?;
        let number = self.sourced(key, value)?;
        self.used.insert(key.to_string());
        Ok(number)
    }

    fn sourced(&mut self, key: &str, value: &toml::Value) -> Result<f64, HwProfileError> {
        let table = self.sourced_table(
            key,
            value,
            "expected `{ value = <number>, source = \"...\" }` (every number names its source)",
        )?;
        let number = match table.get("value") {
            Some(toml::Value::Integer(i)) => *i as f64,
            Some(toml::Value::Float(f)) => *f,
            Some(_) => return Err(self.err(key, "`value` must be a number")),
            None => return Err(self.err(key, "missing `value`")),
        };
        if !number.is_finite() || number < 0.0 {
            return Err(self.err(key, format!("value {number} must be finite and >= 0")));
        }
        self.record_source(key, table)?;
        Ok(number)
    }

    /// `value` as a `{ value, source }` table with no other field.
    fn sourced_table<'v>(
        &self,
        key: &str,
        value: &'v toml::Value,
        expected: &str,
    ) -> Result<&'v toml::Table, HwProfileError> {
        let table = value.as_table().ok_or_else(|| self.err(key, expected))?;
        for name in table.keys() {
            if name != "value" && name != "source" {
                return Err(self.err(key, format!("unknown field `{name}`")));
            }
        }
        Ok(table)
    }

    /// Records the non-empty `source` of the table at `key`.
    fn record_source(&mut self, key: &str, table: &toml::Table) -> Result<(), HwProfileError> {
        let source = table
            .get("source")
            .and_then(|s| s.as_str())
            .map(str::trim)
            .unwrap_or("");
        if source.is_empty() {
            return Err(self.err(key, "missing `source` (every number names its source)"));
        }
        self.sources.insert(key.to_string(), source.to_string());
        Ok(())
    }

    /// A sourced string `{ value = "...", source = "..." }` at a dotted key.
    fn sourced_string(&mut self, key: &str) -> Result<String, HwProfileError> {
        let value = self.lookup(key).ok_or_else(|| self.err(key, "missing"))?;
        let table = self.sourced_table(
            key,
            value,
            "expected `{ value = \"...\", source = \"...\" }`",
        )?;
        let text = table
            .get("value")
            .and_then(|v| v.as_str())
            .ok_or_else(|| self.err(key, "`value` must be a string"))?;
        self.record_source(key, table)?;
        self.used.insert(key.to_string());
        Ok(text.to_string())
    }

    fn positive(&mut self, key: &str) -> Result<f64, HwProfileError> {
        let number = self.num(key)?;
        if number <= 0.0 {
            return Err(self.err(key, format!("value {number} must be > 0")));
        }
        Ok(number)
    }

    fn int(&mut self, key: &str) -> Result<u64, HwProfileError> {
        let number = self.num(key)?;
        if number.fract() != 0.0 || number > 9.0e15 {
            return Err(self.err(key, format!("value {number} must be an integer")));
        }
        Ok(number as u64)
    }

    fn count(&mut self, key: &str) -> Result<u32, HwProfileError> {
        let number = self.int(key)?;
        if number == 0 || number > u64::from(u32::MAX) {
            return Err(self.err(key, format!("value {number} must be in 1..=2^32-1")));
        }
        Ok(number as u32)
    }

    fn dma_path(&mut self, name: &str) -> Result<DmaPath, HwProfileError> {
        let bytes_per_cycle = self.positive(&format!("dma.{name}.bytes_per_cycle"))?;
        let hit_key = format!("dma.{name}.l2_hit_bytes_per_cycle");
        let l2_hit_bytes_per_cycle = if self.lookup(&hit_key).is_some() {
            self.positive(&hit_key)?
        } else {
            bytes_per_cycle
        };
        Ok(DmaPath {
            issue_cycles: self.num(&format!("dma.{name}.issue_cycles"))?,
            latency_cycles: self.num(&format!("dma.{name}.latency_cycles"))?,
            bytes_per_cycle,
            l2_hit_bytes_per_cycle,
        })
    }

    fn vector_rules(&mut self) -> Result<Vec<VecCostRule>, HwProfileError> {
        let list = match self.lookup("vector") {
            Some(toml::Value::Array(list)) => list,
            Some(_) => return Err(self.err("vector", "expected an array of [[vector]] tables")),
            None => return Err(self.err("vector", "missing")),
        };
        self.used.insert("vector".to_string());
        let mut rules = Vec::with_capacity(list.len());
        for (index, entry) in list.iter().enumerate() {
            let base = format!("vector[{index}]");
            let table = entry
                .as_table()
                .ok_or_else(|| self.err(&base, "expected a table"))?;
            for name in table.keys() {
                if !matches!(
                    name.as_str(),
                    "ops" | "elem_bytes" | "head_cycles" | "per_repeat_cycles" | "note"
                ) {
                    return Err(self.err(&format!("{base}.{name}"), "unknown key"));
                }
            }
            let ops = match table.get("ops") {
                Some(toml::Value::Array(names)) => {
                    let mut ops = Vec::new();
                    for name in names {
                        let text = name
                            .as_str()
                            .ok_or_else(|| self.err(&format!("{base}.ops"), "expected strings"))?;
                        if text == "*" {
                            continue;
                        }
                        let op = vec_op_by_name(text).ok_or_else(|| {
                            self.err(
                                &format!("{base}.ops"),
                                format!("unknown vector op `{text}`"),
                            )
                        })?;
                        ops.push(op);
                    }
                    ops
                }
                _ => return Err(self.err(&format!("{base}.ops"), "missing list of op names")),
            };
            let elem_bytes = match table.get("elem_bytes") {
                None => Vec::new(),
                Some(toml::Value::Array(sizes)) => {
                    let mut out = Vec::new();
                    for size in sizes {
                        match size.as_integer() {
                            Some(s @ (1 | 2 | 4 | 8)) => out.push(s as u32),
                            _ => {
                                return Err(self.err(
                                    &format!("{base}.elem_bytes"),
                                    "expected element sizes 1, 2, 4 or 8",
                                ))
                            }
                        }
                    }
                    out
                }
                Some(_) => return Err(self.err(&format!("{base}.elem_bytes"), "expected a list")),
            };
            let head_key = format!("{base}.head_cycles");
            let head_value = table
                .get("head_cycles")
                .ok_or_else(|| self.err(&head_key, "missing"))?;
            let head_cycles = self.sourced(&head_key, head_value)?;
            let rep_key = format!("{base}.per_repeat_cycles");
            let rep_value = table
                .get("per_repeat_cycles")
                .ok_or_else(|| self.err(&rep_key, "missing"))?;
            let per_repeat_cycles = self.sourced(&rep_key, rep_value)?;
            rules.push(VecCostRule {
                ops,
                elem_bytes,
                head_cycles,
                per_repeat_cycles,
            });
        }
        if !rules
            .iter()
            .any(|r| r.ops.is_empty() && r.elem_bytes.is_empty())
        {
            return Err(self.err(
                "vector",
                "needs a catch-all rule (ops = [\"*\"] without elem_bytes) as the last entry",
            ));
        }
        Ok(rules)
    }

    /// Every leaf key of the file must have been read.
    fn check_all_used(&self) -> Result<(), HwProfileError> {
        let mut leaves = Vec::new();
        collect_leaves("", self.root, &mut leaves);
        for key in leaves {
            if !self.used.contains(&key) {
                return Err(self.err(&key, "unknown key"));
            }
        }
        Ok(())
    }
}

/// Dotted keys of the leaves: a sourced number `{value, source}` or a
/// non-table value counts as a leaf; the `vector` array is one leaf.
fn collect_leaves(prefix: &str, table: &toml::Table, out: &mut Vec<String>) {
    for (name, value) in table {
        let key = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}.{name}")
        };
        match value {
            toml::Value::Table(inner) if !inner.contains_key("value") => {
                collect_leaves(&key, inner, out)
            }
            _ => out.push(key),
        }
    }
}

/// Finds a [`VecOp`] by its AscendC name.
pub fn vec_op_by_name(name: &str) -> Option<VecOp> {
    (0..=128u32)
        .filter_map(VecOp::from_code)
        .find(|op| op.name() == name)
}

fn read_profile(r: &mut Reader<'_>) -> Result<HwProfile, HwProfileError> {
    let name = r.string("name")?;
    let soc_version = r.string("soc_version")?;
    let npu_arch = r.count("arch.npu_arch")?;
    let cce_aicore = r.count("arch.cce_aicore")?;
    let core_macro = r.sourced_string("arch.core_macro")?;
    if !core_macro.starts_with("__")
        || !core_macro
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        return Err(r.err(
            "arch.core_macro",
            format!("`{core_macro}` is not a compiler macro name (`__DAV_...__`)"),
        ));
    }
    let clock_hz = r.positive("chip.clock_mhz")? * 1e6;
    let hbm_gbps = r.positive("chip.hbm_gbps")?;
    let l2_gbps = r.positive("chip.l2_gbps")?;
    let launch = LaunchCost {
        base_us: r.num("launch.base_us")?,
        per_block_us: r.num("launch.per_block_us")?,
    };
    let dma = DmaCosts {
        gm_to_ub: r.dma_path("gm_to_ub")?,
        ub_to_gm: r.dma_path("ub_to_gm")?,
        gm_to_l1: r.dma_path("gm_to_l1")?,
        ub_to_ub: r.dma_path("ub_to_ub")?,
        ub_to_l1: r.dma_path("ub_to_l1")?,
        l1_to_l0a: r.dma_path("l1_to_l0a")?,
        l1_to_l0b: r.dma_path("l1_to_l0b")?,
        l0c_out: r.dma_path("l0c_out")?,
        gm_align_bytes: r.int("dma.gm_align_bytes")?.max(1),
        unaligned_rate_factor: r.positive("dma.unaligned_rate_factor")?,
        burst_cycles: r.num("dma.burst_cycles")?,
        granule_bytes: r.int("dma.granule_bytes")?.max(1),
        same_range_penalty: r.num("dma.same_range_penalty")?,
    };
    if dma.unaligned_rate_factor > 1.0 {
        return Err(r.err("dma.unaligned_rate_factor", "must be in (0, 1]"));
    }
    let scalar = ScalarCosts {
        issue_vector_cycles: r.num("scalar.issue_vector_cycles")?,
        issue_dma_cycles: r.num("scalar.issue_dma_cycles")?,
        issue_sync_cycles: r.num("scalar.issue_sync_cycles")?,
        issue_barrier_cycles: r.num("scalar.issue_barrier_cycles")?,
        issue_access_cycles: r.num("scalar.issue_access_cycles")?,
        alu_cycles: r.num("scalar.alu_cycles")?,
        load_cycles: r.num("scalar.load_cycles")?,
        store_cycles: r.num("scalar.store_cycles")?,
        gm_miss_cycles: r.num("scalar.gm_miss_cycles")?,
        dcache_line_bytes: r.int("scalar.dcache_line_bytes")?.max(1),
        dcache_bytes: r.int("scalar.dcache_bytes")?.max(1),
        dcache_flush_cycles: r.num("scalar.dcache_flush_cycles")?,
    };
    if !scalar
        .dcache_line_bytes
        .is_multiple_of(crate::trace::GM_LINE_BYTES)
    {
        return Err(r.err(
            "scalar.dcache_line_bytes",
            format!(
                "must be a multiple of {} (the granularity of the GM line touches a trace records)",
                crate::trace::GM_LINE_BYTES
            ),
        ));
    }
    let sync = SyncCosts {
        flag_latency_cycles: r.num("sync.flag_latency_cycles")?,
        sync_all_cycles: r.num("sync.sync_all_cycles")?,
        cross_core_cycles: r.num("sync.cross_core_cycles")?,
    };
    let peak = PeakCompute {
        vector_bytes_per_cycle: r.positive("peak.vector_bytes_per_cycle")?,
        cube_macs_f16_per_cycle: r.positive("peak.cube_macs_f16_per_cycle")?,
    };
    let cube = CubeCosts {
        mmad_head_cycles: r.num("cube.mmad_head_cycles")?,
        k_step_b16: r.positive("cube.k_step_b16")?,
        k_step_b8: r.positive("cube.k_step_b8")?,
        k_step_b32: r.positive("cube.k_step_b32")?,
        load3d_latency_cycles: r.num("cube.load3d_latency_cycles")?,
    };
    let noise = NoiseLevel {
        rel_sigma: r.num("noise.rel_sigma")?,
        abs_sigma_us: r.num("noise.abs_sigma_us")?,
    };
    Ok(HwProfile {
        name,
        soc_version,
        npu_arch,
        cce_aicore,
        core_macro,
        clock_hz,
        aiv_cores: r.count("chip.aiv_cores")?,
        aic_cores: r.count("chip.aic_cores")?,
        ub_bytes: r.int("chip.ub_bytes")?,
        l1_bytes: r.int("chip.l1_bytes")?,
        l0a_bytes: r.int("chip.l0a_bytes")?,
        l0b_bytes: r.int("chip.l0b_bytes")?,
        l0c_bytes: r.int("chip.l0c_bytes")?,
        l2_bytes: r.int("chip.l2_bytes")?,
        hbm_bytes: r.int("chip.hbm_bytes")?,
        hbm_bytes_per_cycle: hbm_gbps * 1e9 / clock_hz,
        l2_bytes_per_cycle: l2_gbps * 1e9 / clock_hz,
        l2_line_bytes: r.int("chip.l2_line_bytes")?.max(1),
        issue_queue_depth: r.count("chip.issue_queue_depth")?,
        launch,
        dma,
        vector: r.vector_rules()?,
        scalar,
        sync,
        peak,
        cube,
        noise,
        sources: BTreeMap::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_910b2_loads_with_the_documented_numbers() {
        let hw = HwProfile::builtin("ascend910b2").unwrap();
        assert_eq!(hw.aiv_cores, 48);
        assert_eq!(hw.aic_cores, 24);
        assert_eq!(hw.ub_bytes, 192 * 1024);
        assert_eq!(hw.l1_bytes, 512 * 1024);
        assert_eq!(hw.l0a_bytes, 64 * 1024);
        assert_eq!(hw.l0c_bytes, 128 * 1024);
        assert_eq!(hw.l2_bytes, 192 * 1024 * 1024);
        assert!((hw.clock_hz - 1.8e9).abs() < 1.0);
        assert!((hw.hbm_gbps() - 1600.0).abs() < 1e-6);
        assert_eq!(hw.issue_queue_depth, 32);
        // Every number has a non-empty source.
        assert!(hw.sources.len() > 40, "{}", hw.sources.len());
        assert!(hw.sources.values().all(|s| !s.trim().is_empty()));
        // Full-core launch head ~20-21 us [G §3.8.1].
        let head = hw.launch_overhead_us(48, 48);
        assert!((20.0..=21.0).contains(&head), "{head}");
    }

    #[test]
    fn builtin_310b_is_a_one_core_coupled_chip_with_its_own_memories() {
        let hw = HwProfile::builtin("ascend310b").unwrap();
        assert_eq!(hw.soc_version, "Ascend310B1");
        assert_eq!((hw.aiv_cores, hw.aic_cores), (1, 1));
        assert_eq!(hw.ub_bytes, 248 * 1024);
        assert_eq!(hw.l1_bytes, 1024 * 1024);
        assert_eq!(hw.l0c_bytes, 128 * 1024);
        assert_eq!(hw.l2_bytes, 4 * 1024 * 1024);
        assert!((hw.clock_hz - 0.5e9).abs() < 1.0);
        assert!((hw.hbm_gbps() - 25.6).abs() < 1e-9);
        assert_eq!(
            hw.kernel_arch_defines(),
            ["__NPU_ARCH__=3002", "__CCE_AICORE__=300", "__DAV_M300__"]
        );
        assert!(hw.sources.values().all(|s| !s.trim().is_empty()));
        // The 910B2 keeps its macros, the build's defaults.
        let b2 = HwProfile::builtin(DEFAULT_CHIP).unwrap();
        assert_eq!(
            b2.kernel_arch_defines(),
            [
                "__NPU_ARCH__=2201",
                "__CCE_AICORE__=220",
                "__DAV_C220_VEC__"
            ]
        );
        assert_eq!(b2.kernel_arch_defines(), crate::build::DEFAULT_ARCH_DEFINES);
    }

    #[test]
    fn a_core_macro_that_is_no_macro_name_is_refused() {
        let text = BUILTIN[0]
            .2
            .replacen("\"__DAV_C220_VEC__\"", "\"-DX; rm\"", 1);
        assert_ne!(text, BUILTIN[0].2, "the replacement must hit");
        let err = HwProfile::parse(Path::new("x.toml"), &text).unwrap_err();
        assert!(err.to_string().contains("arch.core_macro"), "{err}");
    }

    #[test]
    fn builtin_names_are_case_insensitive_and_unknown_names_fail() {
        assert!(HwProfile::builtin("Ascend910B2").is_ok());
        assert_eq!(HwProfile::builtin("ascend910b3").unwrap().aiv_cores, 40);
        let err = HwProfile::builtin("ascend310p").unwrap_err();
        assert!(err.to_string().contains("ascend910b2"), "{err}");
    }

    #[test]
    fn a_number_without_source_is_an_error_naming_file_and_key() {
        let text = BUILTIN[0].2.replacen(
            "clock_mhz = { value = 1800, source",
            "clock_mhz = { value = 1800, note",
            1,
        );
        assert_ne!(text, BUILTIN[0].2, "the replacement must hit");
        let err = HwProfile::parse(Path::new("my.toml"), &text).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("my.toml") && msg.contains("chip.clock_mhz"),
            "{msg}"
        );
    }

    #[test]
    fn a_bare_number_and_an_unknown_key_are_errors() {
        let text = BUILTIN[0]
            .2
            .replacen("[chip]", "[chip]\nclock_mhz_typo = 3\n", 1);
        let err = HwProfile::parse(Path::new("x.toml"), &text).unwrap_err();
        assert!(err.to_string().contains("chip.clock_mhz_typo"), "{err}");
        let missing = BUILTIN[0].2.replacen("hbm_gbps", "hbm_gbps_old", 1);
        let err = HwProfile::parse(Path::new("x.toml"), &missing).unwrap_err();
        assert!(err.to_string().contains("chip.hbm_gbps"), "{err}");
    }

    #[test]
    fn the_l2_hit_rate_is_optional_and_defaults_to_the_path_rate() {
        let hw = HwProfile::builtin("ascend910b2").unwrap();
        assert_eq!(
            hw.dma.gm_to_l1.l2_hit_bytes_per_cycle,
            hw.dma.gm_to_l1.bytes_per_cycle
        );
        let with = BUILTIN[0].2.replacen(
            "[dma.gm_to_l1]\n",
            "[dma.gm_to_l1]\nl2_hit_bytes_per_cycle = { value = 110, source = \"[INI] L2->L1\" }\n",
            1,
        );
        assert_ne!(with, BUILTIN[0].2, "the insertion must hit");
        let hw = HwProfile::parse(Path::new("x.toml"), &with).unwrap();
        assert_eq!(hw.dma.gm_to_l1.l2_hit_bytes_per_cycle, 110.0);
        assert_eq!(hw.dma.gm_to_l1.bytes_per_cycle, 80.5);
        assert_eq!(
            hw.sources["dma.gm_to_l1.l2_hit_bytes_per_cycle"],
            "[INI] L2->L1"
        );
        let zero = with.replacen(
            "l2_hit_bytes_per_cycle = { value = 110",
            "l2_hit_bytes_per_cycle = { value = 0",
            1,
        );
        let err = HwProfile::parse(Path::new("x.toml"), &zero).unwrap_err();
        assert!(
            err.to_string()
                .contains("dma.gm_to_l1.l2_hit_bytes_per_cycle"),
            "{err}"
        );
        let bare = with.replacen(
            "l2_hit_bytes_per_cycle = { value = 110, source = \"[INI] L2->L1\" }",
            "l2_hit_bytes_per_cycle = 110",
            1,
        );
        assert!(
            HwProfile::parse(Path::new("x.toml"), &bare).is_err(),
            "a number needs its source"
        );
    }

    #[test]
    fn load_reports_a_missing_file() {
        let err = HwProfile::load(Path::new("/nonexistent/hw.toml")).unwrap_err();
        assert!(err.to_string().contains("/nonexistent/hw.toml"), "{err}");
    }

    #[test]
    fn vector_rules_cover_every_op_and_size() {
        for (chip, _, _) in BUILTIN {
            let hw = HwProfile::builtin(chip).unwrap();
            for op in (0..=128u32).filter_map(VecOp::from_code) {
                for size in [1, 2, 4, 8] {
                    assert!(hw.vector_rule(op, size).is_some(), "{chip} {op:?} {size}");
                }
            }
        }
        assert_eq!(
            vec_op_by_name("WholeReduceSum"),
            Some(VecOp::WholeReduceSum)
        );
        assert_eq!(vec_op_by_name("Nope"), None);
    }
}
