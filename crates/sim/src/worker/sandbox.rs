//! The confinement of the worker process, decided by the parent
//! ([`SandboxPlan::new`]) and applied in the child between `clone` and
//! `exec` ([`SandboxPlan::apply`], see `spawn.rs`).
//!
//! Three levels, the strongest the system allows ([`Level`]):
//!
//! - [`Level::Namespaces`]: the child is cloned into new user (when not
//!   root), PID, mount, IPC and network namespaces. It sees a file system
//!   of its own: an empty read-only root holding read-only bind mounts of
//!   the system's program and library folders (`/usr`, `/lib*`, `/bin`,
//!   `/sbin`), `/etc/ld.so.cache`, `/dev/null`, `/dev/zero`, `/dev/urandom`,
//!   the worker executable and the job's two libraries at their own paths,
//!   and a private size-limited `/tmp` (its working directory). There is no
//!   `/proc`: nothing outside its own PID namespace can be named. It runs
//!   as uid/gid 65534 with no capability (root drops to it; others are
//!   mapped to it in the user namespace).
//! - [`Level::Landlock`] (no namespaces, e.g. unprivileged user namespaces
//!   are disabled): a Landlock domain lets it read and execute the same
//!   system folders, files and libraries and write only its private work
//!   folder; signals and abstract sockets outside the domain and TCP are
//!   refused where the kernel's Landlock knows them. Root still drops to
//!   uid 65534.
//! - [`Level::Basic`] (neither): resource limits, seccomp and the uid drop
//!   for root only. The parent process makes itself non-dumpable then, so
//!   that a worker of the same uid cannot open `/proc/<parent>/mem`.
//!
//! At every level: `no_new_privs`, resource limits (address space, CPU
//! time, file size, open files, processes where they count only the
//! worker's), a parent-death signal (SIGKILL), its own process group, every
//! descriptor closed but stdin/stdout/stderr and the ones the protocol
//! passes (result pipe as fd 3, tensor arena as fd 4, the exit-status pipe
//! as fd 5), and the seccomp filters the worker installs itself
//! (`seccomp.rs`).
//!
//! Everything [`SandboxPlan::apply`] does is a raw system call on data
//! prepared before the clone: no allocation, no locks.

use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::RawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// The uid and gid the worker runs as (the traditional `nobody`).
pub(crate) const WORKER_ID: u32 = 65534;

/// Fixed descriptor numbers in the worker.
pub(crate) const RESULT_FD: RawFd = 3;
/// The tensor arena (closed when there is none).
pub(crate) const ARENA_FD: RawFd = 4;
/// Where the worker's init reports how the worker ended (Namespaces level).
pub(crate) const EXIT_FD: RawFd = 5;
/// The child's error pipe until `exec` (close-on-exec).
const ERROR_FD: RawFd = 6;
/// First descriptor closed before `exec`.
const FIRST_CLOSED_FD: u32 = 7;

/// How strongly the worker is confined (strongest first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// Own user (unless root), PID, mount, IPC and network namespaces, a
    /// read-only view of the system folders and a private `/tmp`.
    Namespaces,
    /// No namespaces; a Landlock domain confines the file system.
    Landlock,
    /// Neither: resource limits, seccomp and (root) the uid drop only.
    Basic,
}

impl Level {
    /// Short name (`namespaces`, `landlock`, `basic`).
    pub fn name(self) -> &'static str {
        match self {
            Level::Namespaces => "namespaces",
            Level::Landlock => "landlock",
            Level::Basic => "basic",
        }
    }

    fn from_name(name: &str) -> Option<Level> {
        match name {
            "namespaces" | "full" => Some(Level::Namespaces),
            "landlock" => Some(Level::Landlock),
            "basic" => Some(Level::Basic),
            _ => None,
        }
    }

    /// The next weaker level.
    pub(crate) fn weaker(self) -> Option<Level> {
        match self {
            Level::Namespaces => Some(Level::Landlock),
            Level::Landlock => Some(Level::Basic),
            Level::Basic => None,
        }
    }
}

