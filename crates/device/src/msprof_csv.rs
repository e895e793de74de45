//! `msprof op`'s two core files, `OpBasicInfo.csv` and
//! `PipeUtilization.csv`, written from a [`Profile`] and parsed back, so
//! that scripts written for `msprof op` read the simulator's profiles and
//! real `msprof op` output can be read into the same typed rows.
//!
//! The format (cann-device.md §4 "CSV format", hardware-facts.md §G):
//! - every line, the header included, ends with a comma; a missing value is
//!   `NA`;
//! - columns are read by header name, case-insensitively (older CANN
//!   versions write `Device ID`), and columns nobody asked for are ignored;
//! - times are µs (`(us)` in the name), ratios are busy cycles / total
//!   cycles (0..1), frequencies MHz.
//!
//! What is written: only the fields the model produces. OpBasicInfo has
//! `Op Name, Op Type, Task Duration(us), Block Dim, Current Freq, Rated
//! Freq` (the simulated clock never throttles, so both frequencies are the
//! profile's clock); `Mix Block Dim`, `Device Id` and `Pid` are absent.
//! PipeUtilization has one row per block (`sub_block_id` `vector0` for a
//! vector block, `cube0` for a cube block), in msprof's column order, with
//! the `aic_*` group only when some block is a cube block and the `aiv_*`
//! group only when some block is a vector block; `icache_miss_rate`,
//! `active_bw` and the `scalar_*_stall` breakdown are absent. On a row of
//! the other core type the group's cells are `NA`, as msprof writes them.
//!
//! This module depends only on the profile's types ([`Profile`],
//! [`BlockProfile`], [`AivFields`], [`AicFields`], [`CoreType`]), not on
//! the engine or the trace, so it moves with them.

use crate::profile::{AicFields, AivFields, BlockProfile, CoreType, Profile};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// File name of the basic-info file.
pub const OP_BASIC_INFO: &str = "OpBasicInfo.csv";
/// File name of the pipe-utilisation file.
pub const PIPE_UTILIZATION: &str = "PipeUtilization.csv";

