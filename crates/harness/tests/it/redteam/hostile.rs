//! Hostile kernels (issue 22): each attacks the judge a different way and
//! must end as a failed or refused evaluation whose message names the
//! cause, with the test process (the judge) unharmed.
//!
//! Two layers are attacked separately: the pipeline (static check first,
//! then the sealed worker), and the worker alone (`launch_unchecked`: the
//! kernel built and launched without the static check, to show that the
//! sandbox holds by itself).

use super::common::{cfg, device, package};
use super::{including, sub, ADD};
use ascendopt_device::{Device, RunOutcome};
use ascendopt_harness::pipeline::evaluate_package;
use ascendopt_harness::verdict::{RuntimeErrorKind, Verdict};
use std::path::Path;

/// The first case of the package with `edit` applied, launched on the
/// device without the static check.
fn launch_unchecked(edit: impl Fn(&str) -> String) -> RunOutcome {
    let (_d, pkg) = package(edit);
    let dev = device(20_000);
    let artifact = dev.build(&pkg).expect("the hostile kernel compiles");
    let case = &pkg.cases()[0];
    let prepared = ascendopt_harness::eval::prepare_case(&pkg, case, 3).unwrap();
    dev.run(&artifact, &prepared.request)
}

/// The launch was stopped by the sandbox for the system call `call`.
fn assert_stopped_for(outcome: &RunOutcome, call: &str) {
    let summary = outcome.summary();
    assert!(
        summary.contains("forbidden system call") && summary.contains(call),
        "expected a stop for {call}, got {summary}\n{outcome:?}"
    );
}

/// The verdict of the pipeline on the package with `edit`.
fn verdict(edit: impl Fn(&str) -> String) -> Verdict {
    let (_d, pkg) = package(edit);
    evaluate_package(&device(20_000), &pkg, 5, &cfg())
        .unwrap()
        .0
}

/// Refused by the static check with a finding that mentions `needle`.
fn assert_refused(v: &Verdict, needle: &str) {
    match v {
        Verdict::RejectedStatic { reason } => {
            assert!(reason.contains(needle), "{needle} not in: {reason}")
        }
        other => panic!("expected a static refusal naming {needle}, got {other:?}"),
    }
}

/// A failed evaluation (wrong outputs, or a run-time error that names its
/// cause), never a correct one.
fn assert_fails(v: &Verdict) {
    match v {
        Verdict::Incorrect { details } => assert!(details.mismatches > 0, "{v:?}"),
        Verdict::RuntimeError { message, .. } => assert!(!message.is_empty(), "{v:?}"),
        other => panic!("expected a failed evaluation, got {other:?}"),
    }
}

/// Our own pid as it appears outside the worker's namespaces.
fn me() -> u32 {
    std::process::id()
}

// --- The parent's memory and descriptors -------------------------------

#[test]
fn reads_the_parents_memory_through_proc() {
    let attack = |me: u32| {
        including(
            "fcntl.h",
            sub(
                ADD,
                Box::leak(
                    format!(
                        "{{ int fd = open(\"/proc/{me}/mem\", O_RDONLY); (void)fd; }} Add(zLocal, xLocal, yLocal, length);"
                    )
                    .into_boxed_str(),
                ),
            ),
        )
    };
    assert_refused(&verdict(attack(me())), "`open`");
    assert_stopped_for(&launch_unchecked(attack(me())), "openat");
}

#[test]
fn overwrites_the_golden_in_the_parents_memory() {
    // The golden lives in the judge's heap: a kernel that could write
    // /proc/<judge>/mem would plant its own answer there.
    let attack = |me: u32| {
        including(
            "fcntl.h",
            including(
                "unistd.h",
                sub(
                    ADD,
                    Box::leak(
                        format!(
                            "{{ int fd = open(\"/proc/{me}/mem\", O_RDWR); if (fd >= 0) {{ char z[64] = {{0}}; for (long a = 0x400000; a < 0x800000; a += 64) (void)pwrite(fd, z, 64, a); }} }} Duplicate(zLocal, (T)0, length);"
                        )
                        .into_boxed_str(),
                    ),
                ),
            ),
        )
    };
    assert_refused(&verdict(attack(me())), "`open`");
    assert_stopped_for(&launch_unchecked(attack(me())), "openat");
}

