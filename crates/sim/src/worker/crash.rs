//! Saying where a kernel crashed.
//!
//! Worker side ([`install`]): handlers for SIGSEGV, SIGBUS, SIGFPE,
//! SIGILL and SIGSYS write one line to stderr,
//! `ascendopt-worker: SIGSEGV at pc 0x7f.. in /cache/kernel-….so+0x1234 (address 0x0)`
//! (for SIGSYS, a system call the seccomp filter refused:
//! `ascendopt-worker: SIGSYS forbidden system call openat (257) at pc ...`),
//! then hand the signal back to the handler that was there before (Rust's
//! stack-overflow reporter or the default action), so the worker still dies
//! of the same signal. The handler only uses async-signal-safe calls and a
//! stack buffer (`dladdr` is not on the POSIX list but takes no lock that a
//! crashing kernel could hold in practice).
//!
//! Parent side ([`locate`]): finds that line in the stderr tail and, when the
//! object is the job's kernel or host library (built with `-g1`), asks
//! `addr2line` for the function and `file:line`.

use std::path::Path;
use std::process::{Command, Stdio};

/// Signals reported.
const SIGNALS: [libc::c_int; 5] = [
    libc::SIGSEGV,
    libc::SIGBUS,
    libc::SIGFPE,
    libc::SIGILL,
    libc::SIGSYS,
];

/// What the SIGSYS line says before the call's name.
pub(crate) const FORBIDDEN: &str = "forbidden system call ";

/// Marker at the start of the line the handler writes.
const MARKER: &str = "ascendopt-worker: ";

struct OldActions(std::cell::UnsafeCell<[libc::sigaction; 5]>);
// SAFETY: written once by `install` before any handler can run, then only
// read (from handlers).
unsafe impl Sync for OldActions {}

static OLD_ACTIONS: OldActions =
    // SAFETY: an all-zero sigaction is SIG_DFL with no flags.
    OldActions(std::cell::UnsafeCell::new(unsafe { std::mem::zeroed() }));

/// Installs the crash reporter (worker side, before running the job).
pub(crate) fn install() {
    // SAFETY: plain sigaction calls; OLD_ACTIONS is written before the new
    // handlers are installed.
    unsafe {
        let old = &mut *OLD_ACTIONS.0.get();
        for (slot, sig) in SIGNALS.iter().enumerate() {
            libc::sigaction(*sig, std::ptr::null(), &mut old[slot]);
        }
        for sig in SIGNALS {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_fault as *const () as usize;
            action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(sig, &action, std::ptr::null_mut());
        }
    }
}

/// A fixed buffer that text is appended to without allocating.
struct Line {
    buf: [u8; 1024],
    len: usize,
}

impl Line {
    fn push(&mut self, bytes: &[u8]) {
        let room = self.buf.len() - self.len;
        let n = bytes.len().min(room);
        self.buf[self.len..self.len + n].copy_from_slice(&bytes[..n]);
        self.len += n;
    }

    fn dec(&mut self, value: u64) {
        let mut digits = [0u8; 20];
        let mut v = value;
        let mut i = digits.len();
        loop {
            i -= 1;
            digits[i] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        self.push(&digits[i..]);
    }

    fn hex(&mut self, value: usize) {
        let mut digits = [0u8; 16];
        let mut v = value;
        let mut i = digits.len();
        loop {
            i -= 1;
            digits[i] = b"0123456789abcdef"[v & 15];
            v >>= 4;
            if v == 0 {
                break;
            }
        }
        self.push(b"0x");
        self.push(&digits[i..]);
    }
}

fn signal_bytes(sig: libc::c_int) -> &'static [u8] {
    match sig {
        libc::SIGSEGV => b"SIGSEGV",
        libc::SIGBUS => b"SIGBUS",
        libc::SIGFPE => b"SIGFPE",
        libc::SIGILL => b"SIGILL",
        libc::SIGSYS => b"SIGSYS",
        _ => b"signal",
    }
}

