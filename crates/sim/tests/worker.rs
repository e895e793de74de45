//! The sandboxed worker, end to end: misbehaving C functions compiled with
//! g++ into a shared object are run through the worker's hidden
//! `__selftest:call:<symbol>` job, and the parent (this test process) must
//! turn each misbehaviour into the right `WorkerOutcome` and survive it.

use ascendopt_op::Dtype;
use ascendopt_sim::launch::{JobTensor, LaunchFailure, LaunchJob, Platform};
use ascendopt_sim::worker::{
    run_job, run_job_with, TimeLimit, WorkerCommand, WorkerLimits, WorkerOutcome, WorkerReport,
};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Misbehaving "kernels". Each takes the job's seed and returns a long.
const MISCHIEF: &str = r#"
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <pthread.h>
#include <unistd.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

extern char** environ;

extern "C" long t_segv(unsigned long) {
  volatile int* p = nullptr;
  *p = 1;
  return 0;
}

extern "C" long t_hang(unsigned long) {
  volatile unsigned long x = 0;
  for (;;) x = x + 1;
}

extern "C" long t_alloc(unsigned long) {
  for (;;) {
    char* p = new char[64 << 20];
    memset(p, 1, 64 << 20);
  }
}

extern "C" long t_writefile(unsigned long) {
  FILE* f = fopen("big.bin", "wb");
  if (!f) return -errno;
  static char buf[1 << 20];
  memset(buf, 7, sizeof buf);
  for (int i = 0; i < 100; i++) {
    if (fwrite(buf, 1, sizeof buf, f) != sizeof buf) return -1000 - i;
  }
  fclose(f);
  return 100;
}

extern "C" long t_net(unsigned long port) {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  if (s < 0) return 100000 + errno;
  sockaddr_in addr;
  memset(&addr, 0, sizeof addr);
  addr.sin_family = AF_INET;
  addr.sin_port = htons((unsigned short)port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  long rc = connect(s, (sockaddr*)&addr, sizeof addr) == 0 ? 0 : errno;
  close(s);
  return rc;
}

extern "C" long t_fork(unsigned long) {
  long started = 0;
  for (int i = 0; i < 20; i++) {
    pid_t pid = fork();
    if (pid == 0) {
      for (;;) pause();
    }
    if (pid > 0) started++;
  }
  return started;
}

static void* thread_body(void* arg) { return (void*)((long)arg * 2); }

extern "C" long t_thread(unsigned long seed) {
  pthread_t t;
  if (pthread_create(&t, nullptr, thread_body, (void*)(long)seed) != 0) return -1;
  void* out = nullptr;
  pthread_join(t, &out);
  return (long)out;
}

extern "C" long t_exit(unsigned long) { exit(3); }

extern "C" long t_print(unsigned long) {
  static char line[1024];
  memset(line, 'x', sizeof line - 2);
  line[sizeof line - 2] = '\n';
  for (int i = 0; i < 5 * 1024; i++) fputs(line, stdout);
  for (int i = 0; i < 1024; i++) fputs(line, stderr);
  fputs("END-OF-STDOUT\n", stdout);
  fflush(stdout);
  return 1;
}

extern "C" long t_env(unsigned long) {
  long n = 0;
  for (char** e = environ; *e; e++) n++;
  char cwd[4096];
  if (!getcwd(cwd, sizeof cwd)) return -1;
  const char* home = getenv("HOME");
  if (!home || strcmp(home, cwd) != 0) return -2;
  FILE* f = fopen("scratch.txt", "w");
  if (!f) return -3;
  fputs("small files are fine\n", f);
  fclose(f);
  return n;
}
"#;

/// The mischief library, compiled once per test process into cargo's
/// temporary directory for integration tests (renamed into place, so test
/// processes running at the same time each see a complete file).
fn mischief_lib() -> &'static Path {
    static LIB: OnceLock<PathBuf> = OnceLock::new();
    LIB.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("worker-mischief");
        std::fs::create_dir_all(&dir).unwrap();
        let pid = std::process::id();
        // Same contents in every process, so replacing it is harmless.
        let src = dir.join("mischief.cpp");
        let tmp_src = dir.join(format!("mischief-{pid}.cpp.tmp"));
        std::fs::write(&tmp_src, MISCHIEF).unwrap();
        std::fs::rename(&tmp_src, &src).unwrap();
        let tmp = dir.join(format!("libmischief-{pid}.so"));
        let lib = dir.join("libmischief.so");
        let out = Command::new("g++")
            .args(["-std=c++17", "-O1", "-g1", "-fPIC", "-shared", "-pthread"])
            .arg(&src)
            .arg("-o")
            .arg(&tmp)
            .output()
            .expect("g++ is needed for the worker tests");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::fs::rename(&tmp, &lib).unwrap();
        lib
    })
}

