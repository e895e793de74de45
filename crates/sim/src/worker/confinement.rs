//! Which sandbox [`Level`] this system allows, found by the first workers
//! of the process and remembered, and the one line that says so when it
//! is not the strongest.
//!
//! A level whose setup fails (the clone of the namespaces refused, a mount
//! refused, no Landlock) is not tried again by this process; the message
//! naming what failed and what the workers get instead is printed once, on
//! stderr, the first time.

use super::sandbox::{requested_level, Level};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::Mutex;

/// The strongest level not known to fail (index into [`LEVELS`]); 255:
/// not decided yet.
static FLOOR: AtomicU8 = AtomicU8::new(u8::MAX);
/// Whether the weaker confinement was reported.
static SAID: AtomicBool = AtomicBool::new(false);
/// Why the stronger levels failed, for [`describe`].
static REASONS: Mutex<Vec<String>> = Mutex::new(Vec::new());

const LEVELS: [Level; 3] = [Level::Namespaces, Level::Landlock, Level::Basic];

fn index(level: Level) -> u8 {
    LEVELS.iter().position(|l| *l == level).unwrap_or(0) as u8
}

/// The level the next worker starts with.
pub(crate) fn start_level() -> Level {
    let floor = FLOOR.load(Ordering::Relaxed);
    if floor == u8::MAX {
        let requested = index(requested_level());
        let _ = FLOOR.compare_exchange(u8::MAX, requested, Ordering::Relaxed, Ordering::Relaxed);
    }
    LEVELS[FLOOR.load(Ordering::Relaxed).min(2) as usize]
}

/// `from` failed (`reason`); workers use `to` from now on.
pub(crate) fn fell_back(from: Level, to: Level, reason: &str) {
    FLOOR.fetch_max(index(to), Ordering::Relaxed);
    if let Ok(mut reasons) = REASONS.lock() {
        reasons.push(format!("{}: {reason}", from.name()));
    }
}

/// A worker started at `level`: the first one below the strongest says so.
pub(crate) fn started(level: Level) {
    if level == Level::Namespaces || SAID.swap(true, Ordering::Relaxed) {
        return;
    }
    if level == Level::Basic {
        // A worker of our own uid could otherwise open /proc/<us>/mem.
        // SAFETY: a flag of this process.
        unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) };
    }
    eprintln!("warning: {}", describe_level(level));
}

/// One line on the confinement of the workers started so far (or the one
/// the next worker will try).
pub fn describe() -> String {
    describe_level(start_level())
}

fn describe_level(level: Level) -> String {
    let why = REASONS.lock().map(|r| r.join("; ")).unwrap_or_default();
    let why = if why.is_empty() {
        if requested_level() != Level::Namespaces {
            "ASCENDOPT_SANDBOX asks for it".to_string()
        } else {
            String::new()
        }
    } else {
        format!("stronger levels failed: {why}")
    };
    match level {
        Level::Namespaces => "sandbox: namespaces (own user, PID, mount, IPC and network \
             namespaces; read-only view of the system folders and a private /tmp; uid 65534; \
             seccomp allow-list; no_new_privs; resource limits; parent-death signal)"
            .to_string(),
        Level::Landlock => format!(
            "sandbox: landlock only ({why}): kernels run without namespaces, with a Landlock \
             file-system domain (read-only system folders, writable private work folder), \
             seccomp, no_new_privs and resource limits"
        ),
        Level::Basic => format!(
            "sandbox: basic only ({why}): kernels run without namespaces or Landlock, with \
             seccomp, no_new_privs, resource limits{}; ascendopt made itself non-dumpable so \
             that they cannot read its memory",
            // SAFETY: a plain query.
            if unsafe { libc::geteuid() } == 0 {
                " and uid 65534"
            } else {
                ""
            }
        ),
    }
}