/// The strongest level to try: env `ASCENDOPT_SANDBOX` may ask for a weaker
/// one (`landlock`, `basic`; to test the fallbacks), never for none.
pub(crate) fn requested_level() -> Level {
    std::env::var("ASCENDOPT_SANDBOX")
        .ok()
        .and_then(|v| Level::from_name(v.trim()))
        .unwrap_or(Level::Namespaces)
}

/// Resource limits, as `setrlimit` wants them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rlimits {
    pub address_space: u64,
    pub cpu_seconds: u64,
    pub file_size: u64,
    pub open_files: u64,
    /// Processes and threads (only set where the count is the worker's own).
    pub processes: Option<u64>,
}

/// One step of building the worker's view of the file system.
enum Step {
    /// `mkdir(path, 0755)` (an existing folder is fine).
    Mkdir(CString),
    /// Creates an empty file to bind a file on.
    Touch(CString),
    /// `symlink(target, path)`.
    Symlink(CString, CString),
    /// Bind-mounts `src` on `dst`, read-only unless `writable`.
    Bind {
        src: CString,
        dst: CString,
        writable: bool,
    },
    /// Mounts a tmpfs with these options.
    Tmpfs { dst: CString, options: CString },
}

/// The namespaces of [`Level::Namespaces`].
struct NamespacePlan {
    /// Extra `clone` flags.
    clone_flags: libc::c_int,
    /// Files and contents written to map the user namespace (not root):
    /// setgroups, uid_map, gid_map.
    maps: Vec<(CString, CString)>,
    /// The folder the new root is mounted on.
    root: CString,
    steps: Vec<Step>,
    /// The scratch folder inside the new root.
    scratch: CString,
    /// Build the view (false: the namespaces alone).
    view: bool,
}

/// Landlock access rights (linux/landlock.h).
mod ll {
    pub const EXECUTE: u64 = 1 << 0;
    pub const WRITE_FILE: u64 = 1 << 1;
    pub const READ_FILE: u64 = 1 << 2;
    pub const READ_DIR: u64 = 1 << 3;
    /// Every right of ABI version 1 (bits 0 to 12).
    pub const ABI1_ALL: u64 = (1 << 13) - 1;
    pub const REFER: u64 = 1 << 13;
    pub const TRUNCATE: u64 = 1 << 14;
    pub const IOCTL_DEV: u64 = 1 << 15;
    /// Rights that apply to a file (not a folder).
    pub const FILE_RIGHTS: u64 = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV;
    pub const NET_BIND_TCP: u64 = 1 << 0;
    pub const NET_CONNECT_TCP: u64 = 1 << 1;
    pub const SCOPE_ABSTRACT_UNIX_SOCKET: u64 = 1 << 0;
    pub const SCOPE_SIGNAL: u64 = 1 << 1;
    pub const RULE_PATH_BENEATH: libc::c_int = 1;
    pub const CREATE_RULESET_VERSION: u32 = 1 << 0;
}

#[repr(C)]
struct RulesetAttr {
    handled_access_fs: u64,
    handled_access_net: u64,
    scoped: u64,
}

#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// The Landlock domain of [`Level::Landlock`].
struct LandlockPlan {
    attr: RulesetAttr,
    attr_size: usize,
    /// (path, rights).
    rules: Vec<(CString, u64)>,
}

/// What the child does before `exec`.
pub(crate) struct SandboxPlan {
    rlimits: Rlimits,
    namespaces: Option<NamespacePlan>,
    landlock: Option<LandlockPlan>,
    /// Drop to [`WORKER_ID`] (root only, at levels without a user namespace).
    drop_root: bool,
    /// The folder to `chdir` to when there is no new root (None: stay).
    work_dir: Option<CString>,
    /// Set the parent-death signal and no_new_privs (not for a compiler,
    /// see [`SandboxPlan::for_compiler`]: no_new_privs only).
    pdeathsig: bool,
    /// Descriptors to pass, in the parent's numbering: result pipe, arena
    /// (-1: none), exit-status pipe (-1: none).
    pass: [RawFd; 3],
}

/// The Landlock ABI version of the running kernel (0: none).
pub(crate) fn landlock_abi() -> u32 {
    static ABI: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *ABI.get_or_init(|| {
        // SAFETY: the version query takes no pointer.
        let v = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                std::ptr::null::<u8>(),
                0usize,
                ll::CREATE_RULESET_VERSION,
            )
        };
        u32::try_from(v).unwrap_or(0)
    })
}