#[test]
fn corrupts_the_run_stores_wal_through_the_parents_descriptors() {
    use ascendopt_harness::store::RunStore;
    // A run store open in this process, in WAL mode: its descriptors are
    // ours, /proc/<us>/fd/<n> would reach them.
    let db = tempfile::tempdir().unwrap();
    let path = db.path().join("runs.sqlite");
    let store = RunStore::open(&path).unwrap();
    let run = store.create_run(&serde_json::json!({"t": "wal"})).unwrap();
    let fds: Vec<String> = std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .flatten()
        .filter(|e| std::fs::read_link(e.path()).is_ok_and(|t| t.starts_with(db.path())))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!fds.is_empty(), "the store holds no descriptor");
    let code: &'static str = Box::leak(
        format!(
            "{{ const int fds[] = {{{}}}; for (int n : fds) {{ char p[64]; snprintf(p, sizeof p, \"/proc/{}/fd/%d\", n); int fd = open(p, O_WRONLY); if (fd >= 0) (void)write(fd, \"garbage!\", 8); }} }} Add(zLocal, xLocal, yLocal, length);",
            fds.join(", "),
            me()
        )
        .into_boxed_str(),
    );
    let attack = || {
        including(
            "cstdio",
            including("fcntl.h", including("unistd.h", sub(ADD, code))),
        )
    };
    assert_refused(&verdict(attack()), "`open`");
    assert_stopped_for(&launch_unchecked(attack()), "openat");
    // The store still works and reopens with its run.
    let again = RunStore::open(&path).unwrap();
    assert!(again.evaluations(run, "add_custom").unwrap().is_empty());
    drop(store);
}

#[test]
fn reads_the_parents_memory_with_process_vm_readv() {
    let code: &'static str = Box::leak(
        format!(
            "{{ char b[8]; struct iovec l = {{b, 8}}, r = {{(void*)0x400000, 8}}; (void)process_vm_readv({}, &l, 1, &r, 1, 0); }} Add(zLocal, xLocal, yLocal, length);",
            me()
        )
        .into_boxed_str(),
    );
    assert_refused(
        &verdict(including("sys/uio.h", sub(ADD, code))),
        "process_vm_readv",
    );
    assert_stopped_for(
        &launch_unchecked(including("sys/uio.h", sub(ADD, code))),
        "process_vm_readv",
    );
}

#[test]
fn lists_the_parents_descriptors() {
    let code = "{ DIR* d = opendir(\"/proc/self/../1/fd\"); (void)d; } Add(zLocal, xLocal, yLocal, length);";
    assert_refused(&verdict(including("dirent.h", sub(ADD, code))), "opendir");
    assert_stopped_for(
        &launch_unchecked(including("dirent.h", sub(ADD, code))),
        "openat",
    );
}

#[test]
fn writes_garbage_into_every_descriptor_it_might_have() {
    // The parent's run store, build cache and pipes are not among the
    // worker's descriptors; what it has (its own pipes) only spoils its
    // own reply. The store and the judge are unharmed.
    use ascendopt_harness::ledger::{BudgetConfig, Ledger};
    use ascendopt_harness::pipeline::evaluate;
    use ascendopt_harness::store::{RunStore, Stage};
    let code = "for (int fd = 3; fd < 256; fd++) { (void)write(fd, \"garbage\", 7); } Add(zLocal, xLocal, yLocal, length);";
    let (_d, pkg) = package(including("unistd.h", sub(ADD, code)));
    let db = tempfile::tempdir().unwrap();
    let store = RunStore::open(&db.path().join("runs.sqlite")).unwrap();
    let run = store.create_run(&serde_json::json!({"t": "fds"})).unwrap();
    let mut ledger = Ledger::open(
        &store,
        run,
        "add_custom",
        "1",
        BudgetConfig {
            rewind: 0,
            online: 2,
        },
    )
    .unwrap();
    let dev = device(20_000);
    let e = evaluate(&dev, &store, &mut ledger, run, Stage::Online, &pkg, &cfg()).unwrap();
    assert_refused(&e.verdict, "`write`");
    // Without the static check: the worker's own reply pipe is all it
    // reaches; the launch fails, the judge goes on.
    let outcome = launch_unchecked(including("unistd.h", sub(ADD, code)));
    assert!(!matches!(outcome, RunOutcome::Finished(_)), "{outcome:?}");
    // The store is intact and holds the evaluation.
    let store = RunStore::open(&db.path().join("runs.sqlite")).unwrap();
    assert_eq!(store.evaluations(run, "add_custom").unwrap().len(), 1);
}

