//! Compiling an operator package with g++ into two shared objects: the host
//! library (op_host tiling code + `runtime_src/host_entry.cpp`) and the kernel
//! library (op_kernel code + `runtime_src/kernel_entry.cpp`), with a
//! content-hash cache so that unchanged sources are never recompiled.
//!
//! Commands (see [`COMMON_FLAGS`], [`LINK_FLAGS`]):
//!
//! ```text
//! g++ <common> -I <sim include> -c runtime_src/kernel_entry.cpp -o rt-kernel-<key>.o   (once, cached)
//! g++ <common> -I <sim include> -I op_host -I op_kernel -DASCENDOPT_KERNEL_SIDE
//!     -include op_host/<op>_tiling.h <defines> op_kernel/<op>.cpp rt-kernel-<key>.o
//!     -shared -Wl,--no-undefined [-fuse-ld=gold] -o kernel-<key>.so
//! ```
//!
//! (gold where the compiler can use it: [`GOLD_FLAG`]).
//!
//! and the same for the host without the kernel-side define and header. The
//! host and kernel compilers run concurrently (two g++ processes).
//!
//! Where things are found ([`Toolchain::from_env`]):
//! - compiler: `g++` on `PATH`, or env `ASCENDOPT_CXX`;
//! - emulation headers: `crates/sim/include` of this source tree (located at
//!   compile time from `CARGO_MANIFEST_DIR`), or env `ASCENDOPT_SIM_INCLUDE`;
//! - runtime translation units: `crates/sim/runtime_src`, or env
//!   `ASCENDOPT_SIM_RUNTIME_SRC`.
//!
//! Cache ([`BuildCache`]): one flat directory (env `ASCENDOPT_CACHE_DIR`, else
//! `$XDG_CACHE_HOME/ascendopt/build`, else `$HOME/.cache/ascendopt/build`)
//! holding `host-<key>.so`, `kernel-<key>.so` and `rt-<unit>-<key>.o`. Each
//! unit has its own SHA-256 key over: the g++ version line, the flags, every
//! file under the emulation include and runtime_src directories, the unit's
//! sources and (kernel) forced tiling header with their absolute paths (they
//! end up in `__FILE__` and diagnostics), the defines, and every regular
//! non-hidden file under the package include directories except the *other*
//! unit's sources — so editing `op_kernel/x.cpp` rebuilds only the kernel and
//! editing `op_host/x.cpp` (the tiling function) only the host, while a
//! header change rebuilds whichever side can see it. Headers included from
//! outside these directories (other than the system's) are not tracked.
//!
//! Invariants:
//! - A cache entry is only ever created by an atomic rename of a complete
//!   file, so a reader never sees a half-written library and two processes
//!   building the same operator at once both succeed (the second rename
//!   replaces an identical file).
//! - A compile failure is a [`BuildError::Compile`] whose summary names the
//!   first error's file and line; nothing is cached for it.
//!
//! - Only ascendopt writes the cache (the worker's view holds just the
//!   libraries it loads, read-only), and every file it writes has its
//!   content hash beside it (`integrity.rs`): a cached file whose contents
//!   changed is a cache miss with a warning, never a silent reuse, and a
//!   library that changed since its build is never loaded.
//! - The key holds the compiler's identity: the path it resolves to and
//!   its version line, and every flag.
//! - g++ and everything it starts run contained
//!   ([`crate::worker::contained`]): own process group and PID namespace
//!   where possible, a parent-death signal, CPU, memory
//!   ([`COMPILER_MEMORY_BYTES`]) and file-size ([`COMPILER_FILE_BYTES`])
//!   limits; on a time-out the whole group is killed.
//!
//! Not done: the cache is never pruned; stale `.tmp-*` files of a killed
//! build stay until removed by hand.

mod api_names;
mod diagnostics;
pub mod instrument;
pub mod integrity;
pub mod launch;
mod pch;
pub mod project;
pub mod tpl;
pub mod variants;

use crate::worker::contained::{self, ContainedLimits};
use sha2::{Digest, Sha256};
use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Flags of every g++ invocation. `-O1`: on ops/add_custom it compiles about
/// as fast as `-O0` and clearly faster than `-O2` (host + kernel compiled
/// concurrently on the 2-core build machine: -O0 0.88 s, -O1 0.92 s, -O2
/// 1.42 s, best of 3 under load), while inlining the header wrappers around
/// each runtime call. `-g1` adds line tables only, so a crash address can be
/// mapped to a kernel line (addr2line/gdb). `-fvisibility=default` keeps the
/// kernel entry symbols loadable. No `-ffast-math`: results must follow IEEE
/// rules.
pub const COMMON_FLAGS: &[&str] = &[
    "-std=c++17",
    "-O1",
    "-g1",
    "-fPIC",
    "-fvisibility=default",
    "-pipe",
    "-fmessage-length=0",
    "-fdiagnostics-color=never",
    "-fmax-errors=20",
];

/// Flags of the link step of a library: a shared object that must not leave
/// any symbol undefined (a missing API becomes a build error, not a load
/// error in the worker).
pub const LINK_FLAGS: &[&str] = &["-shared", "-Wl,--no-undefined"];

/// Added to the host library's link: CANN's build links an operator's
/// op_host sources into separate libraries (the OpDef `*_def.cpp` into
/// `opsproto` / `op_host_aclnn`, the tiling into `optiling`, as each
/// operator's CMakeLists.txt says with `target_sources`), so a non-inline
/// function that a header both include defines is not a duplicate there
/// (cann-ops activation/gelu_quant: `GetMod` in gelu_quant_tiling_base.h).
/// The simulator links them into one library; the first definition is
/// taken.
pub const HOST_LINK_FLAGS: &[&str] = &["-Wl,--allow-multiple-definition"];

/// Added to the link when the compiler can use GNU gold: it links a kernel
/// library in ~25 ms against ~80 ms for the default BFD linker (ops/neg,
/// best of 3), and every evaluation links two libraries.
pub const GOLD_FLAG: &str = "-fuse-ld=gold";

/// Define passed to the kernel unit (the tiling header expands differently).
pub const KERNEL_SIDE_DEFINE: &str = "ASCENDOPT_KERNEL_SIDE";

/// Every define of the kernel unit: ours; `ASCENDC_CPU_DEBUG`, which
/// CANN's CPU-debug build of a kernel defines to 1 (guide 6.2.3.11.3 "CPU
/// 孪生调试", and the `ASCENDC_CPU_DEBUG == 1` branches of 6.2.2.1.1
/// LocalTensor): real kernels guard their `<<<>>>` launch helpers with
/// `#ifndef ASCENDC_CPU_DEBUG`, and a CPU build is what the simulator is.
/// `__CCE_KT_TEST__`, the other CPU-debug macro, stays undefined: kernels
/// drop device behaviour under it (a SyncAll), and the simulator runs the
/// device's. The device compiler's architecture macros come from the chip
/// ([`BuildRequest::arch_defines`]).
pub const KERNEL_DEFINES: &[&str] = &[KERNEL_SIDE_DEFINE, "ASCENDC_CPU_DEBUG=1"];

/// The device compiler's architecture macros of the default chip, the
/// 910B2's vector cores (its profile's `[arch]`, checked equal by a test),
/// so a kernel takes the branches it takes on that chip: `__NPU_ARCH__`
/// 2201 for Atlas A2 (guide 2.4.1, table 2-17), `__CCE_AICORE__` 220 (the
/// dav-c220 cores; real kernels test `__CCE_AICORE__ == 220` for the 910B)
/// and `__DAV_C220_VEC__` (the vector core's half of a mixed build).
pub const DEFAULT_ARCH_DEFINES: &[&str] = &[
    "__NPU_ARCH__=2201",
    "__CCE_AICORE__=220",
    "__DAV_C220_VEC__",
];

/// Force-included into every kernel unit before the tiling header: the
/// names the msopgen build's per-variant macros expand to (`DT_FLOAT16`,
/// `FORMAT_ND`, ...), see [`variant_defines`].
pub const MSOPGEN_KERNEL_HEADER: &str = "ascendopt/kernel/msopgen_build.h";

/// A g++ compile (of one unit) that takes longer than this is stopped.
pub const DEFAULT_COMPILE_TIMEOUT: Duration = Duration::from_secs(120);

/// Address space of each process of a compile (RLIMIT_AS): cc1plus needs
/// well under 1 GiB for any operator of the suite; a compile that needs
/// more fails with the compiler's "out of memory" message.
pub const COMPILER_MEMORY_BYTES: u64 = 4 << 30;

