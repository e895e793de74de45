//! Profile signatures: the few numbers of a profile that say what kind of
//! bottleneck a kernel has, so that retrieval can compare a kernel with the
//! slow kernels the entries were learnt from.
//!
//! A signature is read from a device's profile (`ascendopt_device::Profile`,
//! the `msprof op` field names): the pipe ratios of the slowest block (the
//! critical path, as `Profile::bottleneck` does), the blocks used out of
//! the chip's cores (the profile's core count), and optionally the mean
//! copy size (not in the profile; callers that have it may set it).
//!
//! Similarity (used by [`crate::retrieve`]): every field is mapped into
//! [0, 1] — ratios and the block fraction as they are (clamped), the copy
//! size as `log2(bytes / 32) / log2(65536 / 32)` clamped (32 B, the DMA
//! granule, maps to 0; 64 KiB to 1; the guide's "16 KiB or more uses the
//! bandwidth well" [G §3.8.5.1] lands at 0.82) — and
//! `similarity = 1 − mean |a_i − b_i|` over the fields both signatures
//! have; `None` when they share none.

use crate::entry::Moved;
use crate::error::BankError;
use ascendopt_device::{BlockProfile, Profile};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// The bottleneck-describing numbers of one profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileSignature {
    /// PIPE_V busy ratio of the slowest vector block (`aiv_vec_ratio`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vec_ratio: Option<f64>,
    /// Scalar busy ratio of the slowest block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scalar_ratio: Option<f64>,
    /// MTE2 (GM → local) busy ratio of the slowest block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mte2_ratio: Option<f64>,
    /// MTE3 (local → GM) busy ratio of the slowest block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mte3_ratio: Option<f64>,
    /// PIPE_M (cube) busy ratio of the slowest cube block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cube_ratio: Option<f64>,
    /// MTE1 busy ratio of the slowest cube block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mte1_ratio: Option<f64>,
    /// Mean bytes per DMA copy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub avg_copy_bytes: Option<f64>,
    /// Block Dim over the chip's cores of the launched kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocks_used_fraction: Option<f64>,
}

/// Profile fields never reported as "moved": they describe the device or
/// the measurement, not the kernel.
const NOT_KERNEL_FIELDS: &[&str] = &[
    "Soc Version",
    "Op Type",
    "Current Freq",
    "hbm_bandwidth(GB/s)",
    "cores",
    "noise_factor",
];

impl ProfileSignature {
    /// A signature with no field set.
    pub fn empty() -> ProfileSignature {
        ProfileSignature {
            vec_ratio: None,
            scalar_ratio: None,
            mte2_ratio: None,
            mte3_ratio: None,
            cube_ratio: None,
            mte1_ratio: None,
            avg_copy_bytes: None,
            blocks_used_fraction: None,
        }
    }

    /// Reads a signature from a profile: the vector ratios come from the
    /// slowest `aiv` block (the scalar/MTE ratios from the slowest `aic`
    /// block when there is none); `blocks_used_fraction` is Block Dim over
    /// the chip's cores of the launched kind, when the device reported
    /// them. `avg_copy_bytes` is left unset.
    pub fn from_profile(profile: &Profile) -> Result<ProfileSignature, BankError> {
        let slowest = |time: fn(&BlockProfile) -> Option<f64>| {
            profile
                .blocks
                .iter()
                .filter_map(|b| time(b).map(|t| (t, b)))
                .max_by(|a, b| a.0.total_cmp(&b.0))
                .map(|(_, b)| b)
        };
        let aiv = slowest(|b| b.aiv.as_ref().map(|f| f.time_us)).and_then(|b| b.aiv.as_ref());
        let aic = slowest(|b| b.aic.as_ref().map(|f| f.time_us)).and_then(|b| b.aic.as_ref());
        if aiv.is_none() && aic.is_none() {
            return Err(BankError::BadProfile {
                reason: "no block has `aiv_time(us)` or `aic_time(us)`".into(),
            });
        }
        let mut sig = ProfileSignature::empty();
        if let Some(b) = aic {
            sig.cube_ratio = Some(b.cube_ratio);
            sig.mte1_ratio = Some(b.mte1_ratio);
            sig.scalar_ratio = Some(b.scalar_ratio);
            sig.mte2_ratio = Some(b.mte2_ratio);
            sig.mte3_ratio = Some(b.mte3_ratio);
        }
        if let Some(b) = aiv {
            sig.vec_ratio = Some(b.vec_ratio);
            sig.scalar_ratio = Some(b.scalar_ratio);
            sig.mte2_ratio = Some(b.mte2_ratio);
            sig.mte3_ratio = Some(b.mte3_ratio);
        }
        if let Some(cores) = profile.cores.filter(|c| *c > 0) {
            sig.blocks_used_fraction =
                Some((f64::from(profile.block_dim) / f64::from(cores)).min(1.0));
        }
        Ok(sig)
    }

