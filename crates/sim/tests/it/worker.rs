//! The sandboxed worker, end to end: misbehaving C functions compiled with
//! g++ into a shared object are run through the worker's hidden
//! `__selftest:call:<symbol>` job, and the parent (this test process) must
//! turn each misbehaviour into the right `WorkerOutcome` and survive it.

use ascendopt_op::Dtype;
use ascendopt_sim::launch::{JobTensor, LaunchFailure, LaunchJob, Platform};
use ascendopt_sim::worker::{
    run_job, run_job_with, SandboxLevel, TimeLimit, WorkerCommand, WorkerLimits, WorkerOutcome,
    WorkerReport,
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
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/uio.h>
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
  return n;
}

// Reaching the parent (whose pid is the seed) once the launch is sealed.
extern "C" long t_kill_parent(unsigned long pid) { return kill((pid_t)pid, SIGKILL); }
extern "C" long t_stop_parent(unsigned long pid) { return kill((pid_t)pid, SIGSTOP); }
extern "C" long t_parent_mem(unsigned long pid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%lu/mem", pid);
  return open(path, O_RDONLY);
}
extern "C" long t_vm_read(unsigned long pid) {
  char buf[16];
  struct iovec local = {buf, sizeof buf}, remote = {(void*)0x400000, sizeof buf};
  return process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0);
}
extern "C" long t_ptrace(unsigned long pid) { return ptrace(PTRACE_ATTACH, (pid_t)pid, 0, 0); }
extern "C" long t_exec(unsigned long) { return execl("/bin/sh", "sh", "-c", "true", (char*)0); }
// Descriptors open in the worker: which of the first 1024.
extern "C" long t_fds(unsigned long) {
  long mask = 0;
  for (int fd = 0; fd < 1024; fd++) {
    if (fcntl(fd, F_GETFD) >= 0) {
      if (fd >= 62) return -fd;
      mask |= 1L << fd;
    }
  }
  return mask;
}
"#;

/// Libraries whose static constructors misbehave while the worker loads
/// them (before the launch is sealed; the namespaces, Landlock and the
/// loading filter hold then). The parent's pid reaches them as the value
/// of the host knobs variable; `t_ctor` returns what the constructor saw.
const CONSTRUCTORS: &str = r#"
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

static long result = -999;

static long parent() {
  const char* k = getenv("ASCENDOPT_HOST_KNOBS");
  return k ? atol(k) : 0;
}

extern "C" long t_ctor(unsigned long) { return result; }

#if defined(CTOR_PARENT_MEM)
__attribute__((constructor)) static void ctor() {
  char path[64];
  snprintf(path, sizeof path, "/proc/%ld/mem", parent());
  int fd = open(path, O_RDONLY);
  result = fd >= 0 ? 1 : -errno;
}
#elif defined(CTOR_PARENT_FDS)
__attribute__((constructor)) static void ctor() {
  char path[64];
  snprintf(path, sizeof path, "/proc/%ld/fd", parent());
  DIR* d = opendir(path);
  result = d ? 1 : -errno;
}
#elif defined(CTOR_KILL_PARENT)
__attribute__((constructor)) static void ctor() { result = kill((pid_t)parent(), SIGKILL); }
#elif defined(CTOR_EXEC)
__attribute__((constructor)) static void ctor() {
  result = execl("/bin/sh", "sh", "-c", "true", (char*)0);
}
#elif defined(CTOR_BIG_FILE)
__attribute__((constructor)) static void ctor() {
  FILE* f = fopen("big.bin", "wb");
  if (!f) { result = -errno; return; }
  static char buf[1 << 20];
  memset(buf, 7, sizeof buf);
  for (int i = 0; i < 100; i++) fwrite(buf, 1, sizeof buf, f);
  fclose(f);
  result = 100;
}
#elif defined(CTOR_WRITE_BESIDE)
// Writes a file next to the library itself (the build cache).
__attribute__((constructor)) static void ctor() {
  char path[4096];
  snprintf(path, sizeof path, "%s", __FILE__);
  char* slash = strrchr(path, '/');
  if (slash) strcpy(slash + 1, "poisoned.so");
  int fd = open(path, O_WRONLY | O_CREAT, 0644);
  result = fd >= 0 ? 1 : -errno;
}
#elif defined(CTOR_LIST_CACHE)
// Counts what the worker sees in its library's folder.
__attribute__((constructor)) static void ctor() {
  char path[4096];
  snprintf(path, sizeof path, "%s", __FILE__);
  char* slash = strrchr(path, '/');
  if (slash) *slash = 0;
  DIR* d = opendir(path);
  if (!d) { result = -errno; return; }
  long n = 0;
  while (struct dirent* e = readdir(d)) if (e->d_name[0] != '.') n++;
  closedir(d);
  result = n;
}
#endif
"#;