/// Largest file a compile may write (RLIMIT_FSIZE): a library of the suite
/// is a few MiB.
pub const COMPILER_FILE_BYTES: u64 = 256 << 20;

/// The limits of a g++ run that may take `timeout`.
fn compiler_limits(timeout: Duration) -> ContainedLimits {
    ContainedLimits {
        wall: timeout,
        address_space_bytes: COMPILER_MEMORY_BYTES,
        file_size_bytes: COMPILER_FILE_BYTES,
        capture_bytes: 4 << 20,
    }
}

/// Bumped when the layout of the cache or the key changes.
const CACHE_FORMAT: &str = "ascendopt-build-v2";

/// Which of the two libraries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// op_host: tiling function, OpDef.
    Host,
    /// op_kernel: the AscendC kernel.
    Kernel,
}

impl Unit {
    /// `"host"` or `"kernel"`.
    pub fn name(self) -> &'static str {
        match self {
            Unit::Host => "host",
            Unit::Kernel => "kernel",
        }
    }

    /// The runtime translation unit linked into this library.
    fn runtime_source(self) -> &'static str {
        match self {
            Unit::Host => "host_entry.cpp",
            Unit::Kernel => "kernel_entry.cpp",
        }
    }
}

impl fmt::Display for Unit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The compiler and the simulator's C++ sources.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Toolchain {
    /// The C++ compiler (`g++`).
    pub cxx: PathBuf,
    /// The AscendC emulation headers (`crates/sim/include`).
    pub include_dir: PathBuf,
    /// `kernel_entry.cpp` and `host_entry.cpp` (`crates/sim/runtime_src`).
    pub runtime_src_dir: PathBuf,
}

impl Toolchain {
    /// `g++` (env `ASCENDOPT_CXX`), the include directory of this source tree
    /// (env `ASCENDOPT_SIM_INCLUDE`) and its runtime_src directory (env
    /// `ASCENDOPT_SIM_RUNTIME_SRC`).
    pub fn from_env() -> Toolchain {
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
        let var = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        Toolchain {
            cxx: var("ASCENDOPT_CXX").unwrap_or_else(|| PathBuf::from("g++")),
            include_dir: var("ASCENDOPT_SIM_INCLUDE").unwrap_or_else(|| manifest.join("include")),
            runtime_src_dir: var("ASCENDOPT_SIM_RUNTIME_SRC")
                .unwrap_or_else(|| manifest.join("runtime_src")),
        }
    }
}

/// What to compile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildRequest {
    /// Compiler and simulator sources.
    pub toolchain: Toolchain,
    /// op_host sources (`op_host/*.cpp`).
    pub host_sources: Vec<PathBuf>,
    /// op_kernel sources (`op_kernel/*.cpp`).
    pub kernel_sources: Vec<PathBuf>,
    /// Package include directories for both units (`op_host/`, `op_kernel/`),
    /// searched after the emulation headers.
    pub include_dirs: Vec<PathBuf>,
    /// Header force-included into the kernel unit (`op_host/<op>_tiling.h`).
    pub tiling_header: Option<PathBuf>,
    /// Extra defines for both units, `NAME` or `NAME=VALUE`.
    pub defines: Vec<String>,
    /// The device compiler's architecture macros of the chip the kernel is
    /// built for (`HwProfile::kernel_arch_defines`), added to the kernel
    /// unit: [`DEFAULT_ARCH_DEFINES`] for the 910B2.
    pub arch_defines: Vec<String>,
    /// The kernel variants: one kernel library is built for each entry,
    /// with that entry's defines added to the kernel unit (the msopgen
    /// build's `DTYPE_<ARG>`, `ORIG_DTYPE_<ARG>`, `FORMAT_<ARG>` of one
    /// dtype combination: [`variant_defines`]). Empty: one kernel library
    /// without variant defines.
    pub kernel_variants: Vec<Vec<String>>,
    /// Stop a unit's g++ after this long.
    pub timeout: Duration,
}

impl BuildRequest {
    /// The request for an msopgen-layout package: `op_host/*.cpp` (without
    /// the op-API layer), `op_kernel/*.cpp` (only `op_kernel/<folder>.cpp`
    /// when there are several and one is named after the folder: the kernel
    /// the msopgen build compiles, which includes the others), include dirs
    /// `op_host` and `op_kernel`, what the project around the folder adds
    /// ([`project::discover`]), and the tiling header `op_host/*_tiling.h`
    /// (if several, the one named after the folder). No defines, the
    /// default chip's [`DEFAULT_ARCH_DEFINES`], [`DEFAULT_COMPILE_TIMEOUT`].
    pub fn for_op_dir(op_dir: &Path, toolchain: Toolchain) -> Result<BuildRequest, BuildError> {
        let host_dir = op_dir.join("op_host");
        let kernel_dir = op_dir.join("op_kernel");
        let mut host_sources = files_with_suffix(&host_dir, ".cpp")?;
        host_sources.retain(|p| !ascendopt_op::package::is_op_api_source(p));
        let mut kernel_sources = files_with_suffix(&kernel_dir, ".cpp")?;
        // The msopgen build compiles the kernel file named after the
        // operator; other .cpp files beside it are parts it includes.
        if kernel_sources.len() > 1 {
            let op_name = op_dir
                .file_name()
                .map(|n| format!("{}.cpp", n.to_string_lossy()));
            if let Some(main) = kernel_sources
                .iter()
                .find(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()) == op_name)
                .cloned()
            {
                kernel_sources = vec![main];
            }
        }
        if host_sources.is_empty() || kernel_sources.is_empty() {
            return Err(BuildError::BadRequest {
                message: format!(
                    "{}: expected .cpp files in op_host/ and op_kernel/",
                    op_dir.display()
                ),
            });
        }
        let tiling_headers = files_with_suffix(&host_dir, "_tiling.h")?;
        let tiling_header = match tiling_headers.len() {
            0 => None,
            1 => tiling_headers.into_iter().next(),
            _ => {
                let op_name = op_dir.file_name().map(|n| n.to_string_lossy().into_owned());
                let wanted = op_name.map(|n| format!("{n}_tiling.h"));
                let found = tiling_headers
                    .iter()
                    .find(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()) == wanted)
                    .cloned();
                match found {
                    Some(path) => Some(path),
                    None => {
                        return Err(BuildError::BadRequest {
                            message: format!(
                                "{}: several *_tiling.h headers and none named after the folder",
                                host_dir.display()
                            ),
                        })
                    }
                }
            }
        };
        let mut include_dirs = vec![host_dir, kernel_dir];
        let sources: Vec<PathBuf> = host_sources
            .iter()
            .chain(&kernel_sources)
            .cloned()
            .collect();
        let project = project::discover(op_dir, &sources, &include_dirs, &toolchain.include_dir);
        let tiling_header = tiling_header.or_else(|| {
            let folder = op_dir.file_name().map(|n| n.to_string_lossy().into_owned());
            project.tiling_header_for(&project::camel_case(&folder.unwrap_or_default()))
        });
        host_sources.extend(project.host_sources);
        include_dirs.extend(project.include_dirs);
        Ok(BuildRequest {
            toolchain,
            host_sources,
            kernel_sources,
            include_dirs,
            tiling_header,
            defines: Vec::new(),
            arch_defines: DEFAULT_ARCH_DEFINES.iter().map(|d| d.to_string()).collect(),
            kernel_variants: Vec::new(),
            timeout: DEFAULT_COMPILE_TIMEOUT,
        })
    }
}

/// The sorted regular files of `dir` whose name ends with `suffix`.
fn files_with_suffix(dir: &Path, suffix: &str) -> Result<Vec<PathBuf>, BuildError> {
    let read_err = |source| BuildError::Read {
        path: dir.to_path_buf(),
        source,
    };
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).map_err(read_err)? {
        let entry = entry.map_err(read_err)?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(suffix) && !name.starts_with('.') && entry.path().is_file() {
            out.push(entry.path());
        }
    }
    out.sort();
    Ok(out)
}

/// Where compiled libraries are kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildCache {
    dir: PathBuf,
}

impl BuildCache {
    /// A cache in `dir` (created on first build).
    pub fn at(dir: impl Into<PathBuf>) -> BuildCache {
        BuildCache { dir: dir.into() }
    }

