//! `npu-smi info` read into typed chips.
//!
//! The table (cann-device.md §5, from public output): two `|` rows per
//! chip, `NPU Name | Health | Power Temp Hugepages` then `Chip | Bus-Id |
//! AICore(%) Memory-Usage(MB) used / total HBM-Usage(MB) used / total`,
//! between `+---` / `+===` borders; a process table follows (rows of four
//! cells, or `No running processes found in NPU N`). NPU ids can have
//! gaps. Anything that does not parse as a pair is skipped, never a panic.

/// One chip as `npu-smi info` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NpuChip {
    /// The NPU id of the first row.
    pub npu: u32,
    /// The chip's name (`910B3`); the SoC name is `Ascend` + this.
    pub name: String,
    /// Health (`OK`, `Warning`, `Alarm`, `Critical`, ...).
    pub health: String,
    /// The PCI bus id of the second row.
    pub bus_id: String,
    /// HBM in use, MB.
    pub hbm_used_mb: u64,
    /// HBM in all, MB.
    pub hbm_total_mb: u64,
}

impl NpuChip {
    /// The SoC name the runtime reports (`aclrtGetSocName`), as
    /// cann-device.md derives it: `Ascend` + the name.
    pub fn soc_name(&self) -> String {
        format!("Ascend{}", self.name)
    }

    /// Free HBM, MB.
    pub fn hbm_free_mb(&self) -> u64 {
        self.hbm_total_mb.saturating_sub(self.hbm_used_mb)
    }
}

/// The cells of a `| a | b | c |` row, trimmed (None for a border or any
/// other line).
fn cells(line: &str) -> Option<Vec<&str>> {
    let body = line.trim().strip_prefix('|')?.strip_suffix('|')?;
    Some(body.split('|').map(str::trim).collect())
}

/// `0000:C1:00.0`.
fn is_bus_id(s: &str) -> bool {
    let parts: Vec<&str> = s.split([':', '.']).collect();
    parts.len() == 4
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_hexdigit()))
}

/// The last `used / total` pair of a cell (`0 0 / 0 3161 / 65536` gives
/// (3161, 65536): HBM comes after the memory column).
fn last_used_total(cell: &str) -> Option<(u64, u64)> {
    let tokens: Vec<&str> = cell.split_whitespace().collect();
    let slash = tokens.iter().rposition(|t| *t == "/")?;
    let used = tokens.get(slash.checked_sub(1)?)?.parse().ok()?;
    let total = tokens.get(slash + 1)?.parse().ok()?;
    Some((used, total))
}

/// The chips of an `npu-smi info` output, in the order shown.
pub fn parse_info(text: &str) -> Vec<NpuChip> {
    let rows: Vec<Vec<&str>> = text.lines().filter_map(cells).collect();
    let mut chips = Vec::new();
    for pair in rows.windows(2) {
        let (first, second) = (&pair[0], &pair[1]);
        if first.len() != 3 || second.len() != 3 || !is_bus_id(second[1]) {
            continue;
        }
        let mut head = first[0].split_whitespace();
        let (Some(npu), Some(name)) = (head.next().and_then(|n| n.parse().ok()), head.next())
        else {
            continue;
        };
        let Some((hbm_used_mb, hbm_total_mb)) = last_used_total(second[2]) else {
            continue;
        };
        chips.push(NpuChip {
            npu,
            name: name.to_string(),
            health: first[1].to_string(),
            bus_id: second[1].to_string(),
            hbm_used_mb,
            hbm_total_mb,
        });
    }
    chips
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The documented layout, two chips with a gap in the ids, then the
    /// process table.
    const INFO: &str = "\
+------------------------------------------------------------------------------------------------+
| npu-smi 24.1.rc2                 Version: 24.1.rc2                                             |
+---------------------------+---------------+----------------------------------------------------+
| NPU   Name                | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|
| Chip                      | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)        |
+===========================+===============+====================================================+
| 0     910B3               | OK            | 93.6        40                0    / 0             |
| 0                         | 0000:C1:00.0  | 0           0    / 0          3161 / 65536         |
+===========================+===============+====================================================+
| 2     910B2               | Warning       | 90.1        41                0    / 0             |
| 0                         | 0000:01:00.0  | 12          0    / 0          40000 / 65536        |
+===========================+===============+====================================================+
+---------------------------+---------------+----------------------------------------------------+
| NPU     Chip              | Process id    | Process name             | Process memory(MB)      |
+===========================+===============+====================================================+
| No running processes found in NPU 0                                                            |
+===========================+===============+====================================================+
";

    #[test]
    fn reads_every_chip_and_skips_headers_borders_and_processes() {
        let chips = parse_info(INFO);
        assert_eq!(chips.len(), 2, "{chips:?}");
        assert_eq!(chips[0].npu, 0);
        assert_eq!(chips[0].soc_name(), "Ascend910B3");
        assert_eq!(chips[0].health, "OK");
        assert_eq!(chips[0].bus_id, "0000:C1:00.0");
        assert_eq!((chips[0].hbm_used_mb, chips[0].hbm_total_mb), (3161, 65536));
        assert_eq!(chips[0].hbm_free_mb(), 62375);
        assert_eq!(chips[1].npu, 2);
        assert_eq!(chips[1].soc_name(), "Ascend910B2");
        assert_eq!(chips[1].health, "Warning");
    }

    #[test]
    fn malformed_output_gives_no_chip_and_no_panic() {
        assert!(parse_info("").is_empty());
        assert!(parse_info("dcmi module initialize failed. ret is -8005\n").is_empty());
        assert!(parse_info(
            "| 0 910B3 | OK | 93.6 40 0 / 0 |\n| 0 | not-a-bus | 0 0 / 0 x / y |\n"
        )
        .is_empty());
        assert!(parse_info("| 0 910B3 | OK | 1 |\n| 0 | 0000:C1:00.0 | 3161 / |\n").is_empty());
    }
}