    /// [`ProfileSignature::from_profile`] of a profile as JSON (a file a
    /// user gives, a profile stored in an entry's evidence); a field it
    /// lacks counts as not reported.
    pub fn from_profile_json(profile: &Value) -> Result<ProfileSignature, BankError> {
        if !profile.is_object() {
            return Err(BankError::BadProfile {
                reason: "expected an object (a profiled, correct evaluation)".into(),
            });
        }
        let profile: Profile =
            serde_json::from_value(profile.clone()).map_err(|e| BankError::BadProfile {
                reason: e.to_string(),
            })?;
        ProfileSignature::from_profile(&profile)
    }

    /// The same signature with the mean copy size set.
    pub fn with_avg_copy_bytes(mut self, bytes: f64) -> ProfileSignature {
        self.avg_copy_bytes = Some(bytes);
        self
    }

    /// (name, value) of every field that is set, in declaration order.
    pub fn fields(&self) -> Vec<(&'static str, f64)> {
        [
            ("vec_ratio", self.vec_ratio),
            ("scalar_ratio", self.scalar_ratio),
            ("mte2_ratio", self.mte2_ratio),
            ("mte3_ratio", self.mte3_ratio),
            ("cube_ratio", self.cube_ratio),
            ("mte1_ratio", self.mte1_ratio),
            ("avg_copy_bytes", self.avg_copy_bytes),
            ("blocks_used_fraction", self.blocks_used_fraction),
        ]
        .into_iter()
        .filter_map(|(name, v)| v.map(|v| (name, v)))
        .collect()
    }

    /// The fields mapped into [0, 1] (see the module docs).
    fn unit_fields(&self) -> Vec<(&'static str, f64)> {
        self.fields()
            .into_iter()
            .map(|(name, v)| {
                let unit = if name == "avg_copy_bytes" {
                    ((v.max(1.0) / 32.0).log2() / (65536.0f64 / 32.0).log2()).clamp(0.0, 1.0)
                } else {
                    v.clamp(0.0, 1.0)
                };
                (name, unit)
            })
            .collect()
    }

    /// `1 − mean |a_i − b_i|` over the fields both have, in [0, 1]; `None`
    /// when they share no field.
    pub fn similarity(&self, other: &ProfileSignature) -> Option<f64> {
        let theirs = other.unit_fields();
        let mut total = 0.0;
        let mut n = 0u32;
        for (name, a) in self.unit_fields() {
            if let Some((_, b)) = theirs.iter().find(|(other_name, _)| *other_name == name) {
                total += (a - b).abs();
                n += 1;
            }
        }
        (n > 0).then(|| 1.0 - total / f64::from(n))
    }
}

/// The slowest block of a kind (`aiv` or `aic`) of a profile as JSON, by
/// its `<kind>_time(us)`.
fn slowest<'a>(blocks: &'a [Value], kind: &str) -> Option<&'a Value> {
    let key = format!("{kind}_time(us)");
    blocks
        .iter()
        .filter_map(|b| b.get(&key).and_then(Value::as_f64).map(|t| (t, b)))
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, b)| b)
}