    /// Env `ASCENDOPT_CACHE_DIR`, else `$XDG_CACHE_HOME/ascendopt/build`, else
    /// `$HOME/.cache/ascendopt/build`.
    pub fn from_env() -> Result<BuildCache, BuildError> {
        let var = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        if let Some(dir) = var("ASCENDOPT_CACHE_DIR") {
            return Ok(BuildCache::at(dir));
        }
        if let Some(dir) = var("XDG_CACHE_HOME") {
            return Ok(BuildCache::at(dir.join("ascendopt").join("build")));
        }
        if let Some(dir) = var("HOME") {
            return Ok(BuildCache::at(
                dir.join(".cache").join("ascendopt").join("build"),
            ));
        }
        Err(BuildError::NoCacheDir)
    }

    /// The cache directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

/// The two libraries of a successful build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Built {
    /// The host (tiling) library.
    pub host_lib: PathBuf,
    /// The kernel library (the first variant's).
    pub kernel_lib: PathBuf,
    /// One kernel library per variant of the request, in its order (just
    /// `kernel_lib` when the request names no variant).
    pub kernel_libs: Vec<PathBuf>,
    /// Hex SHA-256 naming this pair of libraries.
    pub key: String,
    /// Both libraries came from the cache.
    pub cached: bool,
    /// The host library came from the cache.
    pub host_cached: bool,
    /// The kernel library came from the cache.
    pub kernel_cached: bool,
    /// Wall time of the host compile (0 when cached).
    pub host_ms: u64,
    /// Wall time of the kernel compile (0 when cached).
    pub kernel_ms: u64,
    /// The knob values a parametrised host library reads at run time
    /// (`LaunchJob::knobs`); empty for an ordinary host library.
    pub host_knobs: Vec<i64>,
}