fn cstr(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes()).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} contains a NUL byte", path.display()),
        )
    })
}

/// System folders the worker may read and execute from.
const SYSTEM_DIRS: &[&str] = &[
    "/usr", "/lib", "/lib64", "/lib32", "/libx32", "/bin", "/sbin",
];
/// System files it may read.
const SYSTEM_FILES: &[&str] = &["/etc/ld.so.cache"];
/// Devices it may open.
const DEVICES: &[&str] = &["/dev/null", "/dev/zero", "/dev/urandom"];

/// Whether `path` lies under one of the system folders that are real
/// folders (bound whole), so it needs no mount of its own.
fn under_system_dir(path: &Path) -> bool {
    SYSTEM_DIRS.iter().any(|d| {
        path.starts_with(d)
            && std::fs::symlink_metadata(d)
                .map(|m| m.is_dir())
                .unwrap_or(false)
    })
}

/// Files the worker reads: its executable and the job's libraries.
pub(crate) struct Exposed<'a> {
    pub program: &'a Path,
    pub libraries: Vec<&'a Path>,
}

impl SandboxPlan {
    /// The plan for one worker at `level`, working in `work_dir` (a fresh
    /// private folder of the parent: the mount point of the new root, or
    /// the writable work folder without namespaces).
    pub(crate) fn new(
        level: Level,
        rlimits: Rlimits,
        work_dir: &Path,
        exposed: &Exposed<'_>,
        scratch_bytes: u64,
        pass: [RawFd; 3],
    ) -> io::Result<SandboxPlan> {
        // SAFETY: plain queries.
        let (euid, egid) = unsafe { (libc::geteuid(), libc::getegid()) };
        let root = euid == 0;
        let mut plan = SandboxPlan {
            rlimits,
            namespaces: None,
            landlock: None,
            drop_root: root,
            work_dir: Some(cstr(work_dir)?),
            pdeathsig: true,
            pass,
        };
        match level {
            Level::Namespaces => {
                plan.namespaces = Some(namespace_plan(
                    work_dir,
                    exposed,
                    scratch_bytes,
                    root,
                    (euid, egid),
                )?);
                // Root drops to 65534 itself; others are that uid through
                // the user namespace's map.
                plan.drop_root = root;
            }
            Level::Landlock => {
                plan.landlock = Some(landlock_plan(work_dir, exposed)?);
                plan.rlimits.processes = None;
            }
            Level::Basic => plan.rlimits.processes = None,
        }
        Ok(plan)
    }

    /// The plan for a compiler (g++ and the processes it starts): its own
    /// PID namespace when `pid_namespace` (with a user namespace that maps
    /// the caller's own ids when not root), so that the death of the
    /// driver, killed on a time-out or by the parent-death signal when
    /// ascendopt dies, ends every process of the compile; its own process
    /// group; resource limits. No view, no uid change: it writes the build
    /// cache as the user.
    pub(crate) fn for_compiler(rlimits: Rlimits, pid_namespace: bool) -> io::Result<SandboxPlan> {
        // SAFETY: plain queries.
        let (euid, egid) = unsafe { (libc::geteuid(), libc::getegid()) };
        let namespaces = if pid_namespace {
            let mut clone_flags = libc::CLONE_NEWPID;
            let mut maps = Vec::new();
            if euid != 0 {
                clone_flags |= libc::CLONE_NEWUSER;
                let c = |s: String| CString::new(s).map_err(io::Error::other);
                maps.push((c("/proc/self/setgroups".into())?, c("deny".into())?));
                maps.push((
                    c("/proc/self/uid_map".into())?,
                    c(format!("{euid} {euid} 1\n"))?,
                ));
                maps.push((
                    c("/proc/self/gid_map".into())?,
                    c(format!("{egid} {egid} 1\n"))?,
                ));
            }
            Some(NamespacePlan {
                clone_flags,
                maps,
                root: CString::default(),
                steps: Vec::new(),
                scratch: CString::default(),
                view: false,
            })
        } else {
            None
        };
        Ok(SandboxPlan {
            rlimits,
            namespaces,
            landlock: None,
            drop_root: false,
            work_dir: None,
            pdeathsig: true,
            pass: [-1, -1, -1],
        })
    }