// --- Signals and processes ---------------------------------------------

#[test]
fn kills_the_parent() {
    let code: &'static str = Box::leak(
        format!(
            "(void)kill({}, SIGKILL); (void)kill(getppid(), SIGKILL); Add(zLocal, xLocal, yLocal, length);",
            me()
        )
        .into_boxed_str(),
    );
    assert_refused(&verdict(including("csignal", sub(ADD, code))), "`kill`");
    assert_stopped_for(
        &launch_unchecked(including("csignal", sub(ADD, code))),
        "kill",
    );
}

#[test]
fn stops_the_parent() {
    let code: &'static str = Box::leak(
        format!(
            "(void)kill({}, SIGSTOP); Add(zLocal, xLocal, yLocal, length);",
            me()
        )
        .into_boxed_str(),
    );
    assert_stopped_for(
        &launch_unchecked(including("csignal", sub(ADD, code))),
        "kill",
    );
}

#[test]
fn signals_its_process_group() {
    let code = "(void)kill(0, SIGTERM); Add(zLocal, xLocal, yLocal, length);";
    assert_stopped_for(
        &launch_unchecked(including("csignal", sub(ADD, code))),
        "kill",
    );
}

#[test]
fn execs_a_shell_through_a_builtin() {
    let code = "(void)__builtin_execl(\"/bin/sh\", \"sh\", \"-c\", \"true\", (char*)0); Add(zLocal, xLocal, yLocal, length);";
    assert_refused(&verdict(sub(ADD, code)), "__builtin_execl");
    assert_stopped_for(&launch_unchecked(sub(ADD, code)), "execve");
}

#[test]
fn traces_the_parent() {
    let code: &'static str = Box::leak(
        format!(
            "(void)ptrace(PTRACE_ATTACH, {}, 0, 0); Add(zLocal, xLocal, yLocal, length);",
            me()
        )
        .into_boxed_str(),
    );
    assert_refused(
        &verdict(including("sys/ptrace.h", sub(ADD, code))),
        "ptrace",
    );
    assert_stopped_for(
        &launch_unchecked(including("sys/ptrace.h", sub(ADD, code))),
        "ptrace",
    );
}

#[test]
fn opens_a_socket() {
    let code = "(void)socket(2, 1, 0); Add(zLocal, xLocal, yLocal, length);";
    assert_refused(
        &verdict(including("sys/socket.h", sub(ADD, code))),
        "socket",
    );
    assert_stopped_for(
        &launch_unchecked(including("sys/socket.h", sub(ADD, code))),
        "socket",
    );
}

#[test]
fn works_in_a_thread_of_its_own() {
    let code = "{ pthread_t t; pthread_create(&t, nullptr, [](void*) -> void* { return nullptr; }, nullptr); } Add(zLocal, xLocal, yLocal, length);";
    assert_refused(
        &verdict(including("pthread.h", sub(ADD, code))),
        "pthread_create",
    );
}

// --- Files ---------------------------------------------------------------

#[test]
fn writes_a_file_outside_its_folder() {
    let target = std::env::temp_dir().join(format!("redteam-pwned-{}", me()));
    let code: &'static str = Box::leak(
        format!(
            "{{ FILE* f = fopen(\"{}\", \"w\"); if (f) fputs(\"x\", f); }} Add(zLocal, xLocal, yLocal, length);",
            target.display()
        )
        .into_boxed_str(),
    );
    assert_refused(&verdict(including("cstdio", sub(ADD, code))), "fopen");
    assert_stopped_for(
        &launch_unchecked(including("cstdio", sub(ADD, code))),
        "openat",
    );
    assert!(!target.exists(), "{} was written", target.display());
}