/// Why a build failed.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The compiler is not installed.
    #[error("{cxx} not found: install build-essential")]
    CompilerMissing {
        /// The compiler that was looked for.
        cxx: String,
    },
    /// The sources do not compile (and `also`, the other unit's failure
    /// when both fail).
    #[error("{unit} does not compile: {}{}: {message}{}", .file.display(), .line.map(|l| format!(":{l}")).unwrap_or_default(), .also.as_ref().map(|e| format!("; and {e}")).unwrap_or_default())]
    Compile {
        /// Which library.
        unit: Unit,
        /// File of the first error (a source of the unit if g++ named none).
        file: PathBuf,
        /// Line of the first error.
        line: Option<u32>,
        /// The first error, e.g. `not supported by the ascendopt simulator: Mmad`.
        message: String,
        /// g++'s stderr trimmed to the errors with file:line and snippets
        /// (of both units when both fail, each under a `== unit ==` line).
        diagnostics: String,
        /// The other unit's failure, when both fail.
        also: Option<Box<BuildError>>,
    },
    /// g++ ran longer than the request's timeout and was killed.
    #[error("{unit} compile timed out after {after_ms} ms")]
    Timeout {
        /// Which library.
        unit: Unit,
        /// How long it ran.
        after_ms: u64,
    },
    /// A source, header or directory could not be read.
    #[error("cannot read {}: {source}", .path.display())]
    Read {
        /// The path.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
    /// The cache directory could not be written.
    #[error("build cache {}: {source}", .path.display())]
    Cache {
        /// The path.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
    /// The compiler exists but could not be run.
    #[error("cannot run {cxx}: {source}")]
    Spawn {
        /// The compiler.
        cxx: String,
        /// The OS error.
        source: io::Error,
    },
    /// No cache directory can be derived from the environment.
    #[error("no build cache directory: set ASCENDOPT_CACHE_DIR or HOME")]
    NoCacheDir,
    /// The request itself is unusable.
    #[error("bad build request: {message}")]
    BadRequest {
        /// What is wrong.
        message: String,
    },
}

impl BuildError {
    /// `self` (the kernel's failure) with `other` (the host's) reported
    /// beside it, when both are compile errors or time-outs; else `self`.
    fn with_also(self, other: BuildError) -> BuildError {
        let other_reportable = matches!(
            other,
            BuildError::Compile { .. } | BuildError::Timeout { .. }
        );
        match self {
            BuildError::Compile {
                unit,
                file,
                line,
                message,
                diagnostics,
                also: None,
            } if other_reportable => {
                let mut diagnostics = format!("== {unit} ==\n{diagnostics}");
                if let BuildError::Compile {
                    unit: other_unit,
                    diagnostics: other_diag,
                    ..
                } = &other
                {
                    diagnostics.push_str(&format!("\n== {other_unit} ==\n{other_diag}"));
                }
                BuildError::Compile {
                    unit,
                    file,
                    line,
                    message,
                    diagnostics,
                    also: Some(Box::new(other)),
                }
            }
            this => this,
        }
    }

    /// The units that failed to compile, each with its first error: the
    /// error itself and, when both units fail, the other one.
    pub fn unit_failures(&self) -> Vec<&BuildError> {
        match self {
            BuildError::Compile { also, .. } => {
                let mut out = vec![self];
                if let Some(other) = also {
                    out.push(other);
                }
                out
            }
            other => vec![other],
        }
    }
}

/// The AscendC API names that occur in `files` (as words, outside `//`
/// comments) but nowhere in the simulator's headers under `include_dir`,
/// or there only as a stub that fails to compile: the APIs a package uses
/// that the simulator lacks. A name the package defines itself (a class,
/// struct, enum, namespace, macro or function of its own, such as a kernel
/// class named `Asinh`) is no API it lacks. Sorted, each once.
/// Unreadable files are skipped.
pub fn apis_missing_from_sim(files: &[PathBuf], include_dir: &Path) -> Vec<String> {
    let sim = diagnostics::sim_index(include_dir);
    let codes: Vec<String> = files
        .iter()
        .filter_map(|file| fs::read_to_string(file).ok())
        .map(|text| {
            text.lines()
                .map(|line| line.split("//").next().unwrap_or(""))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .collect();
    let mut own = std::collections::BTreeSet::new();
    for code in &codes {
        own.extend(names_defined_in(code));
    }
    let mut out = std::collections::BTreeSet::new();
    for code in &codes {
        for word in code
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
        {
            if api_names::is_api_name(word) && !sim.provides(word) && !own.contains(word) {
                out.insert(word.to_string());
            }
        }
    }
    out.into_iter().collect()
}

/// The names `code` defines: the word after `class`, `struct`, `union`,
/// `enum`, `namespace` or `#define`, and the name of every function
/// definition (an identifier, its parenthesised parameters, then `{`,
/// possibly after `const`, `noexcept` or `override`).
fn names_defined_in(code: &str) -> Vec<String> {
    let b = code.as_bytes();
    let is_word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let skip_ws = |mut i: usize| {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        i
    };
    let word_at = |i: usize| {
        let mut j = i;
        while j < b.len() && is_word(b[j]) {
            j += 1;
        }
        (&code[i..j], j)
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if !is_word(b[i]) || (i > 0 && is_word(b[i - 1])) {
            i += 1;
            continue;
        }
        let (word, end) = word_at(i);
        let after = skip_ws(end);
        if matches!(
            word,
            "class" | "struct" | "union" | "enum" | "namespace" | "define"
        ) {
            let (mut name, mut name_end) = word_at(after);
            if word == "enum" && name == "class" {
                (name, name_end) = word_at(skip_ws(name_end));
            }
            if !name.is_empty() {
                out.push(name.to_string());
            }
            i = name_end.max(end);
            continue;
        }
        if after < b.len() && b[after] == b'(' {
            // The matching `)`, then what follows it.
            let mut depth = 0usize;
            let mut j = after;
            while j < b.len() {
                match b[j] {
                    b'(' => depth += 1,
                    b')' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    b';' | b'{' | b'}' => break,
                    _ => {}
                }
                j += 1;
            }
            if j < b.len() && b[j] == b')' {
                let mut k = skip_ws(j + 1);
                loop {
                    let (w, e) = word_at(k);
                    if matches!(w, "const" | "noexcept" | "override") {
                        k = skip_ws(e);
                    } else {
                        break;
                    }
                }
                if k < b.len() && b[k] == b'{' {
                    out.push(word.to_string());
                }
            }
        }
        i = end;
    }
    out
}

/// What both [`build`] and [`build_host`] derive from a request: the
/// compiler's facts, the simulator tree's hash and the plan of each unit.
struct Prepared {
    facts: std::sync::Arc<CompilerFacts>,
    sim_tree: String,
    host_sources: Vec<PathBuf>,
    kernel_sources: Vec<PathBuf>,
    host: UnitPlan,
    /// One plan per kernel variant (one without variant defines when the
    /// request names none).
    kernels: Vec<UnitPlan>,
}

impl Prepared {
    fn key_base(&self) -> KeyBase<'_> {
        KeyBase {
            compiler_path: &self.facts.path,
            compiler_version: &self.facts.version,
            sim_tree: &self.sim_tree,
            linker: self.facts.gold.then_some(GOLD_FLAG),
        }
    }
}

fn prepare(req: &BuildRequest) -> Result<Prepared, BuildError> {
    let toolchain = &req.toolchain;
    let Plans {
        host,
        kernels,
        host_sources,
        kernel_sources,
    } = plans(req)?;
    let facts = compiler_facts(&toolchain.cxx, req.timeout)?;
    let sim_tree = hash_sim_tree(toolchain)?;
    Ok(Prepared {
        facts,
        sim_tree,
        host_sources,
        kernel_sources,
        host,
        kernels,
    })
}

/// Compiles (or takes from the cache) the ordinary host library of `req`
/// alone, the one [`build`] builds when the host code has no knobs: for a
/// caller that needs the host library (to ask its OpDef which kernel
/// variants to build) before the kernel. A later [`build`] of the same
/// request finds it in the cache.
pub fn build_host(req: &BuildRequest, cache: &BuildCache) -> Result<PathBuf, BuildError> {
    let prepared = prepare(req)?;
    let common = prepared.key_base();
    let key = prepared.host.key(&common, &prepared.kernel_sources)?;
    fs::create_dir_all(cache.dir()).map_err(|source| BuildError::Cache {
        path: cache.dir().to_path_buf(),
        source,
    })?;
    let lib = cache.dir().join(format!("host-{key}.so"));
    if !integrity::cached(&lib) {
        let rt_obj =
            ensure_runtime_object(Unit::Host, &req.toolchain, &common, cache, req.timeout)?;
        prepared.host.compile(
            &req.toolchain,
            &rt_obj,
            common.linker,
            &lib,
            cache,
            req.timeout,
        )?;
    }
    Ok(lib)
}

/// Compiles (or takes from the cache) the kernel libraries of `req` alone,
/// one per kernel variant (one when the request names none), the same
/// ones [`build`] builds: for a caller that already knows the host unit's
/// fate ([`build_host`]).
pub fn build_kernels(req: &BuildRequest, cache: &BuildCache) -> Result<Vec<PathBuf>, BuildError> {
    let prepared = prepare(req)?;
    let common = prepared.key_base();
    fs::create_dir_all(cache.dir()).map_err(|source| BuildError::Cache {
        path: cache.dir().to_path_buf(),
        source,
    })?;
    let mut libs = Vec::with_capacity(prepared.kernels.len());
    for plan in &prepared.kernels {
        let key = plan.key(&common, &prepared.host_sources)?;
        let lib = cache.dir().join(format!("kernel-{key}.so"));
        if !integrity::cached(&lib) {
            let rt_obj =
                ensure_runtime_object(Unit::Kernel, &req.toolchain, &common, cache, req.timeout)?;
            plan.compile(
                &req.toolchain,
                &rt_obj,
                common.linker,
                &lib,
                cache,
                req.timeout,
            )?;
        }
        libs.push(lib);
    }
    Ok(libs)
}

/// Compiles (or takes from the cache) the host and kernel libraries of `req`.
pub fn build(req: &BuildRequest, cache: &BuildCache) -> Result<Built, BuildError> {
    let toolchain = &req.toolchain;
    let prepared = prepare(req)?;
    let Prepared {
        host_sources,
        kernel_sources,
        host,
        kernels,
        ..
    } = &prepared;
    let common = prepared.key_base();
    let host_key = host.key(&common, kernel_sources)?;
    let kernel_keys = kernels
        .iter()
        .map(|k| k.key(&common, host_sources))
        .collect::<Result<Vec<_>, _>>()?;
    fs::create_dir_all(cache.dir()).map_err(|source| BuildError::Cache {
        path: cache.dir().to_path_buf(),
        source,
    })?;
    let mut host_lib = cache.dir().join(format!("host-{host_key}.so"));
    let kernel_libs: Vec<PathBuf> = kernel_keys
        .iter()
        .map(|key| cache.dir().join(format!("kernel-{key}.so")))
        .collect();
    let mut host_cached = integrity::cached(&host_lib);
    let kernel_cached = kernel_libs.iter().all(|lib| integrity::cached(lib));
    // Knob values set at run time: one host library per tiling region
    // shape, whatever the knobs' values (Stage II changes only those).
    // Tried unless an earlier attempt with the same rewritten text failed
    // to compile (a knob used in a constant expression); the ordinary host
    // library is built then.
    let mut param_host = None;
    if !host_cached {
        if let Some(param) = parametrise_host(host_sources) {
            let plan = UnitPlan {
                param: Some(param),
                ..host.clone()
            };
            let key = plan.key(&common, kernel_sources)?;
            let lib = cache.dir().join(format!("host-param-{key}.so"));
            let unusable = cache.dir().join(format!("host-param-{key}.unusable"));
            if integrity::cached(&lib) || !unusable.exists() {
                param_host = Some((plan, lib, unusable));
            }
        }
    }

    let run = |plan: &UnitPlan, out: &Path, cached: bool| -> Result<u64, BuildError> {
        if cached {
            return Ok(0);
        }
        let start = Instant::now();
        let rt_obj = ensure_runtime_object(plan.unit, toolchain, &common, cache, req.timeout)?;
        plan.compile(toolchain, &rt_obj, common.linker, out, cache, req.timeout)?;
        Ok(elapsed_ms(start))
    };
    // The host thread: the parametrised library when there is one (its
    // values in `host_knobs`), else (or when it does not compile) the
    // ordinary one.
    let host_job = || -> Result<HostBuilt, BuildError> {
        if let Some((plan, lib, unusable)) = &param_host {
            let cached = integrity::cached(lib);
            match run(plan, lib, cached) {
                Ok(ms) => {
                    return Ok(HostBuilt {
                        ms,
                        param_lib: Some((lib.clone(), cached)),
                        knobs: plan.param.as_ref().map_or(Vec::new(), |p| p.values.clone()),
                    });
                }
                // The rewritten text does not compile: remembered. A
                // compile stopped by the time limit (an overloaded
                // machine) is not held against it.
                Err(BuildError::Compile { .. }) => {
                    let _ = fs::write(unusable, b"");
                }
                Err(BuildError::Timeout { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        run(host, &host_lib, host_cached).map(|ms| HostBuilt {
            ms,
            param_lib: None,
            knobs: Vec::new(),
        })
    };
    // The kernel variants one after the other, beside the host: a failing
    // variant stops the others (they share the sources).
    let kernel_job = || -> Result<u64, BuildError> {
        let mut ms = 0;
        for (plan, lib) in kernels.iter().zip(&kernel_libs) {
            ms += run(plan, lib, integrity::cached(lib))?;
        }
        Ok(ms)
    };
    let (host_res, kernel_res) = std::thread::scope(|scope| {
        let host_thread = scope.spawn(host_job);
        let kernel_res = kernel_job();
        let host_res = host_thread.join().unwrap_or_else(|_| {
            Err(BuildError::BadRequest {
                message: "host compile thread panicked".into(),
            })
        });
        (host_res, kernel_res)
    });
    // The kernel's error comes first (it is the one a refinement step
    // edits), and a host that fails too is reported with it.
    let (kernel_ms, host_built) = match (kernel_res, host_res) {
        (Ok(k), Ok(h)) => (k, h),
        (Err(kernel), Err(host)) => return Err(kernel.with_also(host)),
        (Err(e), Ok(_)) | (Ok(_), Err(e)) => return Err(e),
    };
    let HostBuilt {
        ms: host_ms,
        param_lib,
        knobs: host_knobs,
    } = host_built;
    if let Some((lib, cached)) = param_lib {
        host_cached = cached;
        host_lib = lib;
    }
    let mut pair = Sha256::new();
    pair.update(host_key.as_bytes());
    for kernel_key in &kernel_keys {
        pair.update(kernel_key.as_bytes());
    }
    let kernel_lib = kernel_libs.first().cloned().unwrap_or_default();
    Ok(Built {
        host_lib,
        kernel_lib,
        kernel_libs,
        key: format!("{:x}", pair.finalize()),
        cached: host_cached && kernel_cached,
        host_cached,
        kernel_cached,
        host_ms,
        kernel_ms,
        host_knobs,
    })
}

/// The units of a request.
struct Plans {
    host: UnitPlan,
    /// One per kernel variant (one without variant defines when the
    /// request names none).
    kernels: Vec<UnitPlan>,
    host_sources: Vec<PathBuf>,
    kernel_sources: Vec<PathBuf>,
}

/// How `req`'s units are compiled (paths canonical, defines checked).
fn plans(req: &BuildRequest) -> Result<Plans, BuildError> {
    check_defines(&req.defines)?;
    let toolchain = &req.toolchain;
    let include_dirs = canonical_all(&req.include_dirs)?;
    let host_sources = canonical_all(&req.host_sources)?;
    let kernel_sources = canonical_all(&req.kernel_sources)?;
    let tiling_header = req.tiling_header.as_deref().map(canonical).transpose()?;
    // A kernel with a tiling header of its own under the same name, beside
    // its sources (Ascend's samples: op_kernel/<op>_tiling.h, a plain
    // struct the kernel copies itself, beside op_host's TilingData, both
    // under one include guard), includes that one: CANN's build never puts
    // the host header into the kernel, so forcing it in would hide the
    // kernel's own behind the shared guard.
    let tiling_header = tiling_header.filter(|h| {
        let own = |src: &PathBuf| {
            let own = src.parent().zip(h.file_name()).map(|(d, n)| d.join(n));
            own.is_some_and(|own| own.is_file() && fs::read(&own).ok() != fs::read(h).ok())
        };
        !kernel_sources.iter().any(own)
    });
    if host_sources.is_empty() || kernel_sources.is_empty() {
        return Err(BuildError::BadRequest {
            message: "need at least one host and one kernel source".into(),
        });
    }
    let root = common_root(
        include_dirs
            .iter()
            .chain(&host_sources)
            .chain(&kernel_sources)
            .chain(&tiling_header),
    );
    let host = UnitPlan {
        unit: Unit::Host,
        root: root.clone(),
        sources: host_sources.clone(),
        forced_headers: Vec::new(),
        include_dirs: include_dirs.clone(),
        defines: req.defines.clone(),
        param: None,
    };
    let mut kernel_defines: Vec<String> = KERNEL_DEFINES.iter().map(|d| d.to_string()).collect();
    kernel_defines.extend(req.arch_defines.iter().cloned());
    kernel_defines.extend(req.defines.iter().cloned());
    let mut kernel_forced = vec![toolchain.include_dir.join(MSOPGEN_KERNEL_HEADER)];
    kernel_forced.extend(tiling_header);
    let kernel_base = UnitPlan {
        unit: Unit::Kernel,
        root,
        sources: kernel_sources.clone(),
        forced_headers: kernel_forced,
        include_dirs,
        defines: kernel_defines,
        param: None,
    };
    for variant in &req.kernel_variants {
        check_defines(variant)?;
    }
    let kernels: Vec<UnitPlan> = if req.kernel_variants.is_empty() {
        vec![kernel_base]
    } else {
        req.kernel_variants
            .iter()
            .map(|variant| {
                let mut plan = kernel_base.clone();
                plan.defines.extend(variant.iter().cloned());
                plan
            })
            .collect()
    };
    Ok(Plans {
        host,
        kernels,
        host_sources,
        kernel_sources,
    })
}

/// The preprocessed text (`g++ -E`, line markers kept) of `req`'s host
/// unit and of its first kernel variant, with the flags, include paths,
/// defines and forced headers of the build: what the static check reads.
/// The two run concurrently, contained like every compile.
pub fn preprocess(req: &BuildRequest) -> Result<Vec<(Unit, String)>, BuildError> {
    let Plans { host, kernels, .. } = plans(req)?;
    let toolchain = &req.toolchain;
    let run = |plan: &UnitPlan| -> Result<(Unit, String), BuildError> {
        // Without the precompiled standard library: the static check
        // reads the package's own tokens, which the bundle does not change.
        let mut args = plan.flag_args(toolchain, None);
        args.extend(plan.sources.iter().map(|s| s.clone().into()));
        args.push("-E".into());
        let ran = contained::run(
            &toolchain.cxx,
            &args,
            &[("LC_ALL", "C"), ("LANG", "C")],
            &ContainedLimits {
                capture_bytes: 256 << 20,
                ..compiler_limits(req.timeout)
            },
        )
        .map_err(|source| spawn_error(&toolchain.cxx, source))?;
        match ran.status {
            Some(status) if status.success() => {
                Ok((plan.unit, String::from_utf8_lossy(&ran.stdout).into_owned()))
            }
            Some(status) => {
                let stderr = String::from_utf8_lossy(&ran.stderr);
                let first = diagnostics::first_error(&stderr, &toolchain.include_dir);
                let main = plan.sources.first().cloned().unwrap_or_default();
                Err(BuildError::Compile {
                    unit: plan.unit,
                    file: first
                        .as_ref()
                        .and_then(|f| f.file.clone())
                        .map(PathBuf::from)
                        .unwrap_or(main),
                    line: first.as_ref().and_then(|f| f.line),
                    message: first
                        .map(|f| f.message)
                        .unwrap_or_else(|| format!("g++ -E failed ({status})")),
                    diagnostics: diagnostics::trim(&stderr),
                    also: None,
                })
            }
            None => Err(BuildError::Timeout {
                unit: plan.unit,
                after_ms: req.timeout.as_millis() as u64,
            }),
        }
    };
    let kernel = kernels.first().ok_or_else(|| BuildError::BadRequest {
        message: "no kernel unit".into(),
    })?;
    let (h, k) = std::thread::scope(|scope| {
        let h = scope.spawn(|| run(&host));
        let k = run(kernel);
        (h.join(), k)
    });
    let h = h.map_err(|_| BuildError::BadRequest {
        message: "the preprocessing thread panicked".into(),
    })??;
    Ok(vec![h, k?])
}

/// What the host thread built.
struct HostBuilt {
    /// Compile wall time (0 when cached).
    ms: u64,
    /// The parametrised library and whether it came from the cache; None
    /// when the ordinary one was built.
    param_lib: Option<(PathBuf, bool)>,
    /// The parametrised library's knob values.
    knobs: Vec<i64>,
}

/// The deepest directory that holds every path of `paths` (a file counts
/// by its directory); `/` when they share nothing else.
fn common_root<'p>(paths: impl Iterator<Item = &'p PathBuf>) -> PathBuf {
    let mut root: Option<PathBuf> = None;
    for path in paths {
        let dir = if path.is_dir() {
            path.as_path()
        } else {
            path.parent().unwrap_or(path)
        };
        root = Some(match root {
            None => dir.to_path_buf(),
            Some(r) => r
                .components()
                .zip(dir.components())
                .take_while(|(a, b)| a == b)
                .map(|(a, _)| a)
                .collect(),
        });
    }
    root.filter(|r| !r.as_os_str().is_empty())
        .unwrap_or_else(|| PathBuf::from("/"))
}

/// Rejects defines that are not `NAME` or `NAME=VALUE` with an identifier
/// name (they are passed as single `-D` arguments, never through a shell).
fn check_defines(defines: &[String]) -> Result<(), BuildError> {
    for define in defines {
        let name = define.split('=').next().unwrap_or("");
        let ident = !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !ident || define.contains(['\n', '\0']) {
            return Err(BuildError::BadRequest {
                message: format!("define {define:?} is not NAME or NAME=VALUE"),
            });
        }
    }
    Ok(())
}

/// What a compiler is: probed once per process and compiler path.
struct CompilerFacts {
    /// The file it resolves to (through PATH and symlinks).
    path: PathBuf,
    /// The first line of `--version`.
    version: String,
    /// It links with GNU gold when asked ([`GOLD_FLAG`]).
    gold: bool,
}

/// The facts of `cxx`, from the process-wide memo or probed (two short g++
/// runs the first time; the linker probe gives up after `timeout`).
fn compiler_facts(
    cxx: &Path,
    timeout: Duration,
) -> Result<std::sync::Arc<CompilerFacts>, BuildError> {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex, OnceLock};
    static MEMO: OnceLock<Mutex<HashMap<PathBuf, Arc<CompilerFacts>>>> = OnceLock::new();
    let memo = MEMO.get_or_init(Default::default);
    if let Some(facts) = memo.lock().ok().and_then(|m| m.get(cxx).cloned()) {
        return Ok(facts);
    }
    let path = contained::resolve(cxx).map_err(|source| spawn_error(cxx, source))?;
    let facts = Arc::new(CompilerFacts {
        path: fs::canonicalize(&path).unwrap_or(path),
        version: compiler_version(cxx)?,
        gold: links_with_gold(cxx, timeout),
    });
    if let Ok(mut m) = memo.lock() {
        m.insert(cxx.to_path_buf(), facts.clone());
    }
    Ok(facts)
}

/// True when `cxx -fuse-ld=gold` reaches GNU gold within `timeout`
/// (`-Wl,--version` makes the linker print its banner and stop).
fn links_with_gold(cxx: &Path, timeout: Duration) -> bool {
    let args = [GOLD_FLAG.into(), "-Wl,--version".into()];
    match contained::run(cxx, &args, &[("LC_ALL", "C")], &compiler_limits(timeout)) {
        Ok(ran) => {
            ran.status.is_some_and(|s| s.success())
                && String::from_utf8_lossy(&ran.stdout).contains("GNU gold")
        }
        Err(_) => false,
    }
}

/// The first line of `cxx --version`.
fn compiler_version(cxx: &Path) -> Result<String, BuildError> {
    let ran = contained::run(
        cxx,
        &["--version".into()],
        &[("LC_ALL", "C")],
        &compiler_limits(Duration::from_secs(60)),
    )
    .map_err(|source| spawn_error(cxx, source))?;
    let text = String::from_utf8_lossy(&ran.stdout);
    match text.lines().next() {
        Some(line) if ran.status.is_some_and(|s| s.success()) && !line.trim().is_empty() => {
            Ok(line.trim().to_string())
        }
        _ => Err(BuildError::Spawn {
            cxx: cxx.display().to_string(),
            source: io::Error::other("`--version` printed nothing"),
        }),
    }
}

/// `CompilerMissing` for a compiler that does not exist, else `Spawn`.
fn spawn_error(cxx: &Path, source: io::Error) -> BuildError {
    if source.kind() == io::ErrorKind::NotFound {
        BuildError::CompilerMissing {
            cxx: cxx.display().to_string(),
        }
    } else {
        BuildError::Spawn {
            cxx: cxx.display().to_string(),
            source,
        }
    }
}

fn canonical(path: &Path) -> Result<PathBuf, BuildError> {
    fs::canonicalize(path).map_err(|source| BuildError::Read {
        path: path.to_path_buf(),
        source,
    })
}

fn canonical_all(paths: &[PathBuf]) -> Result<Vec<PathBuf>, BuildError> {
    paths.iter().map(|p| canonical(p)).collect()
}

fn elapsed_ms(start: Instant) -> u64 {
    u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// Feeds length-prefixed fields into a SHA-256 so that field boundaries are
/// unambiguous.
struct KeyHasher(Sha256);

impl KeyHasher {
    fn new(tag: &str) -> KeyHasher {
        let mut hasher = KeyHasher(Sha256::new());
        hasher.field(CACHE_FORMAT.as_bytes());
        hasher.field(tag.as_bytes());
        hasher
    }

    fn field(&mut self, bytes: &[u8]) {
        self.0.update((bytes.len() as u64).to_le_bytes());
        self.0.update(bytes);
    }

    fn path(&mut self, path: &Path) {
        self.field(path.as_os_str().as_encoded_bytes());
    }

    /// Path and contents of a file.
    fn file(&mut self, path: &Path) -> Result<(), BuildError> {
        self.file_as(path, path)
    }

    /// Contents of the file at `path`, hashed under the name `name`.
    fn file_as(&mut self, path: &Path, name: &Path) -> Result<(), BuildError> {
        let contents = fs::read(path).map_err(|source| BuildError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        self.path(name);
        self.field(&contents);
        Ok(())
    }

    fn finish(self) -> String {
        format!("{:x}", self.0.finalize())
    }
}

/// The regular, non-hidden files under `dir`, recursively, sorted.
fn tree_files(dir: &Path) -> Result<Vec<PathBuf>, BuildError> {
    fn walk(dir: &Path, depth: u32, out: &mut Vec<PathBuf>) -> Result<(), BuildError> {
        let read_err = |source| BuildError::Read {
            path: dir.to_path_buf(),
            source,
        };
        if depth > 16 {
            return Err(read_err(io::Error::other(
                "directories nested too deep (symlink loop?)",
            )));
        }
        let mut entries = Vec::new();
        for entry in fs::read_dir(dir).map_err(read_err)? {
            let entry = entry.map_err(read_err)?;
            if entry.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            entries.push(entry.path());
        }
        entries.sort();
        for path in entries {
            // `metadata` follows symlinks: a linked header counts by content.
            match fs::metadata(&path) {
                Ok(meta) if meta.is_dir() => walk(&path, depth + 1, out)?,
                Ok(meta) if meta.is_file() => out.push(path),
                _ => {}
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(dir, 0, &mut out)?;
    Ok(out)
}

/// SHA-256 over every file of the emulation headers and runtime sources.
fn hash_sim_tree(toolchain: &Toolchain) -> Result<String, BuildError> {
    let mut hasher = KeyHasher::new("sim-tree");
    for dir in [&toolchain.include_dir, &toolchain.runtime_src_dir] {
        let dir = canonical(dir)?;
        hasher.path(&dir);
        for file in tree_files(&dir)? {
            hasher.file(&file)?;
        }
    }
    Ok(hasher.finish())
}

/// What every key shares.
struct KeyBase<'a> {
    compiler_path: &'a Path,
    compiler_version: &'a str,
    sim_tree: &'a str,
    /// The linker flag, when not the default linker.
    linker: Option<&'static str>,
}

impl KeyBase<'_> {
    fn hasher(&self, tag: &str) -> KeyHasher {
        let mut hasher = KeyHasher::new(tag);
        hasher.path(self.compiler_path);
        hasher.field(self.compiler_version.as_bytes());
        hasher.field(self.sim_tree.as_bytes());
        for flag in COMMON_FLAGS
            .iter()
            .chain(LINK_FLAGS)
            .chain(HOST_LINK_FLAGS)
            .chain(&self.linker)
        {
            hasher.field(flag.as_bytes());
        }
        hasher
    }
}

/// How to compile one library.
#[derive(Clone)]
struct UnitPlan {
    unit: Unit,
    /// The package root: the deepest directory holding every source,
    /// include directory and the forced header. Keys name files relative
    /// to it and g++ maps it away (`-ffile-prefix-map`), so the same
    /// package in another folder (each candidate of a search has its own)
    /// has the same keys and the same libraries.
    root: PathBuf,
    sources: Vec<PathBuf>,
    /// Headers force-included in this order (`-include`).
    forced_headers: Vec<PathBuf>,
    include_dirs: Vec<PathBuf>,
    defines: Vec<String>,
    /// A parametrised host build: the sources' rewritten texts (knobs read
    /// at run time), compiled instead of the files.
    param: Option<ParamHost>,
}

/// The host sources with their knobs read at run time
/// (`TilingSource::parametrised`), and the knob values of this package.
#[derive(Clone)]
struct ParamHost {
    texts: Vec<String>,
    values: Vec<i64>,
}

/// The parametrised form of the host sources, when they have knobs and
/// every knob line has the plain form; `None` otherwise (or when a source
/// cannot be parsed: the ordinary build then reports whatever is wrong).
fn parametrise_host(sources: &[PathBuf]) -> Option<ParamHost> {
    let mut texts = Vec::with_capacity(sources.len());
    let mut values = Vec::new();
    for source in sources {
        let text = fs::read_to_string(source).ok()?;
        let parsed = ascendopt_op::tiling::TilingSource::parse(source, &text).ok()?;
        let (rewritten, knobs) = parsed.parametrised(values.len())?;
        texts.push(rewritten);
        values.extend(knobs);
    }
    (!values.is_empty()).then_some(ParamHost { texts, values })
}

/// The header declaring the run-time knob function (force-included into
/// a parametrised host build).
const KNOB_HEADER: &str = "ascendopt/host/knob_value.h";

impl UnitPlan {
    /// The cache key; `other_sources` (the other unit's sources) are left out
    /// of the include-directory scan.
    fn key(&self, base: &KeyBase<'_>, other_sources: &[PathBuf]) -> Result<String, BuildError> {
        let mut hasher = base.hasher(self.unit.name());
        if self.unit == Unit::Kernel {
            hasher.field(instrument::SOURCE.as_bytes());
            hasher.field(launch::REWRITE_VERSION.as_bytes());
            hasher.field(tpl::FOOTER_VERSION.as_bytes());
            for flag in instrument::KERNEL_FLAGS {
                hasher.field(flag.as_bytes());
            }
        }
        hasher.field(b"root-relative");
        match &self.param {
            None => {
                for source in &self.sources {
                    hasher.field(b"source");
                    hasher.file_as(source, self.relative(source))?;
                }
            }
            Some(param) => {
                hasher.field(b"parametrised");
                hasher.field(KNOB_HEADER.as_bytes());
                for (source, text) in self.sources.iter().zip(&param.texts) {
                    hasher.field(b"source");
                    hasher.path(self.relative(source));
                    hasher.field(text.as_bytes());
                }
            }
        }
        for header in &self.forced_headers {
            hasher.field(b"forced-header");
            hasher.file_as(header, self.relative(header))?;
        }
        for define in &self.defines {
            hasher.field(b"define");
            hasher.field(define.as_bytes());
        }
        for dir in &self.include_dirs {
            hasher.field(b"include-dir");
            hasher.path(self.relative(dir));
            for file in tree_files(dir)? {
                if !other_sources.contains(&file) && !self.sources.contains(&file) {
                    hasher.file_as(&file, self.relative(&file))?;
                }
            }
        }
        Ok(hasher.finish())
    }

    /// The flags of a compile of this unit, up to the sources: common
    /// flags, the root mapped away, include paths, defines, forced headers
    /// (`std_bundle` first when given: the host unit's precompiled
    /// standard library, see `pch`).
    fn flag_args(
        &self,
        toolchain: &Toolchain,
        std_bundle: Option<PathBuf>,
    ) -> Vec<std::ffi::OsString> {
        let mut args: Vec<std::ffi::OsString> = COMMON_FLAGS.iter().map(Into::into).collect();
        // `__FILE__` and line tables name package files relative to the
        // root (fault locations read `op_kernel/x.cpp:42`), so the library
        // does not depend on where the package lies.
        let mut map = std::ffi::OsString::from("-ffile-prefix-map=");
        map.push(self.root.as_os_str());
        map.push("/=");
        args.push(map);
        args.push("-I".into());
        args.push(toolchain.include_dir.clone().into());
        for dir in &self.include_dirs {
            args.push("-I".into());
            args.push(dir.clone().into());
        }
        for define in &self.defines {
            args.push(format!("-D{define}").into());
        }
        if let Some(bundle) = std_bundle {
            args.push("-include".into());
            args.push(bundle.into());
        }
        for header in &self.forced_headers {
            args.push("-include".into());
            args.push(header.clone().into());
        }
        args
    }

    /// `path` relative to the package root (the root itself is `.`).
    fn relative<'p>(&self, path: &'p Path) -> &'p Path {
        match path.strip_prefix(&self.root) {
            Ok(rel) if rel.as_os_str().is_empty() => Path::new("."),
            Ok(rel) => rel,
            Err(_) => path,
        }
    }

    /// Compiles and links the library into `out` (atomically).
    fn compile(
        &self,
        toolchain: &Toolchain,
        rt_obj: &Path,
        linker: Option<&str>,
        out: &Path,
        cache: &BuildCache,
        timeout: Duration,
    ) -> Result<(), BuildError> {
        // The host unit starts with the standard library CANN's host
        // headers bring, precompiled (see `pch`).
        let std_bundle = match self.unit {
            Unit::Host => pch::host_std_bundle(toolchain, &self.defines, cache, timeout)?,
            Unit::Kernel => None,
        };
        let mut args = self.flag_args(toolchain, std_bundle);
        // A parametrised build compiles the rewritten texts, written to a
        // folder of their own laid out like the package (named relative to
        // it in line tables); their quoted includes still find the
        // package's headers.
        let param_dir = self
            .param
            .as_ref()
            .map(|_| temp_path(cache, &cache.dir().join("param-src")));
        match (&self.param, &param_dir) {
            (Some(param), Some(dir)) => {
                let mut map = std::ffi::OsString::from("-ffile-prefix-map=");
                map.push(dir.as_os_str());
                map.push("/=");
                args.push(map);
                args.push("-include".into());
                args.push(toolchain.include_dir.join(KNOB_HEADER).into());
                for (source, text) in self.sources.iter().zip(&param.texts) {
                    let copy = dir.join(self.relative(source));
                    let written = copy
                        .parent()
                        .map_or(Ok(()), fs::create_dir_all)
                        .and_then(|()| fs::write(&copy, text));
                    written.map_err(|source| BuildError::Cache {
                        path: copy.clone(),
                        source,
                    })?;
                    if let Some(parent) = source.parent() {
                        args.push("-iquote".into());
                        args.push(parent.into());
                    }
                    args.push(copy.into());
                }
            }
            _ if self.unit == Unit::Kernel => {
                return self
                    .compile_instrumented(toolchain, args, rt_obj, linker, out, cache, timeout);
            }
            _ => args.extend(self.sources.iter().map(|s| s.clone().into())),
        }
        args.push(rt_obj.into());
        args.extend(LINK_FLAGS.iter().chain(&linker).map(Into::into));
        if self.unit == Unit::Host {
            args.extend(HOST_LINK_FLAGS.iter().map(Into::into));
        }
        let main_file = self.sources.first().cloned().unwrap_or_default();
        let result = run_compiler(self.unit, toolchain, args, out, cache, timeout, &main_file);
        if let Some(dir) = param_dir {
            let _ = fs::remove_dir_all(dir);
        }
        result
    }
}

impl UnitPlan {
    /// The kernel unit: each source compiled to assembly with the
    /// instrumentation flags, rewritten by [`instrument::instrument`] so
    /// that the kernel's own code counts itself, then assembled and linked.
    /// `args` are the compile arguments without the sources.
    #[allow(clippy::too_many_arguments)]
    fn compile_instrumented(
        &self,
        toolchain: &Toolchain,
        mut args: Vec<std::ffi::OsString>,
        rt_obj: &Path,
        linker: Option<&str>,
        out: &Path,
        cache: &BuildCache,
        timeout: Duration,
    ) -> Result<(), BuildError> {
        self.refuse_line_directives(toolchain)?;
        args.extend(instrument::KERNEL_FLAGS.iter().map(Into::into));
        args.push("-S".into());
        let options = instrument::Options {
            excluded_prefixes: self.excluded_prefixes(toolchain),
        };
        let mut temps: Vec<PathBuf> = Vec::new();
        let result = (|| {
            let mut link: Vec<std::ffi::OsString> = Vec::new();
            for source in &self.sources {
                let asm = temp_path(cache, &cache.dir().join("kernel.s"));
                temps.push(asm.clone());
                let mut compile = args.clone();
                match self.without_launches(source, cache)? {
                    // The text with its `<<<>>>` launches ignored (see
                    // `launch`), under the source's own name and lines.
                    Some(copy) => {
                        temps.push(copy.clone());
                        if let Some(parent) = source.parent() {
                            compile.push("-iquote".into());
                            compile.push(parent.into());
                        }
                        compile.push(copy.into());
                    }
                    None => compile.push(source.clone().into()),
                }
                run_compiler(self.unit, toolchain, compile, &asm, cache, timeout, source)?;
                let text = fs::read_to_string(&asm).map_err(|source| BuildError::Read {
                    path: asm.clone(),
                    source,
                })?;
                let done =
                    instrument::instrument(&text, &options).map_err(|e| BuildError::Compile {
                        unit: self.unit,
                        file: source.clone(),
                        line: None,
                        message: e.to_string(),
                        diagnostics: e.to_string(),
                        also: None,
                    })?;
                let rewritten = temp_path(cache, &cache.dir().join("kernel-counted.s"));
                temps.push(rewritten.clone());
                fs::write(&rewritten, done.text).map_err(|source| BuildError::Cache {
                    path: rewritten.clone(),
                    source,
                })?;
                link.push(rewritten.into());
            }
            link.push(rt_obj.into());
            link.extend(LINK_FLAGS.iter().chain(&linker).map(Into::into));
            let main_file = self.sources.first().cloned().unwrap_or_default();
            run_compiler(self.unit, toolchain, link, out, cache, timeout, &main_file)
        })();
        for temp in temps {
            // run_compiler recorded a content hash beside the assembly.
            let _ = fs::remove_file(integrity::sidecar(&temp));
            let _ = fs::remove_file(temp);
        }
        result
    }

    /// A copy of `source` whose launch helpers are made harmless
    /// ([`launch::rewrite_launch_helpers`]) and whose tiling-template entry,
    /// if it has one, gets its instances ([`tpl::with_instances`]), starting
    /// with a line marker that names `source` (diagnostics, line tables and
    /// the counting pass see the source's own name and lines); None when
    /// neither applies.
    fn without_launches(
        &self,
        source: &Path,
        cache: &BuildCache,
    ) -> Result<Option<PathBuf>, BuildError> {
        let text = fs::read_to_string(source).map_err(|e| BuildError::Read {
            path: source.to_path_buf(),
            source: e,
        })?;
        let rewritten = launch::rewrite_launch_helpers(&text);
        // A tiling-template entry gets its instances (see `tpl`).
        let entry = tpl::template_entry(&text);
        let rewritten = match (rewritten, entry) {
            (None, None) => return Ok(None),
            (Some(r), None) => r,
            (r, Some(entry)) => tpl::with_instances(r.as_deref().unwrap_or(&text), &entry),
        };
        let name = source
            .file_name()
            .map_or_else(|| "kernel.cpp".into(), |n| n.to_string_lossy().into_owned());
        let copy = temp_path(cache, &cache.dir().join(format!("launchless-{name}")));
        let marked = format!("# 1 \"{}\"\n{rewritten}", source.display());
        fs::write(&copy, marked).map_err(|e| BuildError::Cache {
            path: copy.clone(),
            source: e,
        })?;
        Ok(Some(copy))
    }

    /// Every file of the package the kernel can include (sources, forced
    /// headers outside the emulation headers, files of the include
    /// directories) must be free of `#line` directives, which could
    /// attribute the kernel's code to the emulation headers.
    fn refuse_line_directives(&self, toolchain: &Toolchain) -> Result<(), BuildError> {
        let ours = fs::canonicalize(&toolchain.include_dir)
            .unwrap_or_else(|_| toolchain.include_dir.clone());
        let mut files: Vec<PathBuf> = self.sources.clone();
        files.extend(
            self.forced_headers
                .iter()
                .filter(|h| !h.starts_with(&toolchain.include_dir) && !h.starts_with(&ours))
                .cloned(),
        );
        for dir in &self.include_dirs {
            files.extend(tree_files(dir)?);
        }
        files.sort();
        files.dedup();
        for file in files {
            let Ok(bytes) = fs::read(&file) else {
                continue;
            };
            let text = String::from_utf8_lossy(&bytes);
            if let Some(line) = instrument::line_directive(&text) {
                let message = "a #line directive or line marker: the simulator counts the kernel's own code by source file, so line directives are not allowed in a package".to_string();
                return Err(BuildError::Compile {
                    unit: self.unit,
                    file: file.clone(),
                    line: Some(line as u32),
                    diagnostics: format!("{}:{line}: {message}", file.display()),
                    message,
                    also: None,
                });
            }
        }
        Ok(())
    }

    /// How the emulation headers' paths appear in the line tables: as
    /// given to `-I`, canonical, and either relative to the package root
    /// when the root's prefix is mapped away.
    fn excluded_prefixes(&self, toolchain: &Toolchain) -> Vec<String> {
        let mut dirs = vec![toolchain.include_dir.clone()];
        if let Ok(canonical) = fs::canonicalize(&toolchain.include_dir) {
            dirs.push(canonical);
        }
        let mut out = Vec::new();
        for dir in dirs {
            if let Ok(rel) = dir.strip_prefix(&self.root) {
                if !rel.as_os_str().is_empty() {
                    out.push(format!("{}/", rel.display()));
                }
            }
            out.push(format!("{}/", dir.display()));
        }
        out.sort();
        out.dedup();
        out
    }
}

/// The cached object of the unit's runtime translation unit, compiled on
/// first use.
fn ensure_runtime_object(
    unit: Unit,
    toolchain: &Toolchain,
    base: &KeyBase<'_>,
    cache: &BuildCache,
    timeout: Duration,
) -> Result<PathBuf, BuildError> {
    let source = canonical(&toolchain.runtime_src_dir.join(unit.runtime_source()))?;
    let mut hasher = base.hasher("runtime-object");
    hasher.file(&source)?;
    let obj = cache
        .dir()
        .join(format!("rt-{}-{}.o", unit.name(), hasher.finish()));
    if integrity::cached(&obj) {
        return Ok(obj);
    }
    let mut args: Vec<std::ffi::OsString> = COMMON_FLAGS.iter().map(Into::into).collect();
    args.push("-I".into());
    args.push(toolchain.include_dir.clone().into());
    args.push("-c".into());
    args.push(source.clone().into());
    run_compiler(unit, toolchain, args, &obj, cache, timeout, &source)?;
    Ok(obj)
}

static TMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A fresh temporary path in the cache directory, for `final_path`.
fn temp_path(cache: &BuildCache, final_path: &Path) -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let name = final_path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    cache.dir().join(format!(
        ".tmp-{}-{}-{}-{}",
        std::process::id(),
        TMP_COUNTER.fetch_add(1, Ordering::Relaxed),
        nanos,
        name
    ))
}

/// Runs g++ with `args` plus `-o <temp>`, contained (see the module
/// docs), then records the result's hash and renames it to `out`. Its
/// stdout and stderr are drained while it runs, so a chatty compile cannot
/// block on a full pipe.
fn run_compiler(
    unit: Unit,
    toolchain: &Toolchain,
    mut args: Vec<std::ffi::OsString>,
    out: &Path,
    cache: &BuildCache,
    timeout: Duration,
    main_file: &Path,
) -> Result<(), BuildError> {
    let tmp_out = temp_path(cache, out);
    args.push("-o".into());
    args.push(tmp_out.clone().into());
    let start = Instant::now();
    let ran = contained::run(
        &toolchain.cxx,
        &args,
        &[("LC_ALL", "C"), ("LANG", "C")],
        &compiler_limits(timeout),
    );
    let ran = match ran {
        Ok(ran) => ran,
        Err(source) => {
            let _ = fs::remove_file(&tmp_out);
            return Err(spawn_error(&toolchain.cxx, source));
        }
    };
    let Some(status) = ran.status else {
        let _ = fs::remove_file(&tmp_out);
        return Err(BuildError::Timeout {
            unit,
            after_ms: elapsed_ms(start),
        });
    };
    if !status.success() || !tmp_out.is_file() {
        let _ = fs::remove_file(&tmp_out);
        let stderr = String::from_utf8_lossy(&ran.stderr);
        let first = diagnostics::first_error(&stderr, &toolchain.include_dir);
        let limit = match contained::signal_of(&status) {
            Some(libc::SIGXFSZ) => Some(format!(
                "the compiler was stopped writing a file larger than {} MiB",
                COMPILER_FILE_BYTES >> 20
            )),
            Some(libc::SIGXCPU) | Some(libc::SIGKILL) => Some(format!(
                "the compiler was stopped by its CPU limit ({} s)",
                timeout.as_secs()
            )),
            _ => None,
        };
        let (file, line, message) = match (first, limit) {
            (Some(first), None) => (
                first
                    .file
                    .map(PathBuf::from)
                    .unwrap_or_else(|| main_file.to_path_buf()),
                first.line,
                first.message,
            ),
            (_, Some(limit)) => (main_file.to_path_buf(), None, limit),
            (None, None) => (
                main_file.to_path_buf(),
                None,
                format!("g++ failed ({status}) without an error line"),
            ),
        };
        return Err(BuildError::Compile {
            unit,
            file,
            line,
            message,
            diagnostics: diagnostics::trim(&stderr),
            also: None,
        });
    }
    let cache_err = |source| {
        let _ = fs::remove_file(&tmp_out);
        BuildError::Cache {
            path: out.to_path_buf(),
            source,
        }
    };
    // Readable by the worker, which runs as another uid when we are root.
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&tmp_out, fs::Permissions::from_mode(0o755)).map_err(cache_err)?;
    }
    integrity::record(&tmp_out, out).map_err(cache_err)?;
    fs::rename(&tmp_out, out).map_err(cache_err)
}

#[cfg(test)]
mod tests;