/// A CSV file that cannot be read as msprof's format.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{file}: line {line}: {message}")]
pub struct CsvError {
    /// Which file (`OpBasicInfo.csv`, `PipeUtilization.csv` or a path).
    pub file: String,
    /// 1-based line number (1 = the header).
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// One row of OpBasicInfo.csv. Fields the file does not hold (or holds as
/// `NA`) are `None`.
#[derive(Debug, Clone, PartialEq)]
pub struct OpBasicInfo {
    /// `Op Name`: the kernel symbol (msprof appends a launch suffix such as
    /// `_0`).
    pub op_name: String,
    /// `Op Type`: `vector`, `cube` or `mix`.
    pub op_type: String,
    /// `Task Duration(us)`.
    pub task_duration_us: f64,
    /// `Block Dim`.
    pub block_dim: u32,
    /// `Mix Block Dim`.
    pub mix_block_dim: Option<u32>,
    /// `Device Id`.
    pub device_id: Option<u32>,
    /// `Pid`.
    pub pid: Option<u64>,
    /// `Current Freq`, MHz.
    pub current_freq_mhz: Option<f64>,
    /// `Rated Freq`, MHz.
    pub rated_freq_mhz: Option<f64>,
}

impl OpBasicInfo {
    /// The row a profile of kernel `op_name` gives.
    pub fn from_profile(op_name: &str, profile: &Profile) -> OpBasicInfo {
        OpBasicInfo {
            op_name: op_name.to_string(),
            op_type: profile.op_type.clone(),
            task_duration_us: profile.task_duration_us,
            block_dim: profile.block_dim,
            mix_block_dim: None,
            device_id: None,
            pid: None,
            current_freq_mhz: Some(profile.freq_mhz),
            rated_freq_mhz: Some(profile.freq_mhz),
        }
    }
}

/// One row of PipeUtilization.csv: a block (or a sub-block of a mix
/// block) with the fields of its core type.
#[derive(Debug, Clone, PartialEq)]
pub struct PipeRow {
    /// `sub_block_id`: `vector0`, `vector1` or `cube0`.
    pub sub_block_id: String,
    /// The block's fields (`aiv` for vector sub-blocks, `aic` for cube).
    pub block: BlockProfile,
}

/// msprof's columns of the vector group, in file order, with the field
/// each reads.
const AIV_COLUMNS: [&str; 10] = [
    "aiv_time(us)",
    "aiv_total_cycles",
    "aiv_vec_time(us)",
    "aiv_vec_ratio",
    "aiv_mte2_time(us)",
    "aiv_mte2_ratio",
    "aiv_mte3_time(us)",
    "aiv_mte3_ratio",
    "aiv_scalar_time(us)",
    "aiv_scalar_ratio",
];

/// msprof's columns of the cube group, in file order.
const AIC_COLUMNS: [&str; 14] = [
    "aic_time(us)",
    "aic_total_cycles",
    "aic_cube_time(us)",
    "aic_cube_ratio",
    "aic_mte1_time(us)",
    "aic_mte1_ratio",
    "aic_mte2_time(us)",
    "aic_mte2_ratio",
    "aic_mte3_time(us)",
    "aic_mte3_ratio",
    "aic_fixpipe_time(us)",
    "aic_fixpipe_ratio",
    "aic_scalar_time(us)",
    "aic_scalar_ratio",
];

/// A number as msprof writes it (six decimals).
fn num(v: f64) -> String {
    format!("{v:.6}")
}

fn line(cells: &[String]) -> String {
    let mut s = String::new();
    for c in cells {
        s.push_str(c);
        s.push(',');
    }
    s.push('\n');
    s
}

/// A cell: quoted when it holds a comma or a quote.
fn cell(text: &str) -> String {
    if text.contains([',', '"', '\n']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

/// OpBasicInfo.csv for `info` (present fields only).
pub fn render_op_basic_info(info: &OpBasicInfo) -> String {
    let mut header: Vec<String> = Vec::new();
    let mut row: Vec<String> = Vec::new();
    let mut push = |name: &str, value: Option<String>| {
        if let Some(v) = value {
            header.push(name.to_string());
            row.push(v);
        }
    };
    push("Op Name", Some(cell(&info.op_name)));
    push("Op Type", Some(cell(&info.op_type)));
    push("Task Duration(us)", Some(num(info.task_duration_us)));
    push("Block Dim", Some(info.block_dim.to_string()));
    push("Mix Block Dim", info.mix_block_dim.map(|v| v.to_string()));
    push("Device Id", info.device_id.map(|v| v.to_string()));
    push("Pid", info.pid.map(|v| v.to_string()));
    push(
        "Current Freq",
        info.current_freq_mhz.map(|v| format!("{v:.0}")),
    );
    push("Rated Freq", info.rated_freq_mhz.map(|v| format!("{v:.0}")));
    line(&header) + &line(&row)
}

fn aiv_cells(f: &AivFields) -> [String; 10] {
    [
        num(f.time_us),
        f.total_cycles.to_string(),
        num(f.vec_time_us),
        num(f.vec_ratio),
        num(f.mte2_time_us),
        num(f.mte2_ratio),
        num(f.mte3_time_us),
        num(f.mte3_ratio),
        num(f.scalar_time_us),
        num(f.scalar_ratio),
    ]
}

fn aic_cells(f: &AicFields) -> [String; 14] {
    [
        num(f.time_us),
        f.total_cycles.to_string(),
        num(f.cube_time_us),
        num(f.cube_ratio),
        num(f.mte1_time_us),
        num(f.mte1_ratio),
        num(f.mte2_time_us),
        num(f.mte2_ratio),
        num(f.mte3_time_us),
        num(f.mte3_ratio),
        num(f.fixpipe_time_us),
        num(f.fixpipe_ratio),
        num(f.scalar_time_us),
        num(f.scalar_ratio),
    ]
}

/// The `sub_block_id` of a block of `core` type.
pub fn sub_block_id(core: CoreType) -> &'static str {
    match core {
        CoreType::Aiv => "vector0",
        CoreType::Aic => "cube0",
    }
}

/// PipeUtilization.csv for `blocks` (see the module docs for the columns).
pub fn render_pipe_utilization(blocks: &[BlockProfile]) -> String {
    let has_aic = blocks.iter().any(|b| b.aic.is_some());
    let has_aiv = blocks.iter().any(|b| b.aiv.is_some());
    let mut header: Vec<String> = vec!["block_id".into(), "sub_block_id".into()];
    if has_aic {
        header.extend(AIC_COLUMNS.iter().map(|c| c.to_string()));
    }
    if has_aiv {
        header.extend(AIV_COLUMNS.iter().map(|c| c.to_string()));
    }
    let mut out = line(&header);
    for b in blocks {
        let mut row = vec![
            b.block_id.to_string(),
            sub_block_id(b.core_type).to_string(),
        ];
        if has_aic {
            match &b.aic {
                Some(f) => row.extend(aic_cells(f)),
                None => row.extend(AIC_COLUMNS.iter().map(|_| "NA".to_string())),
            }
        }
        if has_aiv {
            match &b.aiv {
                Some(f) => row.extend(aiv_cells(f)),
                None => row.extend(AIV_COLUMNS.iter().map(|_| "NA".to_string())),
            }
        }
        out.push_str(&line(&row));
    }
    out
}

/// Writes OpBasicInfo.csv and PipeUtilization.csv of `profile` (kernel
/// `op_name`) into `dir` (created if needed) and returns their paths.
pub fn write_dir(dir: &Path, op_name: &str, profile: &Profile) -> std::io::Result<[PathBuf; 2]> {
    std::fs::create_dir_all(dir)?;
    let basic = dir.join(OP_BASIC_INFO);
    let pipes = dir.join(PIPE_UTILIZATION);
    std::fs::write(
        &basic,
        render_op_basic_info(&OpBasicInfo::from_profile(op_name, profile)),
    )?;
    std::fs::write(&pipes, render_pipe_utilization(&profile.blocks))?;
    Ok([basic, pipes])
}

/// Splits one CSV line into cells (double quotes allowed, `""` inside
/// quotes is a quote); the trailing empty cell of msprof's final comma is
/// dropped.
fn split_line(text: &str) -> Result<Vec<String>, UnterminatedQuote> {
    let mut cells = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                cur.push('"');
            }
            (true, '"') => quoted = false,
            (false, '"') if cur.is_empty() => quoted = true,
            (false, ',') => cells.push(std::mem::take(&mut cur)),
            (_, c) => cur.push(c),
        }
    }
    if quoted {
        return Err(UnterminatedQuote);
    }
    if !cur.trim().is_empty() || !text.trim_end().ends_with(',') {
        cells.push(cur);
    }
    Ok(cells.into_iter().map(|c| c.trim().to_string()).collect())
}