/// Points `WorkerCommand::locate` at the worker cargo built for this test.
fn use_built_worker() {
    static SET: OnceLock<()> = OnceLock::new();
    SET.get_or_init(|| {
        std::env::set_var("ASCENDOPT_WORKER", env!("CARGO_BIN_EXE_ascendopt-worker"))
    });
}

fn platform() -> Platform {
    Platform {
        soc_version: "Ascend910B2".into(),
        core_num_aiv: 48,
        core_num_aic: 24,
        ub_size: 192 * 1024,
        l1_size: 512 * 1024,
        l0a_size: 64 * 1024,
        l0b_size: 64 * 1024,
        l0c_size: 128 * 1024,
        l2_size: 192 << 20,
        hbm_size: 64 << 30,
    }
}

fn job(kernel_name: &str, seed: u64) -> LaunchJob {
    LaunchJob {
        host_lib: mischief_lib().to_path_buf(),
        kernel_lib: mischief_lib().to_path_buf(),
        kernel_name: kernel_name.into(),
        op_type: None,
        inputs: vec![],
        outputs: vec![],
        attrs: vec![],
        platform: platform(),
        seed,
        max_instrs_per_block: 1_000_000,
        knobs: Vec::new(),
        check_in_worker: false,
        tiling_only: false,
        describe: false,
    }
}

fn limits() -> WorkerLimits {
    WorkerLimits {
        wall_ms: 20_000,
        ..WorkerLimits::standard()
    }
}

/// Runs `t_<name>` with `seed` through the worker located via the env var.
fn call(name: &str, seed: u64, limits: &WorkerLimits) -> WorkerReport {
    use_built_worker();
    let command = WorkerCommand::locate().unwrap();
    let report = run_job_with(
        &command,
        &job(&format!("__selftest:call:t_{name}"), seed),
        limits,
    );
    assert!(
        !report.work_dir.exists(),
        "work dir {} left behind",
        report.work_dir.display()
    );
    report
}

/// The value a `__selftest:call` returned.
fn returned(report: &WorkerReport) -> i64 {
    match &report.outcome {
        WorkerOutcome::Finished(output) => {
            assert_eq!(output.outputs.len(), 1);
            i64::from_le_bytes(output.outputs[0].as_slice().try_into().unwrap())
        }
        other => panic!(
            "expected Finished, got {other:?}\nstderr: {}",
            report.stderr_tail
        ),
    }
}

#[test]
fn a_segfault_is_a_crash_with_sigsegv_and_its_source_line() {
    let report = call("segv", 0, &limits());
    let line = MISCHIEF
        .lines()
        .position(|l| l.contains("*p = 1;"))
        .unwrap()
        + 1;
    match &report.outcome {
        WorkerOutcome::Crashed {
            signal,
            signal_name,
            location,
            ..
        } => {
            assert_eq!(*signal, libc::SIGSEGV);
            assert_eq!(signal_name, "SIGSEGV");
            let location = location.as_deref().unwrap_or("");
            assert!(
                location.starts_with("t_segv at ")
                    && location.ends_with(&format!("mischief.cpp:{line}")),
                "location {location:?}\nstderr: {}",
                report.stderr_tail
            );
        }
        other => panic!("expected a crash, got {other:?}"),
    }
}

