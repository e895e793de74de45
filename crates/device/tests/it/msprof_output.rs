//! Reading what `msprof op` leaves behind, on sample folders laid out and
//! filled as cann-device.md §4 documents (flat and nested layouts, the
//! documented columns, extra columns, NA cells), and on broken ones:
//! every failure is an error naming the file or folder, never a panic.

use ascendopt_device::cann::msprof::{self, MsprofError};
use std::path::Path;

const BASIC_HEADER: &str =
    "Op Name,Op Type,Task Duration(us),Block Dim,Mix Block Dim,Device Id,Pid,Current Freq,Rated Freq,";

/// PipeUtilization's documented column groups, in order (the `aic_*`
/// group, then the `aiv_*` group).
fn pipe_columns() -> Vec<String> {
    let mut c: Vec<String> = vec!["block_id".into(), "sub_block_id".into()];
    c.extend(["aic_time(us)", "aic_total_cycles"].map(String::from));
    for p in ["cube", "mte1", "mte2", "mte3"] {
        c.push(format!("aic_{p}_time(us)"));
        c.push(format!("aic_{p}_ratio"));
    }
    c.extend(
        [
            "aic_mte3_active_bw(GB/s)",
            "aic_fixpipe_time(us)",
            "aic_fixpipe_ratio",
            "aic_fixpipe_active_bw(GB/s)",
            "aic_icache_miss_rate",
            "aic_scalar_time(us)",
            "aic_scalar_ratio",
        ]
        .map(String::from),
    );
    for x in [
        "single",
        "dual",
        "mte1_stall",
        "mte2_stall",
        "mte3_stall",
        "cube_stall",
        "wait_ib",
        "wait",
    ] {
        c.push(format!("aic_scalar_{x}_time(us)"));
    }
    c.extend(
        [
            "aiv_time(us)",
            "aiv_total_cycles",
            "aiv_vec_time(us)",
            "aiv_vec_ratio",
        ]
        .map(String::from),
    );
    for p in ["mte2", "mte3"] {
        c.push(format!("aiv_{p}_time(us)"));
        c.push(format!("aiv_{p}_ratio"));
        c.push(format!("aiv_{p}_active_bw(GB/s)"));
    }
    c.extend(
        [
            "aiv_icache_miss_rate",
            "aiv_scalar_time(us)",
            "aiv_scalar_ratio",
        ]
        .map(String::from),
    );
    for x in [
        "single",
        "dual",
        "mte2_stall",
        "mte3_stall",
        "stall_by_ub",
        "vector_stall",
        "wait_ib",
        "wait",
    ] {
        c.push(format!("aiv_scalar_{x}_time(us)"));
    }
    c
}