/// A CSV line whose last quoted cell does not end.
#[derive(Debug, thiserror::Error)]
#[error("unterminated quote")]
struct UnterminatedQuote;

/// A parsed CSV: lower-cased header → column, and the data rows.
struct Table {
    file: String,
    columns: HashMap<String, usize>,
    rows: Vec<(usize, Vec<String>)>,
}

impl Table {
    fn parse(file: &str, text: &str) -> Result<Table, CsvError> {
        let err = |line: usize, message: String| CsvError {
            file: file.to_string(),
            line,
            message,
        };
        let mut lines = text
            .lines()
            .enumerate()
            .map(|(i, l)| (i + 1, l.trim_start_matches('\u{feff}')))
            .filter(|(_, l)| !l.trim().is_empty());
        let (hline, header) = lines
            .next()
            .ok_or_else(|| err(1, "empty file: no header line".into()))?;
        let names = split_line(header).map_err(|e| err(hline, e.to_string()))?;
        let mut columns = HashMap::new();
        for (i, n) in names.iter().enumerate() {
            columns.entry(n.to_ascii_lowercase()).or_insert(i);
        }
        let mut rows = Vec::new();
        for (n, l) in lines {
            let cells = split_line(l).map_err(|e| err(n, e.to_string()))?;
            if cells.len() > names.len() {
                return Err(err(
                    n,
                    format!(
                        "{} cells but the header names {} columns",
                        cells.len(),
                        names.len()
                    ),
                ));
            }
            rows.push((n, cells));
        }
        Ok(Table {
            file: file.to_string(),
            columns,
            rows,
        })
    }