#[test]
fn an_infinite_loop_times_out_within_the_limit() {
    let limits = WorkerLimits {
        wall_ms: 1000,
        ..limits()
    };
    let start = Instant::now();
    let report = call("hang", 0, &limits);
    let took = start.elapsed();
    match &report.outcome {
        WorkerOutcome::TimedOut {
            after_ms, limit, ..
        } => {
            assert_eq!(*limit, TimeLimit::Wall);
            assert!((1000..1600).contains(after_ms), "after {after_ms} ms");
        }
        other => panic!("expected a time-out, got {other:?}"),
    }
    assert!(took < Duration::from_millis(2000), "took {took:?}");
}

#[test]
fn the_cpu_limit_also_stops_a_spinning_kernel() {
    let limits = WorkerLimits {
        wall_ms: 10_000,
        cpu_seconds: 1,
        ..limits()
    };
    let report = call("hang", 0, &limits);
    match &report.outcome {
        WorkerOutcome::TimedOut {
            limit, after_ms, ..
        } => {
            // The CPU limit tripped, before the wall limit: one CPU second
            // may take several wall seconds on a loaded machine, so the
            // bound is the wall limit, not a guess at the load.
            assert_eq!(*limit, TimeLimit::Cpu);
            assert!(*after_ms < limits.wall_ms, "after {after_ms} ms");
        }
        other => panic!("expected a CPU time-out, got {other:?}"),
    }
}

#[test]
fn unbounded_allocation_in_the_simulator_is_out_of_memory() {
    use_built_worker();
    let limits = WorkerLimits {
        address_space_bytes: 1 << 30,
        ..limits()
    };
    let start = Instant::now();
    let report = run_job_with(
        &WorkerCommand::locate().unwrap(),
        &job("__selftest:alloc", 0),
        &limits,
    );
    match &report.outcome {
        WorkerOutcome::OutOfMemory { stderr_tail } => {
            assert!(
                stderr_tail.contains("memory allocation of"),
                "{stderr_tail}"
            )
        }
        other => panic!("expected OutOfMemory, got {other:?}"),
    }
    assert!(start.elapsed() < Duration::from_secs(10));
}

#[test]
fn unbounded_allocation_in_a_kernel_is_a_failure_not_a_hang() {
    let limits = WorkerLimits {
        address_space_bytes: 1 << 30,
        ..limits()
    };
    let start = Instant::now();
    let report = call("alloc", 0, &limits);
    // `new` throws std::bad_alloc, which no C++ frame catches here: the
    // process aborts when the exception reaches Rust.
    match &report.outcome {
        WorkerOutcome::Crashed { signal, .. } => assert_eq!(*signal, libc::SIGABRT),
        WorkerOutcome::OutOfMemory { .. } => {}
        other => panic!("expected a crash, got {other:?}"),
    }
    assert!(start.elapsed() < Duration::from_secs(10));
}

#[test]
fn writing_a_100_mb_file_is_stopped_by_the_file_size_limit() {
    let report = call("writefile", 0, &limits());
    match &report.outcome {
        WorkerOutcome::Crashed {
            signal,
            signal_name,
            ..
        } => {
            assert_eq!(*signal, libc::SIGXFSZ);
            assert_eq!(signal_name, "SIGXFSZ");
        }
        other => panic!("expected SIGXFSZ, got {other:?}"),
    }
    assert_eq!(
        report.outcome.summary(),
        "crashed: wrote a file larger than the limit (SIGXFSZ)"
    );
}

#[test]
fn no_network_when_isolation_is_available() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let report = call("net", u64::from(port), &limits());
    let rc = returned(&report);
    if report.sandbox.network_isolated {
        // A fresh network namespace: loopback is down.
        assert_eq!(
            rc,
            i64::from(libc::ENETUNREACH),
            "connect returned errno {rc}"
        );
        let accepted = listener.accept();
        assert!(
            accepted.is_err(),
            "the worker reached the parent's listener"
        );
    } else {
        eprintln!("network isolation not available on this machine: connect returned {rc}");
        assert_eq!(rc, 0);
    }
}