#[test]
fn rewrites_the_build_cache_from_a_constructor() {
    // A constructor runs while the library loads, before the launch is
    // sealed; the cache is not in the worker's view (namespaces) or not
    // writable (Landlock), so the rename fails and nothing changes.
    let dev = device(20_000);
    let (_h, honest) = package(|c| c.to_string());
    let honest_built = dev.build(&honest).unwrap();
    let before = std::fs::read(&honest_built.kernel_lib).unwrap();
    let code: &'static str = Box::leak(
        format!(
            "#include <cstdio>\n__attribute__((constructor)) static void poison() {{ std::rename(\"{lib}\", \"{lib}.gone\"); FILE* f = std::fopen(\"{lib}\", \"w\"); if (f) std::fclose(f); }}\n",
            lib = honest_built.kernel_lib.display()
        )
        .into_boxed_str(),
    );
    assert_refused(&verdict(move |c: &str| format!("{code}{c}")), "constructor");
    let outcome = launch_unchecked(move |c: &str| format!("{code}{c}"));
    assert!(matches!(outcome, RunOutcome::Finished(_)), "{outcome:?}");
    assert_eq!(std::fs::read(&honest_built.kernel_lib).unwrap(), before);
    assert!(!Path::new(&format!("{}.gone", honest_built.kernel_lib.display())).exists());
}

#[test]
fn a_cache_entry_replaced_behind_the_judges_back_is_rebuilt() {
    // Another library renamed over a cached kernel (what the earlier
    // attack did from inside the worker) is a cache miss, never reused.
    let dev = device(20_000);
    let (_h, honest) = package(|c| c.to_string());
    let (_z, zeros) = package(sub(ADD, "Duplicate(zLocal, (T)0, length);"));
    let honest_built = dev.build(&honest).unwrap();
    let zeros_built = dev.build(&zeros).unwrap();
    let tmp = honest_built.kernel_lib.with_extension("swap");
    std::fs::copy(&zeros_built.kernel_lib, &tmp).unwrap();
    std::fs::rename(&tmp, &honest_built.kernel_lib).unwrap();
    let v = evaluate_package(&dev, &honest, 5, &cfg()).unwrap().0;
    assert!(matches!(v, Verdict::Correct { .. }), "{v:?}");
}

#[test]
fn includes_a_file_from_outside_the_operator() {
    assert_refused(
        &verdict(|c: &str| format!("#include \"/etc/passwd\"\n{c}")),
        "absolute",
    );
    assert_refused(
        &verdict(|c: &str| format!("#include \"../../op.toml\"\n{c}")),
        "not a C/C++ header",
    );
}

// --- Macro, spelling and attribute tricks ------------------------------

#[test]
fn hides_a_constructor_in_a_using_attribute() {
    let v = verdict(|c: &str| format!("[[using gnu: constructor]] static void early() {{}}\n{c}"));
    assert_refused(&v, "constructor");
}

#[test]
fn hides_a_call_behind_a_namespace_alias() {
    let v = verdict(including("cstdlib", |c: &str| {
        format!(
            "namespace sysns = std;\n{}",
            sub(
                ADD,
                "(void)sysns::system(\"id\"); Add(zLocal, xLocal, yLocal, length);"
            )(c)
        )
    }));
    assert_refused(&v, "`system`");
}

#[test]
fn hides_a_call_in_parentheses() {
    let v = verdict(including(
        "cstdlib",
        sub(
            ADD,
            "(void)(system)(\"id\"); Add(zLocal, xLocal, yLocal, length);",
        ),
    ));
    assert_refused(&v, "`system`");
}

#[test]
fn declares_extern_c_through_a_macro() {
    let v = verdict(|c: &str| {
        format!(
            "#define EXT extern \"C\"\nEXT int system(const char*);\n{}",
            sub(
                ADD,
                "(void)system(\"id\"); Add(zLocal, xLocal, yLocal, length);"
            )(c)
        )
    });
    assert_refused(&v, "`system`");
}

#[test]
fn pastes_a_forbidden_name_together() {
    let v = verdict(including("unistd.h", |c: &str| {
        format!(
            "#define CAT(a, b) a##b\n{}",
            sub(
                ADD,
                "(void)CAT(sym, linkat)(\"a\", 0, \"b\"); Add(zLocal, xLocal, yLocal, length);"
            )(c)
        )
    }));
    assert_refused(&v, "symlinkat");
}