    /// Extra `clone` flags (the namespaces).
    pub(crate) fn clone_flags(&self) -> libc::c_int {
        self.namespaces.as_ref().map_or(0, |n| n.clone_flags)
    }

    /// Applies the plan in the freshly cloned child: `std_fds` become its
    /// stdin, stdout and stderr, and `error_fd` (the error pipe's write end)
    /// moves to [`ERROR_FD`] (close-on-exec), its new number written back.
    /// On failure: the stage that failed (see [`stage_name`]) and errno.
    ///
    /// # Safety
    /// Only in the child between clone and exec.
    pub(crate) unsafe fn apply(
        &self,
        std_fds: [RawFd; 3],
        error_fd: &mut RawFd,
    ) -> Result<(), (u32, i32)> {
        let err = |stage: u32| {
            (
                stage,
                io::Error::last_os_error().raw_os_error().unwrap_or(0),
            )
        };
        // SAFETY (whole function): raw system calls on strings and structs
        // prepared by the parent, alive while it is suspended.
        unsafe {
            // The protocol's descriptors at fixed numbers, everything else
            // closed (a descriptor the parent opened without close-on-exec
            // in another thread must not leak into the worker).
            let wanted = [
                std_fds[0],
                std_fds[1],
                std_fds[2],
                self.pass[0],
                self.pass[1],
                self.pass[2],
                *error_fd,
            ];
            let mut high = [-1 as RawFd; 7];
            for (slot, &fd) in high.iter_mut().zip(&wanted) {
                if fd >= 0 {
                    *slot = libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 64);
                    if *slot < 0 {
                        return Err(err(1));
                    }
                }
            }
            for (target, &fd) in [0, 1, 2, RESULT_FD, ARENA_FD, EXIT_FD, ERROR_FD]
                .iter()
                .zip(&high)
            {
                if fd >= 0 {
                    if libc::dup2(fd, *target) < 0 {
                        return Err(err(2));
                    }
                } else {
                    libc::close(*target);
                }
            }
            *error_fd = ERROR_FD;
            if libc::fcntl(ERROR_FD, libc::F_SETFD, libc::FD_CLOEXEC) != 0 {
                return Err(err(2));
            }
            close_from(FIRST_CLOSED_FD);

            if libc::setpgid(0, 0) != 0 {
                return Err(err(3));
            }
            if let Some(ns) = &self.namespaces {
                for (file, text) in &ns.maps {
                    write_file(file, text).map_err(|_| err(10))?;
                }
                if ns.view {
                    build_view(ns).map_err(err)?;
                }
            } else if let Some(dir) = &self.work_dir {
                if libc::chdir(dir.as_ptr()) != 0 {
                    return Err(err(4));
                }
            }
            let limits = self.rlimits;
            set_limit(libc::RLIMIT_AS, limits.address_space, limits.address_space)
                .map_err(|_| err(30))?;
            // Soft CPU limit sends SIGXCPU, the hard one a second later SIGKILL.
            set_limit(
                libc::RLIMIT_CPU,
                limits.cpu_seconds,
                limits.cpu_seconds.saturating_add(1),
            )
            .map_err(|_| err(31))?;
            set_limit(libc::RLIMIT_FSIZE, limits.file_size, limits.file_size)
                .map_err(|_| err(32))?;
            set_limit(libc::RLIMIT_CORE, 0, 0).map_err(|_| err(33))?;
            set_limit(libc::RLIMIT_NOFILE, limits.open_files, limits.open_files)
                .map_err(|_| err(34))?;
            if self.drop_root {
                let id = WORKER_ID;
                if libc::setgroups(0, std::ptr::null()) != 0
                    || libc::setresgid(id, id, id) != 0
                    || libc::setresuid(id, id, id) != 0
                {
                    return Err(err(40));
                }
            }
            if let Some(n) = limits.processes {
                // After the uid drop: the count is of the new uid.
                set_limit(libc::RLIMIT_NPROC, n, n).map_err(|_| err(35))?;
            }
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                return Err(err(41));
            }
            if let Some(ll) = &self.landlock {
                apply_landlock(ll).map_err(err)?;
            }
            // Last: a change of credentials clears it.
            if self.pdeathsig && libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
                return Err(err(42));
            }
        }
        Ok(())
    }
}