/// A PipeUtilization.csv of `blocks` vector blocks (aic cells NA, every
/// line ending with a comma).
fn pipe_csv(blocks: u32) -> String {
    let cols = pipe_columns();
    let mut out = cols.join(",") + ",\n";
    for b in 0..blocks {
        let cells: Vec<String> = cols
            .iter()
            .map(|c| match c.as_str() {
                "block_id" => b.to_string(),
                "sub_block_id" => "vector0".into(),
                "aiv_total_cycles" => "270000".into(),
                c if c.starts_with("aic_") => "NA".into(),
                c if c.ends_with("ratio") => "0.5".into(),
                _ => "150.25".into(),
            })
            .collect();
        out.push_str(&(cells.join(",") + ",\n"));
    }
    out
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn a_flat_run_is_found_under_the_output_folder_and_read() {
    let out = tempfile::tempdir().unwrap();
    // An older run and the newest one: the newest is read.
    let old = out.path().join("OPPROF_20261201101010_ABCDEFGHIJKLMNOP");
    let run = out.path().join("OPPROF_20261206081500_QWERTYUIOPASDFGH");
    write(
        &old.join("OpBasicInfo.csv"),
        &format!("{BASIC_HEADER}\nold_0,vector,1.0,1,NA,0,1,1800,1800,\n"),
    );
    write(&old.join("PipeUtilization.csv"), &pipe_csv(1));
    write(
        &run.join("OpBasicInfo.csv"),
        &format!("{BASIC_HEADER}\ntopk_custom_0,vector,155.740005,2,NA,4,1304945,1800,1800,\n"),
    );
    write(&run.join("PipeUtilization.csv"), &pipe_csv(2));
    write(&run.join("L2Cache.csv"), "block_id,sub_block_id,\n");
    write(&run.join("visualize_data.bin"), "");
    std::fs::create_dir_all(run.join("dump")).unwrap();

    let kernels = msprof::read_output(out.path()).unwrap();
    assert_eq!(kernels.len(), 1);
    let k = &kernels[0];
    assert_eq!(k.files.dir, run);
    assert!(k.files.metrics.contains_key("L2Cache"));
    assert_eq!(k.basic.op_name, "topk_custom_0");
    assert_eq!(k.basic.op_type, "vector");
    assert!((k.basic.task_duration_us - 155.740005).abs() < 1e-9);
    assert_eq!(k.basic.block_dim, 2);
    assert_eq!(k.basic.mix_block_dim, None, "NA is absent, not zero");
    assert_eq!(k.at_rated_clock(), Some(true));
    assert_eq!(k.pipes.len(), 2);
    assert_eq!(k.pipes[1].block.block_id, 1);
    // The run folder itself works too.
    assert_eq!(
        msprof::read_output(&run).unwrap()[0].basic.op_name,
        "topk_custom_0"
    );
}

#[test]
fn a_nested_multi_kernel_multi_device_run_is_read_kernel_by_kernel() {
    let out = tempfile::tempdir().unwrap();
    let run = out.path().join("OPPROF_20261206081500_QWERTYUIOPASDFGH");
    for (base, kernel, idx, dur) in [
        (run.clone(), "AddCustom_1f2e", 0, "20.5"),
        (run.clone(), "AddCustom_1f2e", 1, "21.5"),
        (run.join("device1"), "MulCustom_9a9a", 0, "30.0"),
    ] {
        let dir = base.join(kernel).join(idx.to_string());
        write(
            &dir.join("OpBasicInfo_20261206081501123.csv"),
            &format!("{BASIC_HEADER}\n{kernel}_{idx},vector,{dur},48,NA,0,7,1300,1800,\n"),
        );
        write(
            &dir.join("PipeUtilization_20261206081501123.csv"),
            &pipe_csv(48),
        );
    }
    let kernels = msprof::read_output(out.path()).unwrap();
    let seen: Vec<(Option<u32>, Option<&str>, Option<u32>)> = kernels
        .iter()
        .map(|k| (k.files.device, k.files.op_name.as_deref(), k.files.index))
        .collect();
    assert_eq!(
        seen,
        vec![
            (None, Some("AddCustom_1f2e"), Some(0)),
            (None, Some("AddCustom_1f2e"), Some(1)),
            (Some(1), Some("MulCustom_9a9a"), Some(0)),
        ]
    );
    assert!((kernels[1].basic.task_duration_us - 21.5).abs() < 1e-9);
    assert_eq!(kernels[0].pipes.len(), 48);
    // 1300 of 1800 MHz: a down-clocked sample, to be rejected.
    assert_eq!(kernels[0].at_rated_clock(), Some(false));
}

#[test]
fn missing_and_malformed_output_are_errors_that_name_the_place() {
    let out = tempfile::tempdir().unwrap();
    let err = msprof::read_output(out.path()).unwrap_err();
    assert!(matches!(err, MsprofError::NoRun { .. }), "{err}");
    assert!(err.to_string().contains("OPPROF_"), "{err}");

    let run = out.path().join("OPPROF_20261206081500_QWERTYUIOPASDFGH");
    std::fs::create_dir_all(run.join("dump")).unwrap();
    let err = msprof::read_output(out.path()).unwrap_err();
    assert!(matches!(err, MsprofError::NoKernel { .. }), "{err}");

    write(
        &run.join("OpBasicInfo.csv"),
        &format!("{BASIC_HEADER}\nk_0,vector,12.5,1,NA,0,1,1800,1800,\n"),
    );
    let err = msprof::read_output(out.path()).unwrap_err();
    assert!(
        matches!(&err, MsprofError::MissingMetric { metric, .. } if metric == "PipeUtilization"),
        "{err}"
    );

    write(
        &run.join("PipeUtilization.csv"),
        "block_id,sub_block_id,aiv_time(us),\n0,vector0,abc,\n",
    );
    let err = msprof::read_output(out.path()).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("PipeUtilization.csv") && text.contains("line 2"),
        "{text}"
    );

    write(&run.join("PipeUtilization.csv"), &pipe_csv(1));
    write(&run.join("OpBasicInfo.csv"), &format!("{BASIC_HEADER}\n"));
    let text = msprof::read_output(out.path()).unwrap_err().to_string();
    assert!(
        text.contains("OpBasicInfo.csv") && text.contains("no data row"),
        "{text}"
    );
}

#[test]
fn the_console_lines_are_read() {
    let console = "\
[INFO] msprof op start
Op Name: AddCustom_1f2e_high_performance_1
Task Duration(us): 20.480000
Profiling results saved in /tmp/p/OPPROF_20261206081500_QWERTYUIOPASDFGH
1 success, 0 failed
";
    let c = msprof::parse_console(console);
    assert_eq!(c.op_names, vec!["AddCustom_1f2e_high_performance_1"]);
    assert_eq!(c.task_durations_us, vec![20.48]);
    assert_eq!(
        c.saved_in.as_deref(),
        Some(Path::new("/tmp/p/OPPROF_20261206081500_QWERTYUIOPASDFGH"))
    );
    assert_eq!(c.success_failed, Some((1, 0)));
    assert_eq!(
        msprof::parse_console("garbage\n"),
        msprof::Console::default()
    );
}