/// Compiles `source` with `defines` into `<name>.so` under cargo's
/// temporary directory for integration tests (written under a temporary
/// name and renamed into place, so test processes running at the same
/// time each see a complete file).
fn compile_lib(name: &str, source: &str, defines: &[&str]) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("worker-mischief");
    std::fs::create_dir_all(&dir).unwrap();
    let pid = std::process::id();
    // Same contents in every process, so replacing it is harmless.
    let src = dir.join(format!("{name}.cpp"));
    let tmp_src = dir.join(format!("{name}-{pid}.cpp.tmp"));
    std::fs::write(&tmp_src, source).unwrap();
    std::fs::rename(&tmp_src, &src).unwrap();
    let tmp = dir.join(format!("{name}-{pid}.so.tmp"));
    let lib = dir.join(format!("{name}.so"));
    let out = Command::new("g++")
        .args(["-std=c++17", "-O1", "-g1", "-fPIC", "-shared", "-pthread"])
        .args(defines.iter().map(|d| format!("-D{d}")))
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
}

/// The mischief library, compiled once per test process.
fn mischief_lib() -> &'static Path {
    static LIB: OnceLock<PathBuf> = OnceLock::new();
    LIB.get_or_init(|| compile_lib("libmischief", MISCHIEF, &[]))
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
        layout: None,
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

/// The outcome is a stop by the seccomp filter that names `call`.
fn assert_forbidden(report: &WorkerReport, call: &str) {
    match &report.outcome {
        WorkerOutcome::Crashed {
            signal_name,
            location,
            ..
        } => {
            assert_eq!(signal_name, "SIGSYS", "{:?}", report.outcome);
            let location = location.as_deref().unwrap_or("");
            assert!(
                location.starts_with(&format!("forbidden system call {call} ")),
                "{location:?}"
            );
            assert!(
                report.outcome.summary().contains("stopped by the sandbox"),
                "{}",
                report.outcome.summary()
            );
        }
        other => panic!("expected a stop naming {call}, got {other:?}"),
    }
}

#[test]
fn a_sealed_launch_cannot_open_files() {
    assert_forbidden(&call("writefile", 0, &limits()), "openat");
}

/// Runs `t_ctor` of the constructor library built with `define`; the
/// constructor gets this process's pid.
fn constructor(define: &str) -> WorkerReport {
    use_built_worker();
    let name = format!("libctor-{}", define.to_lowercase().replace('_', "-"));
    let lib = compile_lib(&name, CONSTRUCTORS, &[define]);
    let mut job = job("__selftest:call:t_ctor", 0);
    job.kernel_lib = lib.clone();
    job.host_lib = lib;
    job.knobs = vec![i64::from(std::process::id())];
    run_job_with(&WorkerCommand::locate().unwrap(), &job, &limits())
}