/// What failed, for a stage number of [`SandboxPlan::apply`].
pub(crate) fn stage_name(stage: u32) -> &'static str {
    match stage {
        0 => "clone",
        1 | 2 => "passing descriptors",
        3 => "setpgid",
        4 => "chdir to the work folder",
        10 => "mapping the user namespace",
        20 => "making the mounts private",
        21 => "mounting the new root",
        22 => "creating a mount point",
        23 => "a bind mount",
        24 => "a read-only remount",
        25 => "mounting the private /tmp",
        26 => "pivot_root",
        27 => "detaching the old root",
        28 => "making the root read-only",
        29 => "chdir to /tmp",
        30..=35 => "setrlimit",
        40 => "dropping to uid 65534",
        41 => "no_new_privs",
        50..=53 => "Landlock",
        42 => "the parent-death signal",
        60 => "exec",
        _ => "setup",
    }
}

/// Closes every descriptor from `first` up.
///
/// # Safety
/// Only in the child.
unsafe fn close_from(first: u32) {
    // SAFETY: closing descriptors of the child's own table.
    unsafe {
        if libc::syscall(libc::SYS_close_range, first, u32::MAX, 0) == 0 {
            return;
        }
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        let top = if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 {
            limit.rlim_cur.min(1 << 16) as i32
        } else {
            1024
        };
        for fd in first as i32..top {
            libc::close(fd);
        }
    }
}

/// Writes `text` to the file `path` (no allocation).
///
/// # Safety
/// Raw system calls.
unsafe fn write_file(path: &CStr, text: &CStr) -> Result<(), ()> {
    // SAFETY: valid C strings.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(());
        }
        let bytes = text.to_bytes();
        let n = libc::write(fd, bytes.as_ptr().cast(), bytes.len());
        libc::close(fd);
        if n != bytes.len() as isize {
            return Err(());
        }
    }
    Ok(())
}

/// Builds the view of [`Level::Namespaces`] and enters it.
///
/// # Safety
/// Only in the child, in its new mount namespace.
unsafe fn build_view(ns: &NamespacePlan) -> Result<(), u32> {
    let none = std::ptr::null::<libc::c_char>();
    // SAFETY: raw system calls on prepared C strings.
    unsafe {
        if libc::mount(
            none,
            c"/".as_ptr(),
            none,
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        ) != 0
        {
            return Err(20);
        }
        if libc::mount(
            c"tmpfs".as_ptr(),
            ns.root.as_ptr(),
            c"tmpfs".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV,
            c"size=1m,mode=0755".as_ptr().cast(),
        ) != 0
        {
            return Err(21);
        }
        for step in &ns.steps {
            match step {
                Step::Mkdir(path) => {
                    if libc::mkdir(path.as_ptr(), 0o755) != 0
                        && io::Error::last_os_error().raw_os_error() != Some(libc::EEXIST)
                    {
                        return Err(22);
                    }
                }
                Step::Touch(path) => {
                    let fd = libc::open(
                        path.as_ptr(),
                        libc::O_WRONLY | libc::O_CREAT | libc::O_CLOEXEC,
                        0o644,
                    );
                    if fd < 0 {
                        return Err(22);
                    }
                    libc::close(fd);
                }
                Step::Symlink(target, path) => {
                    if libc::symlink(target.as_ptr(), path.as_ptr()) != 0 {
                        return Err(22);
                    }
                }
                Step::Bind { src, dst, writable } => {
                    if libc::mount(
                        src.as_ptr(),
                        dst.as_ptr(),
                        none,
                        libc::MS_BIND | libc::MS_REC,
                        std::ptr::null(),
                    ) != 0
                    {
                        return Err(23);
                    }
                    // A remount must keep the flags the source mount has
                    // (in a user namespace they are locked).
                    // struct statfs of 64-bit Linux: fifteen words,
                    // f_flags the eleventh.
                    let mut st = [0i64; 15];
                    if libc::syscall(libc::SYS_statfs, dst.as_ptr(), st.as_mut_ptr()) != 0 {
                        return Err(24);
                    }
                    let mut flags = libc::MS_REMOUNT | libc::MS_BIND | libc::MS_NOSUID;
                    let f = st[10] as libc::c_ulong;
                    for (st_flag, ms_flag) in [
                        (libc::ST_NODEV, libc::MS_NODEV),
                        (libc::ST_NOEXEC, libc::MS_NOEXEC),
                        (libc::ST_NOATIME, libc::MS_NOATIME),
                        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
                        (libc::ST_RELATIME, libc::MS_RELATIME),
                    ] {
                        if f & st_flag != 0 {
                            flags |= ms_flag;
                        }
                    }
                    if !*writable || f & libc::ST_RDONLY != 0 {
                        flags |= libc::MS_RDONLY;
                    }
                    if libc::mount(none, dst.as_ptr(), none, flags, std::ptr::null()) != 0 {
                        return Err(24);
                    }
                }
                Step::Tmpfs { dst, options } => {
                    if libc::mount(
                        c"tmpfs".as_ptr(),
                        dst.as_ptr(),
                        c"tmpfs".as_ptr(),
                        libc::MS_NOSUID | libc::MS_NODEV,
                        options.as_ptr().cast(),
                    ) != 0
                    {
                        return Err(25);
                    }
                }
            }
        }
        // Enter the new root: pivot_root(".", ".") stacks the old root on
        // the new one, and detaching it leaves the new root alone.
        if libc::chdir(ns.root.as_ptr()) != 0 {
            return Err(26);
        }
        let dot = c".".as_ptr();
        if libc::syscall(libc::SYS_pivot_root, dot, dot) != 0 {
            return Err(26);
        }
        if libc::umount2(dot, libc::MNT_DETACH) != 0 {
            return Err(27);
        }
        if libc::chdir(c"/".as_ptr()) != 0 {
            return Err(27);
        }
        if libc::mount(
            none,
            c"/".as_ptr(),
            none,
            libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV,
            std::ptr::null(),
        ) != 0
        {
            return Err(28);
        }
        if libc::chdir(ns.scratch.as_ptr()) != 0 {
            return Err(29);
        }
    }
    Ok(())
}