#[test]
fn calls_functions_no_list_names() {
    for (header, call, name) in [
        ("unistd.h", "(void)pread64(0, nullptr, 0, 0);", "pread64"),
        ("unistd.h", "(void)pwrite64(1, \"x\", 1, 0);", "pwrite64"),
        (
            "glob.h",
            "{ glob_t g; (void)glob(\"/*\", 0, nullptr, &g); }",
            "glob",
        ),
    ] {
        let code: &'static str =
            Box::leak(format!("{call} Add(zLocal, xLocal, yLocal, length);").into_boxed_str());
        assert_refused(&verdict(including(header, sub(ADD, code))), name);
    }
}

#[test]
fn an_unlisted_function_is_caught_by_the_librarys_imports() {
    // `sethostname` is on no list of the token rules; the kernel library
    // imports it, and that is refused.
    let v = verdict(including(
        "unistd.h",
        sub(
            ADD,
            "(void)sethostname(\"x\", 1); Add(zLocal, xLocal, yLocal, length);",
        ),
    ));
    assert_refused(&v, "imports `sethostname`");
}

#[test]
fn hides_a_static_in_a_macro_to_skip_work() {
    // Blocks share the process: the first to arrive skips nothing, the
    // others skip their work. A fresh process per launch holds no state
    // from the last one; within a launch, the unwritten outputs show.
    let v = verdict(|c: &str| {
        format!(
            "#define KEEP static\n{}",
            sub(
                ADD,
                "{ KEEP int seen = 0; if (seen++ > 0) return; } Add(zLocal, xLocal, yLocal, length);"
            )(c)
        )
    });
    // The blocks that skip leave their outputs unwritten, or (returning
    // between DeQue and EnQue) their copy-out waits for ever.
    assert_fails(&v);
}

#[test]
fn a_variable_template_keeps_state_across_blocks() {
    let v = verdict(|c: &str| {
        format!(
            "template <typename U> U g_calls = 0;\n{}",
            sub(
                ADD,
                "if (g_calls<int>++ > 3) return; Add(zLocal, xLocal, yLocal, length);"
            )(c)
        )
    });
    assert_fails(&v);
}

#[test]
fn overwrites_its_own_inputs() {
    // Zeros out, and zeros written over both inputs in GM: a judge that
    // took the golden from the inputs after the run would see 0 + 0 = 0.
    // The golden comes from the judge's own copy of the inputs.
    let zeros = sub(ADD, "Duplicate(zLocal, (T)0, length);");
    let spread = sub(
        "            DataCopy(zGm[offset], zLocal, length);",
        "            DataCopy(zGm[offset], zLocal, length);\n            DataCopy(xGm[offset], zLocal, length);\n            DataCopy(yGm[offset], zLocal, length);",
    );
    let spread_pad = sub(
        "            DataCopyPad(zGm[offset], zLocal, copyParams);",
        "            DataCopyPad(zGm[offset], zLocal, copyParams);\n            DataCopyPad(xGm[offset], zLocal, copyParams);\n            DataCopyPad(yGm[offset], zLocal, copyParams);",
    );
    let v = verdict(move |c: &str| spread_pad(&spread(&zeros(c))));
    assert_incorrect_against_golden(&v);
}

fn assert_incorrect_against_golden(v: &Verdict) {
    match v {
        Verdict::Incorrect { details } => assert!(details.mismatches > 0, "{v:?}"),
        other => panic!("expected wrong outputs, got {other:?}"),
    }
}

// --- Faster than physics and shapes ------------------------------------

#[test]
fn does_the_work_in_plain_cpp_below_the_roofline_floor() {
    // z = x + y in a scalar loop on the GM pointers: no instruction of
    // the timing model, so the measured latency is the launch head alone.
    let v = verdict(sub(
        "        uint32_t tileNum = (blockLength + tileLength - 1) / tileLength;",
        "        { __gm__ T* px = xGm.GetPhyAddr(); __gm__ T* py = yGm.GetPhyAddr(); __gm__ T* pz = zGm.GetPhyAddr();\n          for (uint32_t k = 0; k < blockLength; k++) { pz[k] = px[k] + py[k]; }\n          return; }\n        uint32_t tileNum = (blockLength + tileLength - 1) / tileLength;",
    ));
    match &v {
        Verdict::RuntimeError { kind, message, .. } => {
            assert_eq!(*kind, RuntimeErrorKind::FasterThanHardware, "{v:?}");
            assert!(
                message.contains("faster than the hardware limit: the timing model missed work"),
                "{message}"
            );
        }
        // Once the timing model charges the scalar work itself, the kernel
        // is merely slow: never faster than the honest one.
        Verdict::Correct { latency, .. } => {
            let honest = verdict(|c| c.to_string());
            let honest = honest.latency().unwrap().median_us;
            assert!(latency.median_us >= honest, "{latency:?} vs {honest}");
        }
        other => panic!("expected the hardware-limit guard, got {other:?}"),
    }
}