#[test]
fn a_fork_bomb_is_contained() {
    let report = call("fork", 0, &limits());
    let started = returned(&report);
    if report.sandbox.processes_blocked {
        assert_eq!(
            started, 0,
            "fork succeeded {started} times under the filter"
        );
    } else {
        eprintln!("seccomp not available: {started} forks, killed with the process group");
    }
    // Threads are still allowed.
    let report = call("thread", 21, &limits());
    assert_eq!(returned(&report), 42);
}

#[test]
fn a_kernel_that_exits_is_reported_as_exited() {
    let report = call("exit", 0, &limits());
    assert!(
        matches!(report.outcome, WorkerOutcome::Exited { code: 3, .. }),
        "{:?}",
        report.outcome
    );
}

#[test]
fn lots_of_output_does_not_block_and_only_the_tail_is_kept() {
    let limits = WorkerLimits {
        capture_bytes: 4096,
        ..limits()
    };
    let report = call("print", 0, &limits);
    assert_eq!(returned(&report), 1);
    assert!(
        report.stdout_tail.ends_with("END-OF-STDOUT\n"),
        "{}",
        &report.stdout_tail[..100]
    );
    assert!(
        report.stdout_tail.starts_with("[... "),
        "tail not marked as cut"
    );
    assert!(report.stdout_tail.len() < 4096 + 64);
    assert!(report.stderr_tail.len() < 4096 + 64);
}

#[test]
fn the_environment_is_cleared_and_the_work_dir_is_private_and_removed() {
    let report = call("env", 0, &limits());
    eprintln!("worker round trip for a trivial job: {} ms", report.wall_ms);
    // PATH, HOME, TMPDIR, LC_ALL, MALLOC_ARENA_MAX and the result and
    // tensor arena fd variables.
    assert_eq!(returned(&report), 7);
}

/// An echo job: one float32 input holding `input`, one output of the same
/// size filled with `fill`.
fn echo_job(input: &[u8], fill: u8) -> LaunchJob {
    let tensor = |data: Vec<u8>| JobTensor {
        dtype: Dtype::Float32,
        shape: vec![(input.len() / 4) as i64],
        data,
    };
    let mut job = job("__selftest:echo", 0);
    job.inputs = vec![tensor(input.to_vec())];
    job.outputs = vec![tensor(vec![fill; input.len()])];
    job
}

#[test]
fn large_tensors_round_trip() {
    use_built_worker();
    let len = 32 << 20;
    let input: Vec<u8> = (0..len).map(|i| (i * 31 % 251) as u8).collect();
    let job = echo_job(&input, 0xFF);
    let start = Instant::now();
    let outcome = run_job(&job, &limits());
    let took = start.elapsed();
    match outcome {
        WorkerOutcome::Finished(output) => {
            assert_eq!(output.outputs.len(), 1);
            assert!(
                output.outputs[0] == input,
                "32 MB tensor changed on the way"
            );
        }
        other => panic!("expected Finished, got {other:?}"),
    }
    eprintln!("64 MB to the worker and 32 MB back: {took:?}");
    assert!(took < Duration::from_secs(5), "took {took:?}");
}

#[test]
fn runtime_failures_and_simulator_panics_are_data() {
    use_built_worker();
    match run_job(&job("__selftest:fail", 0), &limits()) {
        WorkerOutcome::Failed(LaunchFailure::Fault { block, message, .. }) => {
            assert_eq!(block, 0);
            assert_eq!(message, "self-test fault");
        }
        other => panic!("expected Failed, got {other:?}"),
    }
    match run_job(&job("__selftest:panic", 0), &limits()) {
        WorkerOutcome::WorkerError { message } => {
            assert_eq!(message, "the simulator panicked: self-test panic")
        }
        other => panic!("expected WorkerError, got {other:?}"),
    }
    match run_job(&job("__selftest:nonsense", 0), &limits()) {
        WorkerOutcome::WorkerError { message } => {
            assert!(message.contains("unknown self-test"), "{message}")
        }
        other => panic!("expected WorkerError, got {other:?}"),
    }
}