/// Applies the Landlock domain.
///
/// # Safety
/// Only in the child (after no_new_privs).
unsafe fn apply_landlock(plan: &LandlockPlan) -> Result<(), u32> {
    // SAFETY: raw system calls with prepared structs.
    unsafe {
        let ruleset = libc::syscall(
            libc::SYS_landlock_create_ruleset,
            &plan.attr as *const RulesetAttr,
            plan.attr_size,
            0u32,
        );
        if ruleset < 0 {
            return Err(50);
        }
        let ruleset = ruleset as libc::c_int;
        for (path, rights) in &plan.rules {
            let fd = libc::open(path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC);
            if fd < 0 {
                // A folder the system lacks (e.g. /lib32): nothing to allow.
                continue;
            }
            let attr = PathBeneathAttr {
                allowed_access: *rights,
                parent_fd: fd,
            };
            let rc = libc::syscall(
                libc::SYS_landlock_add_rule,
                ruleset,
                ll::RULE_PATH_BENEATH,
                &attr as *const PathBeneathAttr,
                0u32,
            );
            libc::close(fd);
            if rc != 0 {
                libc::close(ruleset);
                return Err(51);
            }
        }
        let rc = libc::syscall(libc::SYS_landlock_restrict_self, ruleset, 0u32);
        libc::close(ruleset);
        if rc != 0 {
            return Err(52);
        }
    }
    Ok(())
}