#[test]
fn is_right_only_on_the_listed_shapes() {
    // The listed cases have 4000 and 3003 elements: everything else is
    // left unwritten.
    use ascendopt_harness::fresh;
    let dev = device(20_000);
    let (_h, honest) = package(|c| c.to_string());
    let honest_built = dev.build(&honest).unwrap();
    let cases = fresh::validated(&dev, &honest, &honest_built, 9);
    assert!(!cases.is_empty(), "no fresh case for add_custom");
    let (_s, shaped) = package(sub(
        "        blockLength = static_cast<uint32_t>(length);",
        "        blockLength = static_cast<uint32_t>(length);\n        if (tiling.totalLength != 4000 && tiling.totalLength != 3003) { blockLength = 0; }",
    ));
    // Every listed case passes...
    let v = evaluate_package(&dev, &shaped, 5, &cfg()).unwrap().0;
    assert!(matches!(v, Verdict::Correct { .. }), "{v:?}");
    // ...the fresh shapes do not.
    let built = dev.build(&shaped).unwrap();
    let err = fresh::check(&dev, &shaped, &built, &cases, 9)
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("wrong on a shape it was not tuned for"),
        "{err}"
    );
    assert!(fresh::check(&dev, &honest, &honest_built, &cases, 9).is_ok());
}

// --- The build ---------------------------------------------------------

#[test]
fn a_compile_bomb_is_stopped_and_leaves_no_compiler_behind() {
    use ascendopt_sim::build::{build, BuildCache, BuildError, BuildRequest, Toolchain};
    use std::time::{Duration, Instant};
    // Exponential template instantiation: far beyond any time limit.
    let bomb = "template <int N> struct B { static constexpr long v = B<N - 1>::v + B<N - 2>::v + B<N - 3>::v; };\n\
                template <> struct B<0> { static constexpr long v = 1; };\n\
                template <> struct B<-1> { static constexpr long v = 1; };\n\
                template <> struct B<-2> { static constexpr long v = 1; };\n\
                template <int N> long f() { return B<N>::v + f<N - 1>(); }\n\
                template <> long f<0>() { return 0; }\n\
                long boom() { return f<4000>(); }\n";
    let (_d, pkg) = package(move |c: &str| format!("{bomb}{c}"));
    let cache = tempfile::tempdir().unwrap();
    let mut req = BuildRequest::for_op_dir(&pkg.dir, Toolchain::from_env()).unwrap();
    req.timeout = Duration::from_secs(3);
    let start = Instant::now();
    let err = build(&req, &BuildCache::at(cache.path())).unwrap_err();
    assert!(
        matches!(err, BuildError::Timeout { .. } | BuildError::Compile { .. }),
        "{err}"
    );
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "{:?}",
        start.elapsed()
    );
    // No cc1plus of this build is left (the whole group went).
    std::thread::sleep(Duration::from_millis(300));
    let dir = pkg.dir.display().to_string();
    let left: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let cmd = std::fs::read_to_string(e.path().join("cmdline")).ok()?;
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            let zombie = stat
                .rsplit_once(") ")
                .is_some_and(|(_, r)| r.starts_with('Z'));
            (!zombie && cmd.contains(&dir)).then(|| cmd.replace('\0', " "))
        })
        .collect();
    assert!(left.is_empty(), "left running: {left:?}");
}

// --- Process hygiene ---------------------------------------------------

/// Role of a child process started by a test below (env REDTEAM_ROLE).
fn role() -> Option<String> {
    std::env::var("REDTEAM_ROLE").ok()
}