/// The program counter saved in a signal context.
///
/// # Safety
/// `ctx` is the third argument of an SA_SIGINFO handler.
unsafe fn program_counter(ctx: *mut libc::c_void) -> usize {
    if ctx.is_null() {
        return 0;
    }
    #[cfg(all(target_arch = "x86_64", target_env = "gnu"))]
    {
        // SAFETY: the kernel passes a ucontext_t.
        unsafe {
            (*(ctx as *const libc::ucontext_t)).uc_mcontext.gregs[libc::REG_RIP as usize] as usize
        }
    }
    #[cfg(all(target_arch = "aarch64", target_env = "gnu"))]
    {
        // SAFETY: the kernel passes a ucontext_t.
        unsafe { (*(ctx as *const libc::ucontext_t)).uc_mcontext.pc as usize }
    }
    #[cfg(not(any(
        all(target_arch = "x86_64", target_env = "gnu"),
        all(target_arch = "aarch64", target_env = "gnu")
    )))]
    {
        0
    }
}

extern "C" fn on_fault(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    let mut line = Line {
        buf: [0; 1024],
        len: 0,
    };
    // SAFETY: arguments as the kernel passed them; only async-signal-safe
    // calls (and dladdr) follow.
    unsafe {
        let pc = program_counter(ctx);
        line.push(b"\n");
        line.push(MARKER.as_bytes());
        line.push(signal_bytes(sig));
        if sig == libc::SIGSYS && !info.is_null() {
            // struct siginfo's _sigsys: call address (pointer at 16), then
            // the system call number (int at 24).
            let nr = *(info as *const u8).add(24).cast::<i32>();
            line.push(b" ");
            line.push(FORBIDDEN.as_bytes());
            match super::seccomp::syscall_name(i64::from(nr)) {
                Some(name) => line.push(name.as_bytes()),
                None => line.push(b"#"),
            }
            line.push(b" (");
            line.dec(nr as u64);
            line.push(b")");
        }
        line.push(b" at pc ");
        line.hex(pc);
        let mut dl: libc::Dl_info = std::mem::zeroed();
        if pc != 0
            && libc::dladdr(pc as *const libc::c_void, &mut dl) != 0
            && !dl.dli_fname.is_null()
        {
            line.push(b" in ");
            line.push(std::ffi::CStr::from_ptr(dl.dli_fname).to_bytes());
            line.push(b"+");
            line.hex(pc.wrapping_sub(dl.dli_fbase as usize));
        }
        if !info.is_null() && sig != libc::SIGSYS {
            line.push(b" (address ");
            line.hex((*info).si_addr() as usize);
            line.push(b")");
        }
        line.push(b"\n");
        libc::write(2, line.buf.as_ptr().cast(), line.len);

        // Give the signal back to the previous handler.
        if let Some(slot) = SIGNALS.iter().position(|s| *s == sig) {
            let old = &*OLD_ACTIONS.0.get();
            libc::sigaction(sig, &old[slot], std::ptr::null_mut());
        }
        // A fault re-executes the instruction on return; a signal that was
        // sent (kill/raise: si_code <= 0) and a refused system call (which
        // is not retried) must be raised again.
        if info.is_null() || (*info).si_code <= 0 || sig == libc::SIGSYS {
            libc::raise(sig);
        }
    }
}

/// The system call named by a SIGSYS line of the handler in `stderr`.
pub(crate) fn forbidden_call(stderr: &str) -> Option<&str> {
    let line = stderr.lines().rev().find(|l| l.starts_with(MARKER))?;
    let rest = &line[line.find(FORBIDDEN)? + FORBIDDEN.len()..];
    let end = rest.find(" at pc").unwrap_or(rest.len());
    Some(rest[..end].trim())
}

/// The `object+offset` of the handler's line in `stderr`, if any.
fn object_offset(stderr: &str) -> Option<(&str, u64)> {
    let line = stderr.lines().rev().find(|l| l.starts_with(MARKER))?;
    let rest = &line[line.find(" in ")? + 4..];
    let end = rest.find(" (address").unwrap_or(rest.len());
    let (object, offset) = rest[..end].rsplit_once("+0x")?;
    let offset = u64::from_str_radix(offset, 16).ok()?;
    Some((object, offset))
}