/// Lowers a resource limit, never above the current hard limit (raising it
/// would need privileges).
fn set_limit(resource: libc::__rlimit_resource_t, soft: u64, hard: u64) -> io::Result<()> {
    let mut current = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: plain syscalls with a valid pointer.
    unsafe {
        if libc::getrlimit(resource, &mut current) != 0 {
            return Err(io::Error::last_os_error());
        }
        let hard = hard.min(current.rlim_max);
        let limit = libc::rlimit {
            rlim_cur: soft.min(hard),
            rlim_max: hard,
        };
        if libc::setrlimit(resource, &limit) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// The steps of the new root for `work_dir` (its mount point).
fn namespace_plan(
    work_dir: &Path,
    exposed: &Exposed<'_>,
    scratch_bytes: u64,
    root: bool,
    (euid, egid): (u32, u32),
) -> io::Result<NamespacePlan> {
    let mut clone_flags =
        libc::CLONE_NEWPID | libc::CLONE_NEWNS | libc::CLONE_NEWIPC | libc::CLONE_NEWNET;
    let mut maps = Vec::new();
    if !root {
        clone_flags |= libc::CLONE_NEWUSER;
        let c = |s: String| CString::new(s).map_err(io::Error::other);
        maps.push((c("/proc/self/setgroups".into())?, c("deny".into())?));
        maps.push((
            c("/proc/self/uid_map".into())?,
            c(format!("{WORKER_ID} {euid} 1\n"))?,
        ));
        maps.push((
            c("/proc/self/gid_map".into())?,
            c(format!("{WORKER_ID} {egid} 1\n"))?,
        ));
    }
    let inside = |p: &Path| -> PathBuf {
        let rel = p.strip_prefix("/").unwrap_or(p);
        work_dir.join(rel)
    };
    let mut steps = Vec::new();
    let mut made: std::collections::BTreeSet<PathBuf> = Default::default();
    // Folders leading to `p` inside the new root.
    let mkdirs = |p: &Path,
                  steps: &mut Vec<Step>,
                  made: &mut std::collections::BTreeSet<PathBuf>|
     -> io::Result<()> {
        let mut acc = PathBuf::from("/");
        for comp in p.parent().unwrap_or(Path::new("/")).components().skip(1) {
            acc.push(comp);
            if made.insert(acc.clone()) {
                steps.push(Step::Mkdir(cstr(&inside(&acc))?));
            }
        }
        Ok(())
    };
    // The private scratch /tmp first: files bound under it come after.
    steps.push(Step::Mkdir(cstr(&inside(Path::new("/tmp")))?));
    made.insert(PathBuf::from("/tmp"));
    steps.push(Step::Tmpfs {
        dst: cstr(&inside(Path::new("/tmp")))?,
        options: CString::new(format!("size={},mode=1777", scratch_bytes.max(1 << 20)))
            .map_err(io::Error::other)?,
    });
    for dir in SYSTEM_DIRS {
        let path = Path::new(dir);
        match std::fs::symlink_metadata(path) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = std::fs::read_link(path)?;
                steps.push(Step::Symlink(cstr(&target)?, cstr(&inside(path))?));
            }
            Ok(meta) if meta.is_dir() => {
                steps.push(Step::Mkdir(cstr(&inside(path))?));
                steps.push(Step::Bind {
                    src: cstr(path)?,
                    dst: cstr(&inside(path))?,
                    writable: false,
                });
            }
            _ => {}
        }
    }
    let mut files: Vec<(&Path, bool)> = Vec::new();
    files.extend(SYSTEM_FILES.iter().map(|f| (Path::new(*f), false)));
    files.extend(DEVICES.iter().map(|f| (Path::new(*f), true)));
    files.push((exposed.program, false));
    files.extend(exposed.libraries.iter().map(|l| (*l, false)));
    let mut bound: std::collections::BTreeSet<&Path> = Default::default();
    for (file, writable) in files {
        if !file.is_absolute() || !file.exists() || under_system_dir(file) || !bound.insert(file) {
            continue;
        }
        mkdirs(file, &mut steps, &mut made)?;
        steps.push(Step::Touch(cstr(&inside(file))?));
        steps.push(Step::Bind {
            src: cstr(file)?,
            dst: cstr(&inside(file))?,
            writable,
        });
    }
    Ok(NamespacePlan {
        clone_flags,
        maps,
        root: cstr(work_dir)?,
        steps,
        scratch: c"/tmp".into(),
        view: true,
    })
}