/// The kernel-describing numeric fields of a profile as JSON (the names
/// are its msprof field names): top-level
/// numbers (`Task Duration(us)`, `Block Dim`, bytes, bandwidth, roofline
/// reached) and the slowest block's `aiv_*`/`aic_*` fields.
fn kernel_fields(profile: &Value) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    if let Some(object) = profile.as_object() {
        for (key, value) in object {
            if NOT_KERNEL_FIELDS.contains(&key.as_str()) {
                continue;
            }
            if let Some(v) = value.as_f64() {
                out.insert(key.clone(), v);
            }
        }
    }
    let blocks = profile
        .get("blocks")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    for kind in ["aiv", "aic"] {
        if let Some(block) = slowest(blocks, kind).and_then(Value::as_object) {
            for (key, value) in block {
                if key.starts_with(kind) {
                    if let Some(v) = value.as_f64() {
                        out.insert(key.clone(), v);
                    }
                }
            }
        }
    }
    out
}

/// The profile fields that moved from the slow kernel's profile to the
/// fast one's: the kernel fields (top-level numbers such as
/// `Task Duration(us)`, `Block Dim`, bytes and bandwidth, and the slowest
/// block's `aiv_*`/`aic_*` fields; not SoC, frequency or noise) present in
/// both whose values differ by more than `min_relative` of the larger
/// magnitude (a field that is 0 in both never moves). Block fields are
/// those of each profile's own slowest block.
pub fn profile_moved(slow: &Profile, fast: &Profile, min_relative: f64) -> BTreeMap<String, Moved> {
    // The fields are named as msprof names them: by their serialised keys.
    let json = |p: &Profile| serde_json::to_value(p).unwrap_or(Value::Null);
    let before = kernel_fields(&json(slow));
    let after = kernel_fields(&json(fast));
    let mut out = BTreeMap::new();
    for (name, b) in &before {
        let Some(a) = after.get(name) else { continue };
        let scale = b.abs().max(a.abs());
        if scale > 0.0 && (a - b).abs() > min_relative * scale {
            out.insert(
                name.clone(),
                Moved {
                    before: *b,
                    after: *a,
                },
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn profile(block_dim: u32, slow_vec: f64, slow_mte2: f64, duration: f64) -> Value {
        json!({
            "Soc Version": "Ascend910B2",
            "Op Type": "vector",
            "Task Duration(us)": duration,
            "Block Dim": block_dim,
            "cores": 48,
            "Current Freq": 1800.0,
            "noise_factor": 1.0,
            "gm_read_bytes": 4096,
            "blocks": [
                {"block_id": 0, "core_type": "aiv", "aiv_time(us)": 5.0, "aiv_total_cycles": 9000,
                 "aiv_vec_ratio": 0.9, "aiv_scalar_ratio": 0.1, "aiv_mte2_ratio": 0.1, "aiv_mte3_ratio": 0.1},
                {"block_id": 1, "core_type": "aiv", "aiv_time(us)": 8.0, "aiv_total_cycles": 14400,
                 "aiv_vec_ratio": slow_vec, "aiv_scalar_ratio": 0.05, "aiv_mte2_ratio": slow_mte2, "aiv_mte3_ratio": 0.2}
            ]
        })
    }

    #[test]
    fn from_profile_json_reads_the_slowest_block_and_the_core_fraction() {
        let sig = ProfileSignature::from_profile_json(&profile(12, 0.3, 0.8, 30.0)).unwrap();
        // Block 1 (8 us) is the slowest, not block 0.
        assert_eq!(sig.vec_ratio, Some(0.3));
        assert_eq!(sig.scalar_ratio, Some(0.05));
        assert_eq!(sig.mte2_ratio, Some(0.8));
        assert_eq!(sig.mte3_ratio, Some(0.2));
        assert_eq!(sig.cube_ratio, None);
        // 12 blocks of the 910B2's 48 AIV cores.
        assert_eq!(sig.blocks_used_fraction, Some(0.25));
        assert_eq!(sig.avg_copy_bytes, None);
    }

    #[test]
    fn from_profile_json_refuses_what_is_not_a_profile() {
        for bad in [
            json!(null),
            json!({"x": 1}),
            json!({"blocks": [{"block_id": 0}]}),
        ] {
            assert!(matches!(
                ProfileSignature::from_profile_json(&bad),
                Err(BankError::BadProfile { .. })
            ));
        }
        // A profile without the core count leaves the fraction unset
        // instead of guessing.
        let mut p = profile(12, 0.3, 0.8, 30.0);
        p.as_object_mut().unwrap().remove("cores");
        let sig = ProfileSignature::from_profile_json(&p).unwrap();
        assert_eq!(sig.blocks_used_fraction, None);
        assert_eq!(sig.vec_ratio, Some(0.3));
    }

    #[test]
    fn from_profile_reads_the_field_names_the_simulator_writes() {
        use ascendopt_device::{AivFields, CoreType};
        let block = |id: u32, time: f64, vec: f64, mte2: f64| BlockProfile {
            block_id: id,
            core_type: CoreType::Aiv,
            aiv: Some(AivFields {
                time_us: time,
                total_cycles: 100,
                vec_time_us: 0.0,
                vec_ratio: vec,
                scalar_time_us: 0.0,
                scalar_ratio: 0.125,
                mte2_time_us: 0.0,
                mte2_ratio: mte2,
                mte3_time_us: 0.0,
                mte3_ratio: 0.375,
                read_hit_rate_pct: None,
                write_hit_rate_pct: None,
                total_hit_rate_pct: None,
            }),
            aic: None,
        };
        let p = Profile {
            soc_version: "Ascend910B2".into(),
            op_type: "vector".into(),
            task_duration_us: 30.0,
            block_dim: 24,
            cores: Some(48),
            blocks: vec![block(0, 3.0, 0.5, 0.5), block(1, 4.0, 0.25, 0.75)],
            ..Profile::default()
        };
        let sig = ProfileSignature::from_profile(&p).unwrap();
        assert_eq!(sig.vec_ratio, Some(0.25));
        assert_eq!(sig.mte2_ratio, Some(0.75));
        assert_eq!(sig.scalar_ratio, Some(0.125));
        assert_eq!(sig.mte3_ratio, Some(0.375));
        assert_eq!(sig.blocks_used_fraction, Some(0.5));
    }

    #[test]
    fn similarity_is_one_minus_mean_abs_difference_over_shared_fields() {
        let mut a = ProfileSignature::empty();
        a.vec_ratio = Some(0.2);
        a.mte2_ratio = Some(0.9);
        a.blocks_used_fraction = Some(1.0);
        let mut b = ProfileSignature::empty();
        b.vec_ratio = Some(0.6);
        b.mte2_ratio = Some(0.8);
        b.scalar_ratio = Some(0.5); // not in `a`: ignored
                                    // |0.2-0.6| = 0.4, |0.9-0.8| = 0.1 -> 1 - 0.25 = 0.75.
        let s = a.similarity(&b).unwrap();
        assert!((s - 0.75).abs() < 1e-12, "{s}");
        assert_eq!(a.similarity(&a), Some(1.0));
        assert_eq!(ProfileSignature::empty().similarity(&a), None);
        // Copy sizes on the log scale: 32 B -> 0, 64 KiB -> 1, 1 KiB -> 5/11.
        let small = ProfileSignature::empty().with_avg_copy_bytes(32.0);
        let big = ProfileSignature::empty().with_avg_copy_bytes(65536.0);
        let mid = ProfileSignature::empty().with_avg_copy_bytes(1024.0);
        assert_eq!(small.similarity(&big), Some(0.0));
        let s = mid.similarity(&big).unwrap();
        assert!((s - 5.0 / 11.0).abs() < 1e-12, "{s}");
    }

    #[test]
    fn profile_moved_keeps_changed_kernel_fields_only() {
        let typed = |v: Value| serde_json::from_value::<Profile>(v).unwrap();
        let slow = typed(profile(12, 0.3, 0.8, 30.0));
        let fast = typed(profile(12, 0.6, 0.8, 20.0));
        let moved = profile_moved(&slow, &fast, 0.05);
        let names: Vec<_> = moved.keys().map(String::as_str).collect();
        assert_eq!(names, ["Task Duration(us)", "aiv_vec_ratio"]);
        assert_eq!(
            moved["aiv_vec_ratio"],
            Moved {
                before: 0.3,
                after: 0.6
            }
        );
        // Below the threshold nothing moves.
        let fast = typed(profile(12, 0.31, 0.8, 30.5));
        assert!(profile_moved(&slow, &fast, 0.05).is_empty());
    }
}