#[test]
fn a_missing_worker_is_a_worker_error() {
    let command = WorkerCommand {
        program: "/nonexistent/ascendopt-worker".into(),
        args: vec![],
    };
    let report = run_job_with(&command, &job("__selftest:echo", 0), &limits());
    match report.outcome {
        WorkerOutcome::WorkerError { message } => {
            assert!(message.contains("cannot start the worker"), "{message}")
        }
        other => panic!("expected WorkerError, got {other:?}"),
    }
}

#[test]
fn the_worker_refuses_to_run_outside_the_protocol() {
    let out = Command::new(env!("CARGO_BIN_EXE_ascendopt-worker"))
        .env_remove("ASCENDOPT_WORKER_RESULT_FD")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(86));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("is started by it"), "{stderr}");
}

/// The whole path: build ops/add_custom with `build`, run it through the
/// worker with `launch::run` (tiling from the host library, kernel on every
/// block), and check z = x + y on a shape with a tail.
#[test]
fn add_custom_builds_and_runs_in_the_worker() {
    use ascendopt_sim::build::{build, BuildCache, BuildRequest, Toolchain};
    use_built_worker();
    let op_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ops/add_custom");
    let cache_dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("worker-e2e-cache-{}", std::process::id()));
    let req = BuildRequest::for_op_dir(&op_dir, Toolchain::from_env()).unwrap();
    let built = build(&req, &BuildCache::at(&cache_dir)).unwrap();

    let n = 3 * 1024 + 5;
    let x: Vec<f32> = (0..n).map(|i| i as f32 * 0.5 - 700.0).collect();
    let y: Vec<f32> = (0..n).map(|i| 1.0 / (i as f32 + 1.0)).collect();
    let tensor = |v: &[f32]| JobTensor {
        dtype: Dtype::Float32,
        shape: vec![v.len() as i64],
        data: v.iter().flat_map(|f| f.to_le_bytes()).collect(),
    };
    let mut job = job("add_custom", 11);
    job.host_lib = built.host_lib.clone();
    job.knobs = built.host_knobs.clone();
    job.kernel_lib = built.kernel_lib.clone();
    job.op_type = Some("AddCustom".into());
    job.inputs = vec![tensor(&x), tensor(&y)];
    job.outputs = vec![JobTensor {
        dtype: Dtype::Float32,
        shape: vec![n as i64],
        data: vec![0xFF; n * 4],
    }];
    let outcome = run_job(&job, &limits());
    let _ = std::fs::remove_dir_all(&cache_dir);
    let output = match outcome {
        WorkerOutcome::Finished(output) => output,
        other => panic!("expected Finished, got {}: {other:?}", other.summary()),
    };
    assert!(output.tiling.block_dim >= 1);
    assert!(!output.trace.blocks.is_empty());
    let z: Vec<f32> = output.outputs[0]
        .chunks(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    assert_eq!(z.len(), n);
    for i in 0..n {
        assert_eq!(z[i].to_bits(), (x[i] + y[i]).to_bits(), "z[{i}]");
    }
}

#[test]
fn launches_with_the_same_sizes_each_see_their_own_tensors() {
    // The parent keeps a launch's tensor arena for the next launch of the
    // same sizes: the second launch must see its own inputs, not the first's.
    use_built_worker();
    let len = 3 << 20;
    for fill in [7u8, 9, 7] {
        let input: Vec<u8> = (0..len).map(|i| (i % 251) as u8 ^ fill).collect();
        match run_job(&echo_job(&input, fill), &limits()) {
            WorkerOutcome::Finished(output) => {
                assert!(output.outputs[0] == input, "launch with fill {fill}")
            }
            other => panic!("{other:?}"),
        }
    }
}