/// The Landlock domain for a worker working in `work_dir`.
fn landlock_plan(work_dir: &Path, exposed: &Exposed<'_>) -> io::Result<LandlockPlan> {
    let abi = landlock_abi();
    if abi == 0 {
        return Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "the kernel has no Landlock",
        ));
    }
    let mut fs = ll::ABI1_ALL;
    if abi >= 2 {
        fs |= ll::REFER;
    }
    if abi >= 3 {
        fs |= ll::TRUNCATE;
    }
    if abi >= 5 {
        fs |= ll::IOCTL_DEV;
    }
    let (net, scoped) = (
        if abi >= 4 {
            ll::NET_BIND_TCP | ll::NET_CONNECT_TCP
        } else {
            0
        },
        if abi >= 6 {
            ll::SCOPE_ABSTRACT_UNIX_SOCKET | ll::SCOPE_SIGNAL
        } else {
            0
        },
    );
    let attr_size = if abi >= 6 {
        24
    } else if abi >= 4 {
        16
    } else {
        8
    };
    let read_exec = ll::READ_FILE | ll::READ_DIR | ll::EXECUTE;
    let file_read = ll::READ_FILE | ll::EXECUTE;
    let mut rules = Vec::new();
    for dir in SYSTEM_DIRS {
        rules.push((cstr(Path::new(dir))?, read_exec));
    }
    for f in SYSTEM_FILES {
        rules.push((cstr(Path::new(f))?, ll::READ_FILE));
    }
    for d in DEVICES {
        rules.push((cstr(Path::new(d))?, (ll::READ_FILE | ll::WRITE_FILE) & fs));
    }
    rules.push((cstr(exposed.program)?, file_read));
    for lib in &exposed.libraries {
        rules.push((cstr(lib)?, file_read));
    }
    rules.push((cstr(work_dir)?, fs));
    for (_, rights) in &mut rules {
        *rights &= fs;
    }
    // File rules may only hold file rights.
    let dirs: Vec<bool> = rules
        .iter()
        .map(|(p, _)| Path::new(std::ffi::OsStr::from_bytes(p.to_bytes())).is_dir())
        .collect();
    for ((_, rights), is_dir) in rules.iter_mut().zip(dirs) {
        if !is_dir {
            *rights &= ll::FILE_RIGHTS;
        }
    }
    Ok(LandlockPlan {
        attr: RulesetAttr {
            handled_access_fs: fs,
            handled_access_net: net,
            scoped,
        },
        attr_size,
        rules,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_weaken_in_order_and_parse() {
        assert_eq!(Level::Namespaces.weaker(), Some(Level::Landlock));
        assert_eq!(Level::Landlock.weaker(), Some(Level::Basic));
        assert_eq!(Level::Basic.weaker(), None);
        assert_eq!(Level::from_name("landlock"), Some(Level::Landlock));
        assert_eq!(Level::from_name("none"), None);
    }

    #[test]
    fn the_view_binds_the_program_and_libraries_and_a_private_tmp() {
        let dir = tempfile::tempdir().unwrap();
        let lib = dir.path().join("cache/kernel-1.so");
        std::fs::create_dir_all(lib.parent().unwrap()).unwrap();
        std::fs::write(&lib, b"").unwrap();
        let prog = std::env::current_exe().unwrap();
        let root = dir.path().join("root");
        let plan = namespace_plan(
            &root,
            &Exposed {
                program: &prog,
                libraries: vec![&lib],
            },
            1 << 20,
            false,
            (1000, 1000),
        )
        .unwrap();
        let bound: Vec<String> = plan
            .steps
            .iter()
            .filter_map(|s| match s {
                Step::Bind { dst, .. } => Some(dst.to_string_lossy().into_owned()),
                _ => None,
            })
            .collect();
        let inside = |p: &Path| root.join(p.strip_prefix("/").unwrap());
        assert!(bound.contains(&inside(&lib).to_string_lossy().into_owned()));
        assert!(bound.iter().any(|b| b.ends_with("/dev/null")), "{bound:?}");
        // The scratch tmpfs comes before any bind.
        let first_bind = plan
            .steps
            .iter()
            .position(|s| matches!(s, Step::Bind { .. }))
            .unwrap();
        let tmpfs = plan
            .steps
            .iter()
            .position(|s| matches!(s, Step::Tmpfs { .. }))
            .unwrap();
        assert!(tmpfs < first_bind);
        assert_eq!(plan.maps.len(), 3);
        assert_eq!(plan.maps[1].1.to_str().unwrap(), "65534 1000 1\n");
        assert!(plan.clone_flags & libc::CLONE_NEWUSER != 0);
    }
}