/// The child of `a_blocked_worker_dies_with_a_killed_judge`: launches a
/// kernel that sleeps for ever, with an hour's time limit.
#[test]
#[ignore]
fn role_launch_a_blocked_worker() {
    if role().as_deref() != Some("blocked") {
        return;
    }
    let (_d, pkg) = package(including(
        "unistd.h",
        sub(
            ADD,
            "for (;;) { (void)usleep(1000000); } Add(zLocal, xLocal, yLocal, length);",
        ),
    ));
    let dev = device(3_600_000);
    let artifact = dev.build(&pkg).unwrap();
    let prepared = ascendopt_harness::eval::prepare_case(&pkg, &pkg.cases()[0], 3).unwrap();
    println!("launching");
    let _ = dev.run(&artifact, &prepared.request);
}

/// The full name of the role test `name` in this binary (this module's
/// path without the crate's), for `--exact`.
fn role_test(name: &str) -> String {
    let module = module_path!();
    let module = module.split_once("::").map_or(module, |(_, rest)| rest);
    format!("{module}::{name}")
}

#[test]
fn a_blocked_worker_dies_with_a_killed_judge() {
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            role_test("role_launch_a_blocked_worker").as_str(),
            "--ignored",
            "--nocapture",
        ])
        .env("REDTEAM_ROLE", "blocked")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    // Its worker: a process whose parent is the child.
    let start = Instant::now();
    let worker = loop {
        let found = std::fs::read_dir("/proc").unwrap().flatten().find_map(|e| {
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            let rest = stat.rsplit_once(") ")?.1;
            let ppid: u32 = rest.split_whitespace().nth(1)?.parse().ok()?;
            let cmd = std::fs::read_to_string(e.path().join("cmdline")).ok()?;
            (ppid == pid && cmd.contains("ascendopt-worker"))
                .then(|| e.file_name().to_string_lossy().into_owned())
        });
        if let Some(w) = found {
            break w;
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "no worker started"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    // Let it block, then kill the judge with SIGKILL.
    std::thread::sleep(Duration::from_millis(500));
    // SAFETY: signals our own child.
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    let _ = child.wait();
    let gone = |p: &str| {
        std::fs::read_to_string(format!("/proc/{p}/stat"))
            .map(|s| s.rsplit_once(") ").is_some_and(|(_, r)| r.starts_with('Z')))
            .unwrap_or(true)
    };
    let start = Instant::now();
    while !gone(&worker) {
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "worker {worker} outlived the killed judge"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The child of `a_second_process_on_one_out_folder_is_refused`: holds the
/// lock of REDTEAM_OUT until killed.
#[test]
#[ignore]
fn role_hold_the_out_lock() {
    if role().as_deref() != Some("lock") {
        return;
    }
    let dir = std::env::var("REDTEAM_OUT").unwrap();
    let _lock = ascendopt_harness::out_lock::lock(Path::new(&dir)).unwrap();
    println!("locked");
    std::thread::sleep(std::time::Duration::from_secs(600));
}

#[test]
fn a_second_process_on_one_out_folder_is_refused() {
    use ascendopt_harness::out_lock::{lock, OutLockError};
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let out = tempfile::tempdir().unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            role_test("role_hold_the_out_lock").as_str(),
            "--ignored",
            "--nocapture",
        ])
        .env("REDTEAM_ROLE", "lock")
        .env("REDTEAM_OUT", out.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    assert!(lines.any(|l| l.is_ok_and(|l| l.contains("locked"))));
    match lock(out.path()) {
        Err(OutLockError::Held { holder, .. }) => assert_eq!(holder, Some(child.id())),
        other => panic!("expected the folder to be held, got {other:?}"),
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(lock(out.path()).is_ok(), "released when its holder died");
}

#[test]
fn stale_worker_folders_are_cleaned() {
    // A folder of a worker whose process is gone (pid 999999999 is never
    // a process) disappears when this process starts its first worker.
    let stale = std::env::temp_dir().join("ascendopt-worker-999999999-0-1");
    std::fs::create_dir_all(stale.join("junk")).unwrap();
    // A new process, so that its first worker does the cleaning.
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            role_test("role_run_one_worker").as_str(),
            "--ignored",
        ])
        .env("REDTEAM_ROLE", "one")
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(!stale.exists(), "{} is still there", stale.display());
}

/// The child of `stale_worker_folders_are_cleaned`: runs one launch.
#[test]
#[ignore]
fn role_run_one_worker() {
    if role().as_deref() != Some("one") {
        return;
    }
    let outcome = launch_unchecked(|c| c.to_string());
    assert!(matches!(outcome, RunOutcome::Finished(_)), "{outcome:?}");
}