#[test]
fn a_constructor_writing_a_100_mb_file_is_stopped_by_the_file_size_limit() {
    let report = constructor("CTOR_BIG_FILE");
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
fn a_constructor_cannot_read_the_parents_memory_or_descriptors() {
    for define in ["CTOR_PARENT_MEM", "CTOR_PARENT_FDS"] {
        let report = constructor(define);
        let rc = returned(&report);
        assert!(rc < 0, "{define}: the constructor opened it ({rc})");
    }
}

#[test]
fn a_constructor_cannot_signal_the_parent_or_exec() {
    assert_forbidden(&constructor("CTOR_KILL_PARENT"), "kill");
    assert_forbidden(&constructor("CTOR_EXEC"), "execve");
}

#[test]
fn a_constructor_sees_and_writes_nothing_of_the_build_cache() {
    let report = constructor("CTOR_WRITE_BESIDE");
    let written = returned(&report);
    let listed = returned(&constructor("CTOR_LIST_CACHE"));
    // A build cache under /tmp lies inside the worker's private scratch
    // tmpfs in its view: a file written beside the library lands in that
    // scratch (gone with the worker), not in the real cache, whose
    // untouched state the last assertion checks.
    let in_scratch = mischief_lib().starts_with("/tmp");
    match report.sandbox.level {
        Some(SandboxLevel::Namespaces) => {
            if !in_scratch {
                assert_eq!(written, -i64::from(libc::EROFS));
            }
            // Its folder holds only its own library in the worker's view.
            assert_eq!(listed, 1);
        }
        Some(SandboxLevel::Landlock) => {
            assert_eq!(written, -i64::from(libc::EACCES));
            assert_eq!(listed, -i64::from(libc::EACCES));
        }
        other => eprintln!("{other:?}: wrote {written}, listed {listed}"),
    }
    let beside = mischief_lib().with_file_name("poisoned.so");
    assert!(!beside.exists() || report.sandbox.level == Some(SandboxLevel::Basic));
}

#[test]
fn a_sealed_launch_cannot_reach_the_parent() {
    let me = u64::from(std::process::id());
    for (name, call_name) in [
        ("kill_parent", "kill"),
        ("stop_parent", "kill"),
        ("parent_mem", "openat"),
        ("vm_read", "process_vm_readv"),
        ("ptrace", "ptrace"),
        ("exec", "execve"),
    ] {
        let report = call(name, me, &limits());
        assert_forbidden(&report, call_name);
    }
}

#[test]
fn the_worker_holds_only_the_protocols_descriptors() {
    // stdin, stdout, stderr and the result pipe (3); nothing of the parent.
    let mask = returned(&call("fds", 0, &limits()));
    assert_eq!(mask & !0b1_0000, 0b1111, "open descriptors {mask:#b}");
}

#[test]
fn no_network_when_isolation_is_available() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let report = call("net", u64::from(port), &limits());
    // No socket at all once sealed (and a fresh network namespace, whose
    // loopback is down, where namespaces are available).
    assert_forbidden(&report, "socket");
    assert!(
        listener.accept().is_err(),
        "the worker reached the parent's listener"
    );
}

#[test]
fn a_fork_bomb_is_contained() {
    let report = call("fork", 0, &limits());
    if report.sandbox.processes_blocked {
        assert_forbidden(&report, "clone");
    } else {
        eprintln!("seccomp not available: {:?}", report.outcome);
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
    // PATH, HOME, TMPDIR, LC_ALL, MALLOC_ARENA_MAX, MALLOC_TRIM_THRESHOLD_
    // and the result, tensor arena and exit-status fd variables.
    assert_eq!(returned(&report), 9);
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

/// Root (CI, this machine) tests the root path above; the same tests run
/// again here as uid 65534 through `setpriv`, which exercises the user
/// namespace path an ordinary user gets.
#[test]
fn the_sandbox_holds_for_an_unprivileged_user_too() {
    use std::os::unix::fs::PermissionsExt;
    // SAFETY: a plain query.
    if unsafe { libc::geteuid() } != 0 || std::env::var_os("WORKER_TEST_NESTED").is_some() {
        return;
    }
    let Ok(setpriv) = which("setpriv") else {
        eprintln!("setpriv not found: the unprivileged path is not tested here");
        return;
    };
    let exe = std::env::current_exe().unwrap();
    let world_executable =
        |p: &Path| std::fs::metadata(p).is_ok_and(|m| m.permissions().mode() & 0o005 == 0o005);
    if !world_executable(&exe) {
        eprintln!("{} is not executable by others: skipped", exe.display());
        return;
    }
    // The nested run compiles its libraries into the same scratch folder.
    let dir = mischief_lib().parent().unwrap().to_path_buf();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let out = Command::new(setpriv)
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(&exe)
        // The sandbox's own tests (the rest does not depend on the uid).
        .args([
            "--test-threads=1",
            "sealed",
            "constructor",
            "descriptors",
            "environment",
            "network",
            "fork_bomb",
            "segfault",
        ])
        .env("WORKER_TEST_NESTED", "1")
        .env("ASCENDOPT_WORKER", env!("CARGO_BIN_EXE_ascendopt-worker"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "as uid 65534:\n{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("test result: ok"), "{text}");
}

/// The path of `program` on PATH.
fn which(program: &str) -> Result<PathBuf, ()> {
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
        .ok_or(())
}