    fn err(&self, line: usize, message: String) -> CsvError {
        CsvError {
            file: self.file.clone(),
            line,
            message,
        }
    }

    /// The cell of `column` in `row`; None when the column is absent, the
    /// cell is empty or `NA`.
    fn get<'a>(&self, row: &'a [String], column: &str) -> Option<&'a str> {
        let i = *self.columns.get(&column.to_ascii_lowercase())?;
        row.get(i)
            .map(String::as_str)
            .filter(|v| !v.is_empty() && !v.eq_ignore_ascii_case("NA"))
    }

    fn opt<T: std::str::FromStr>(
        &self,
        line: usize,
        row: &[String],
        column: &str,
    ) -> Result<Option<T>, CsvError> {
        match self.get(row, column) {
            None => Ok(None),
            Some(v) => v
                .parse::<T>()
                .map(Some)
                .map_err(|_| self.err(line, format!("column `{column}`: `{v}` is not a number"))),
        }
    }

    fn req<T: std::str::FromStr>(
        &self,
        line: usize,
        row: &[String],
        column: &str,
    ) -> Result<T, CsvError> {
        self.opt(line, row, column)?
            .ok_or_else(|| self.err(line, format!("column `{column}` is missing or NA")))
    }
}

/// Parses OpBasicInfo.csv: the first data row (msprof writes one).
pub fn parse_op_basic_info(text: &str) -> Result<OpBasicInfo, CsvError> {
    let t = Table::parse(OP_BASIC_INFO, text)?;
    let (n, row) = t
        .rows
        .first()
        .ok_or_else(|| t.err(1, "no data row under the header".into()))?;
    let n = *n;
    let name = t
        .get(row, "Op Name")
        .ok_or_else(|| t.err(n, "column `Op Name` is missing or NA".into()))?;
    let op_type = t
        .get(row, "Op Type")
        .ok_or_else(|| t.err(n, "column `Op Type` is missing or NA".into()))?;
    Ok(OpBasicInfo {
        op_name: name.to_string(),
        op_type: op_type.to_string(),
        task_duration_us: t.req(n, row, "Task Duration(us)")?,
        block_dim: t.req(n, row, "Block Dim")?,
        mix_block_dim: t.opt(n, row, "Mix Block Dim")?,
        device_id: t.opt(n, row, "Device Id")?,
        pid: t.opt(n, row, "Pid")?,
        current_freq_mhz: t.opt(n, row, "Current Freq")?,
        rated_freq_mhz: t.opt(n, row, "Rated Freq")?,
    })
}