/// Where the crash happened, from the handler's line in `stderr`: function
/// and `file:line` (with the inlining chain) when the object is one of
/// `libraries` and addr2line knows it, else `object+offset`.
pub(crate) fn locate(stderr: &str, libraries: &[&Path]) -> Option<String> {
    let (object, offset) = object_offset(stderr)?;
    let plain = format!("{object}+0x{offset:x}");
    let frames = frames(object, offset, libraries);
    if frames.is_empty() {
        return Some(plain);
    }
    let frames: Vec<String> = frames
        .iter()
        .map(|(function, place)| format!("{function} at {place}"))
        .collect();
    Some(frames.join("; inlined into "))
}

/// `(file, line, function)` of the code at `offset` in `object`, the
/// outermost frame of the inlining chain that is not in a header of the
/// simulator's own (`exclude`), when `object` is one of `libraries`.
pub(crate) fn source_line(
    object: &str,
    offset: u64,
    libraries: &[&Path],
    exclude: &str,
) -> Option<(String, u32, String)> {
    let frames = frames(object, offset, libraries);
    let (function, place) = frames
        .iter()
        .find(|(_, place)| !place.contains(exclude))
        .or(frames.first())?;
    let (file, line) = place.rsplit_once(':')?;
    // The line tables name package files relative to the package root
    // (`-ffile-prefix-map`); addr2line puts its own folder before them.
    let file = std::env::current_dir()
        .ok()
        .and_then(|dir| {
            Path::new(file)
                .strip_prefix(dir)
                .ok()
                .map(Path::to_path_buf)
        })
        .map_or_else(|| file.to_string(), |rel| rel.display().to_string());
    // `void ns::f<float>(int, char*)` -> `ns::f<float>`.
    let name = function.split('(').next().unwrap_or(function);
    let name = name.rsplit(' ').next().unwrap_or(name).to_string();
    Some((file, line.trim().parse().ok()?, name))
}

/// The (function, `file:line`) frames addr2line gives for `offset` in
/// `object`, innermost first (at most four); none when `object` is not one
/// of `libraries` (an unknown object is only named, never handed to
/// addr2line) or addr2line does not know it.
fn frames(object: &str, offset: u64, libraries: &[&Path]) -> Vec<(String, String)> {
    let known = libraries.iter().any(|lib| {
        Path::new(object) == *lib
            || std::fs::canonicalize(lib).is_ok_and(|c| c == Path::new(object))
    });
    if !known {
        return Vec::new();
    }
    let Ok(output) = Command::new("addr2line")
        .args(["-f", "-C", "-i", "-e"])
        .arg(object)
        .arg(format!("0x{offset:x}"))
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
    else {
        return Vec::new();
    };
    let text = String::from_utf8_lossy(&output.stdout);
    let lines: Vec<&str> = text.lines().collect();
    // Pairs of (function, file:line), innermost first.
    lines
        .chunks(2)
        .filter(|pair| pair.len() == 2 && !pair[1].starts_with("??"))
        .take(4)
        .map(|pair| {
            let place = pair[1].split(" (discriminator").next().unwrap_or(pair[1]);
            (pair[0].to_string(), place.to_string())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_handler_line_is_parsed_back() {
        let stderr = "some kernel output\n\
                      ascendopt-worker: SIGSEGV at pc 0x7f12 in /c/kernel-ab.so+0x1a2b (address 0x0)\n";
        assert_eq!(object_offset(stderr), Some(("/c/kernel-ab.so", 0x1a2b)));
        assert_eq!(object_offset("Segmentation fault\n"), None);
        // An unknown object is only named, never handed to addr2line.
        assert_eq!(
            locate(stderr, &[Path::new("/c/other.so")]).as_deref(),
            Some("/c/kernel-ab.so+0x1a2b")
        );
    }

    #[test]
    fn a_refused_system_call_is_named() {
        let stderr = "ascendopt-worker: SIGSYS forbidden system call openat (257) at pc 0x7f in /lib/libc.so.6+0x10\n";
        assert_eq!(forbidden_call(stderr), Some("openat (257)"));
        assert_eq!(
            forbidden_call("ascendopt-worker: SIGSEGV at pc 0x1\n"),
            None
        );
    }

    #[test]
    fn hex_digits_are_written_without_allocating() {
        let mut line = Line {
            buf: [0; 1024],
            len: 0,
        };
        line.hex(0);
        line.push(b" ");
        line.hex(0xdead_beef);
        assert_eq!(&line.buf[..line.len], b"0x0 0xdeadbeef");
    }
}