/// Parses PipeUtilization.csv into one row per (block, sub-block). A row's
/// `aiv` fields are read when its `aiv_time(us)` cell holds a value, its
/// `aic` fields when `aic_time(us)` does; then every column of the group
/// this module writes must be there.
pub fn parse_pipe_utilization(text: &str) -> Result<Vec<PipeRow>, CsvError> {
    let t = Table::parse(PIPE_UTILIZATION, text)?;
    let mut out = Vec::new();
    for (n, row) in &t.rows {
        let n = *n;
        let block_id: u32 = t.req(n, row, "block_id")?;
        let sub = t.get(row, "sub_block_id").unwrap_or("").to_string();
        let aiv = if t.get(row, "aiv_time(us)").is_some() {
            Some(AivFields {
                time_us: t.req(n, row, AIV_COLUMNS[0])?,
                total_cycles: t.req(n, row, AIV_COLUMNS[1])?,
                vec_time_us: t.req(n, row, AIV_COLUMNS[2])?,
                vec_ratio: t.req(n, row, AIV_COLUMNS[3])?,
                mte2_time_us: t.req(n, row, AIV_COLUMNS[4])?,
                mte2_ratio: t.req(n, row, AIV_COLUMNS[5])?,
                mte3_time_us: t.req(n, row, AIV_COLUMNS[6])?,
                mte3_ratio: t.req(n, row, AIV_COLUMNS[7])?,
                scalar_time_us: t.req(n, row, AIV_COLUMNS[8])?,
                scalar_ratio: t.req(n, row, AIV_COLUMNS[9])?,
                // L2Cache.csv's columns, read when a merged file holds
                // them (this module's PipeUtilization.csv does not).
                read_hit_rate_pct: t.opt(n, row, "aiv_read_hit_rate(%)")?,
                write_hit_rate_pct: t.opt(n, row, "aiv_write_hit_rate(%)")?,
                total_hit_rate_pct: t.opt(n, row, "aiv_total_hit_rate(%)")?,
            })
        } else {
            None
        };
        let aic = if t.get(row, "aic_time(us)").is_some() {
            Some(AicFields {
                time_us: t.req(n, row, AIC_COLUMNS[0])?,
                total_cycles: t.req(n, row, AIC_COLUMNS[1])?,
                cube_time_us: t.req(n, row, AIC_COLUMNS[2])?,
                cube_ratio: t.req(n, row, AIC_COLUMNS[3])?,
                mte1_time_us: t.req(n, row, AIC_COLUMNS[4])?,
                mte1_ratio: t.req(n, row, AIC_COLUMNS[5])?,
                mte2_time_us: t.req(n, row, AIC_COLUMNS[6])?,
                mte2_ratio: t.req(n, row, AIC_COLUMNS[7])?,
                mte3_time_us: t.req(n, row, AIC_COLUMNS[8])?,
                mte3_ratio: t.req(n, row, AIC_COLUMNS[9])?,
                fixpipe_time_us: t.req(n, row, AIC_COLUMNS[10])?,
                fixpipe_ratio: t.req(n, row, AIC_COLUMNS[11])?,
                scalar_time_us: t.req(n, row, AIC_COLUMNS[12])?,
                scalar_ratio: t.req(n, row, AIC_COLUMNS[13])?,
                read_hit_rate_pct: t.opt(n, row, "aic_read_hit_rate(%)")?,
                write_hit_rate_pct: t.opt(n, row, "aic_write_hit_rate(%)")?,
                total_hit_rate_pct: t.opt(n, row, "aic_total_hit_rate(%)")?,
            })
        } else {
            None
        };
        let core_type =
            if sub.to_ascii_lowercase().starts_with("cube") || (aic.is_some() && aiv.is_none()) {
                CoreType::Aic
            } else {
                CoreType::Aiv
            };
        if aiv.is_none() && aic.is_none() {
            return Err(t.err(
                n,
                "neither `aiv_time(us)` nor `aic_time(us)` holds a value".into(),
            ));
        }
        out.push(PipeRow {
            sub_block_id: sub,
            block: BlockProfile {
                block_id,
                core_type,
                aiv,
                aic,
            },
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn aiv(block: u32, t: f64) -> BlockProfile {
        BlockProfile {
            block_id: block,
            core_type: CoreType::Aiv,
            aiv: Some(AivFields {
                time_us: t,
                total_cycles: (t * 1800.0) as u64,
                vec_time_us: t * 0.5,
                vec_ratio: 0.5,
                scalar_time_us: t * 0.125,
                scalar_ratio: 0.125,
                mte2_time_us: t * 0.75,
                mte2_ratio: 0.75,
                mte3_time_us: t * 0.25,
                mte3_ratio: 0.25,
                read_hit_rate_pct: None,
                write_hit_rate_pct: None,
                total_hit_rate_pct: None,
            }),
            aic: None,
        }
    }

    fn aic(block: u32, t: f64) -> BlockProfile {
        BlockProfile {
            block_id: block,
            core_type: CoreType::Aic,
            aiv: None,
            aic: Some(AicFields {
                time_us: t,
                total_cycles: (t * 1800.0) as u64,
                cube_time_us: t * 0.5,
                cube_ratio: 0.5,
                scalar_time_us: 1.0,
                scalar_ratio: 0.0625,
                mte1_time_us: 2.0,
                mte1_ratio: 0.125,
                mte2_time_us: 3.0,
                mte2_ratio: 0.1875,
                mte3_time_us: 4.0,
                mte3_ratio: 0.25,
                fixpipe_time_us: 5.0,
                fixpipe_ratio: 0.3125,
                read_hit_rate_pct: None,
                write_hit_rate_pct: None,
                total_hit_rate_pct: None,
            }),
        }
    }

    fn profile(blocks: Vec<BlockProfile>, op_type: &str) -> Profile {
        Profile {
            soc_version: "Ascend910B2".into(),
            op_type: op_type.into(),
            task_duration_us: 31.25,
            block_dim: blocks.len() as u32,
            cores: Some(48),
            freq_mhz: 1800.0,
            launch_overhead_us: 5.0,
            core_span_us: 26.25,
            gm_read_bytes: Some(1),
            gm_write_bytes: Some(1),
            achieved_gbps: 1.0,
            hbm_read_bytes: Some(1),
            hbm_write_bytes: Some(1),
            l2_read_hit_rate_pct: Some(0.0),
            l2_write_hit_rate_pct: Some(0.0),
            hbm_gbps: 1.0,
            noise_factor: Some(1.0),
            kernel_code: Some(Default::default()),
            blocks,
            roofline: None,
            roofline_reached_pct: None,
            hotspots: None,
        }
    }

    #[test]
    fn vector_profile_writes_msprof_columns_and_parses_back() {
        let p = profile(vec![aiv(0, 16.0), aiv(1, 15.5)], "vector");
        let basic = render_op_basic_info(&OpBasicInfo::from_profile("add_custom", &p));
        let mut lines = basic.lines();
        assert_eq!(
            lines.next(),
            Some("Op Name,Op Type,Task Duration(us),Block Dim,Current Freq,Rated Freq,")
        );
        assert_eq!(
            lines.next(),
            Some("add_custom,vector,31.250000,2,1800,1800,")
        );
        let back = parse_op_basic_info(&basic).unwrap();
        assert_eq!(back, OpBasicInfo::from_profile("add_custom", &p));
        assert_eq!(back.device_id, None, "absent, not zero");

        let pipes = render_pipe_utilization(&p.blocks);
        let header = pipes.lines().next().unwrap();
        assert!(header.starts_with(
            "block_id,sub_block_id,aiv_time(us),aiv_total_cycles,aiv_vec_time(us),aiv_vec_ratio,"
        ));
        assert!(!header.contains("aic_"), "no cube group for a vector op");
        assert!(pipes.lines().all(|l| l.ends_with(',')));
        assert!(pipes
            .lines()
            .nth(1)
            .unwrap()
            .starts_with("0,vector0,16.000000,28800,8.000000,0.500000,"));
        let rows = parse_pipe_utilization(&pipes).unwrap();
        let blocks: Vec<BlockProfile> = rows.iter().map(|r| r.block.clone()).collect();
        assert_eq!(blocks, p.blocks);
        assert!(rows.iter().all(|r| r.sub_block_id == "vector0"));
    }

    #[test]
    fn mix_profile_marks_the_other_group_na() {
        let p = profile(vec![aic(0, 20.0), aiv(0, 18.0)], "mix");
        let pipes = render_pipe_utilization(&p.blocks);
        let lines: Vec<&str> = pipes.lines().collect();
        assert!(lines[0].contains("aic_fixpipe_ratio") && lines[0].contains("aiv_vec_ratio"));
        assert!(lines[1].starts_with("0,cube0,20.000000,"));
        assert!(lines[1].ends_with(&"NA,".repeat(10)));
        assert!(lines[2].starts_with(&format!("0,vector0,{}", "NA,".repeat(14))));
        let rows = parse_pipe_utilization(&pipes).unwrap();
        assert_eq!(rows[0].block, p.blocks[0]);
        assert_eq!(rows[1].block, p.blocks[1]);
    }

    #[test]
    fn reads_a_real_layout_by_header_name() {
        // The documented 910B layout: every column (some the model does not
        // write), old-style `Device ID`, NA cells, extra columns, a
        // trailing comma and a byte-order mark.
        let basic = "\u{feff}Op Name,Op Type,Task Duration(us),Block Dim,Mix Block Dim,Device ID,Pid,Current Freq,Rated Freq,\n\
                     topk_custom_0,vector,155.740005,1,NA,4,1304945,1800,1800,\n";
        let b = parse_op_basic_info(basic).unwrap();
        assert_eq!(b.op_name, "topk_custom_0");
        assert_eq!(b.task_duration_us, 155.740005);
        assert_eq!(b.block_dim, 1);
        assert_eq!(b.mix_block_dim, None);
        assert_eq!(b.device_id, Some(4));
        assert_eq!(b.pid, Some(1304945));
        assert_eq!(b.current_freq_mhz, Some(1800.0));

        let mut header = vec!["block_id", "sub_block_id"];
        header.extend(AIC_COLUMNS);
        header.push("aic_icache_miss_rate");
        header.extend(AIV_COLUMNS);
        header.push("aiv_icache_miss_rate");
        let mut row = vec!["3".to_string(), "vector1".to_string()];
        row.extend(AIC_COLUMNS.iter().map(|_| "NA".to_string()));
        row.push("NA".into());
        row.extend(
            [
                "9.5", "17100", "1.5", "0.157", "8.0", "0.842", "0.5", "0.052", "0.25", "0.026",
            ]
            .map(String::from),
        );
        row.push("0.01".into());
        let text = format!("{},\n{},\n", header.join(","), row.join(","));
        let rows = parse_pipe_utilization(&text).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].sub_block_id, "vector1");
        let v = rows[0].block.aiv.as_ref().unwrap();
        assert_eq!(rows[0].block.block_id, 3);
        assert_eq!(v.total_cycles, 17100);
        assert_eq!(v.mte2_ratio, 0.842);
        assert!(rows[0].block.aic.is_none());
    }

    #[test]
    fn bad_files_say_where() {
        let e = parse_op_basic_info("Op Name,Op Type,Block Dim,\nx,vector,4,\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.contains("Task Duration(us)"), "{e}");
        let e = parse_pipe_utilization("block_id,aiv_time(us),aiv_total_cycles,\n0,1.5,abc,\n")
            .unwrap_err();
        assert!(e.to_string().contains("line 2"), "{e}");
        assert!(parse_op_basic_info("").is_err());
        assert!(parse_pipe_utilization("block_id,sub_block_id,\n0,vector0,1,2,\n").is_err());
    }

    #[test]
    fn quoted_names_round_trip() {
        let info = OpBasicInfo {
            op_name: "a,\"b\"".into(),
            ..OpBasicInfo::from_profile("x", &profile(vec![aiv(0, 1.0)], "vector"))
        };
        assert_eq!(
            parse_op_basic_info(&render_op_basic_info(&info))
                .unwrap()
                .op_name,
            "a,\"b\""
        );
    }
}
