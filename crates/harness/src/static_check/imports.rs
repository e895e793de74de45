//! What a built library asks of the system: the undefined symbols of its
//! dynamic symbol table (read from the ELF file, no tool needed), held
//! against the functions a kernel or a tiling function may use. Whatever
//! spelling the source used (an alias, a macro, a parenthesised name, a
//! name no list foresaw such as `pread64`), the function a library calls
//! is named here.
//!
//! Allowed: memory and string functions, formatted printing, number
//! parsing, the math library, the C++ runtime's support (exceptions,
//! guards, operator new and delete, the standard library's mangled
//! symbols but its file, thread and clock classes) and the few functions
//! the simulator's own runtime units use. Anything else is a finding of
//! rule [`Rule::Import`].

use super::{Finding, Rule};
use std::path::Path;

/// C functions a library may import.
const ALLOWED: &[&str] = &[
    // Memory and strings.
    "memcpy",
    "memmove",
    "memset",
    "memcmp",
    "memchr",
    "memrchr",
    "strlen",
    "strnlen",
    "strcmp",
    "strncmp",
    "strcpy",
    "strncpy",
    "strcat",
    "strncat",
    "strchr",
    "strrchr",
    "strstr",
    "strdup",
    "strndup",
    "strspn",
    "strcspn",
    "strpbrk",
    "strtok_r",
    "strerror",
    "bzero",
    "bcmp",
    "__memcpy_chk",
    "__memmove_chk",
    "__memset_chk",
    "__strcpy_chk",
    "__strcat_chk",
    "__strncpy_chk",
    "__strlen_chk",
    "__explicit_bzero_chk",
    // Numbers and printing (stdout and stderr are the worker's pipes).
    "strtol",
    "strtoll",
    "strtoul",
    "strtoull",
    "strtod",
    "strtof",
    "strtold",
    "atoi",
    "atol",
    "atoll",
    "atof",
    "__isoc23_strtol",
    "__isoc23_strtoll",
    "__isoc23_strtoul",
    "__isoc23_strtoull",
    "snprintf",
    "vsnprintf",
    "sprintf",
    "vsprintf",
    "printf",
    "vprintf",
    "__printf_chk",
    "__snprintf_chk",
    "__vsnprintf_chk",
    "__sprintf_chk",
    "__vsprintf_chk",
    "__vprintf_chk",
    "__fprintf_chk",
    "puts",
    "putchar",
    "fputc",
    "fputs",
    "fwrite",
    "fflush",
    "fprintf",
    "vfprintf",
    "stdout",
    "stderr",
    "abs",
    "labs",
    "llabs",
    "div",
    "ldiv",
    "qsort",
    "bsearch",
    // Heap (kernel code is held to no heap by the token rules).
    "malloc",
    "calloc",
    "realloc",
    "free",
    "aligned_alloc",
    "posix_memalign",
    "memalign",
    // The C++ runtime and the dynamic linker's support.
    "__gxx_personality_v0",
    "__stack_chk_fail",
    "__assert_fail",
    "__tls_get_addr",
    "__gmon_start__",
    "_ITM_registerTMCloneTable",
    "_ITM_deregisterTMCloneTable",
    "__errno_location",
    "abort",
    "__dynamic_cast",
    "__popcountdi2",
    "__udivti3",
    "__divti3",
    "__umodti3",
    "__modti3",
    "__muldc3",
    "__mulsc3",
    "__divdc3",
    "__divsc3",
    // What the simulator's runtime units use themselves (the knob values of
    // a parametrised host library come from the environment), and what
    // the sandbox makes harmless (the token rules' sandboxed APIs): the
    // environment, process ids, clocks, sleeping, random state.
    "getenv",
    "secure_getenv",
    "getpid",
    "getppid",
    "gettid",
    "pthread_self",
    "pthread_equal",
    "time",
    "clock",
    "clock_gettime",
    "clock_getres",
    "gettimeofday",
    "sleep",
    "usleep",
    "nanosleep",
    "clock_nanosleep",
    "rand",
    "srand",
    "random",
    "srandom",
    "drand48",
    "lrand48",
    "rand_r",
    "uname",
    "sysconf",
    "sysinfo",
];

/// Math functions: these names and their `f` and `l` forms.
const MATH: &[&str] = &[
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "atan2",
    "sinh",
    "cosh",
    "tanh",
    "asinh",
    "acosh",
    "atanh",
    "exp",
    "exp2",
    "exp10",
    "expm1",
    "log",
    "log2",
    "log10",
    "log1p",
    "pow",
    "sqrt",
    "cbrt",
    "hypot",
    "fabs",
    "floor",
    "ceil",
    "round",
    "lround",
    "llround",
    "trunc",
    "rint",
    "lrint",
    "llrint",
    "nearbyint",
    "fmod",
    "remainder",
    "remquo",
    "copysign",
    "nextafter",
    "nexttoward",
    "frexp",
    "ldexp",
    "modf",
    "scalbn",
    "scalbln",
    "ilogb",
    "logb",
    "erf",
    "erfc",
    "tgamma",
    "lgamma",
    "fma",
    "fmax",
    "fmin",
    "fdim",
    "nan",
    "sincos",
    "__isnan",
    "__isinf",
    "__finite",
    "__fpclassify",
    "__signbit",
];

/// Prefixes of allowed C runtime families.
const ALLOWED_PREFIXES: &[&str] = &["__cxa_", "_Unwind_", "__gcc_personality"];

/// Parts of mangled C++ names of the standard library's classes that reach
/// files, threads or clocks.
const MANGLED_DENIED: &[&str] = &[
    "filesystem",
    "filebuf",
    "fstream",
    "St6thread",
    "this_thread",
    "random_device",
    "system_clock",
    "steady_clock",
    "high_resolution_clock",
];

/// Whether a library may import `symbol`.
pub fn allowed(symbol: &str) -> bool {
    let name = symbol.split('@').next().unwrap_or(symbol);
    if let Some(mangled) = name.strip_prefix("_Z") {
        return !MANGLED_DENIED.iter().any(|d| mangled.contains(d));
    }
    if ALLOWED.contains(&name) || ALLOWED_PREFIXES.iter().any(|p| name.starts_with(p)) {
        return true;
    }
    // `sqrt`, `sqrtf`, `sqrtl`.
    MATH.contains(&name)
        || [name.strip_suffix('f'), name.strip_suffix('l')]
            .into_iter()
            .flatten()
            .any(|base| MATH.contains(&base))
}

/// The undefined symbols of an ELF64 little-endian shared object's dynamic
/// symbol table; None when the file is not one.
pub fn undefined_symbols(bytes: &[u8]) -> Option<Vec<String>> {
    let u16_at = |o: usize| {
        bytes
            .get(o..o + 2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]))
    };
    let u32_at = |o: usize| {
        bytes
            .get(o..o + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let u64_at = |o: usize| {
        bytes.get(o..o + 8).map(|b| {
            let mut a = [0u8; 8];
            a.copy_from_slice(b);
            u64::from_le_bytes(a)
        })
    };
    if bytes.get(0..6) != Some(&[0x7f, b'E', b'L', b'F', 2, 1]) {
        return None;
    }
    let shoff = usize::try_from(u64_at(0x28)?).ok()?;
    let shentsize = usize::from(u16_at(0x3A)?);
    let shnum = usize::from(u16_at(0x3C)?);
    if shentsize < 64 {
        return None;
    }
    let section = |i: usize| -> Option<(u32, usize, usize, usize, usize)> {
        let base = shoff.checked_add(i.checked_mul(shentsize)?)?;
        Some((
            u32_at(base + 4)?,                         // sh_type
            usize::try_from(u64_at(base + 24)?).ok()?, // sh_offset
            usize::try_from(u64_at(base + 32)?).ok()?, // sh_size
            u32_at(base + 40)? as usize,               // sh_link
            usize::try_from(u64_at(base + 56)?).ok()?, // sh_entsize
        ))
    };
    const SHT_DYNSYM: u32 = 11;
    let mut out = Vec::new();
    for i in 0..shnum {
        let (kind, offset, size, link, entsize) = section(i)?;
        if kind != SHT_DYNSYM || entsize < 24 {
            continue;
        }
        let (_, str_off, str_size, _, _) = section(link)?;
        let strtab = bytes.get(str_off..str_off.checked_add(str_size)?)?;
        for k in 0..size / entsize {
            let sym = offset.checked_add(k * entsize)?;
            let name = u32_at(sym)? as usize;
            let shndx = u16_at(sym + 6)?;
            if shndx != 0 || name == 0 {
                continue;
            }
            let rest = strtab.get(name..)?;
            let end = rest.iter().position(|&b| b == 0)?;
            out.push(String::from_utf8_lossy(&rest[..end]).into_owned());
        }
    }
    Some(out)
}

/// Findings for the imports of `library` (the `unit`'s: `kernel` or
/// `host`) that are not allowed; `locate` gives the file and line of a
/// name's use in the sources, when known.
pub fn check_library(
    library: &Path,
    unit: &str,
    locate: &dyn Fn(&str) -> Option<(String, u32)>,
) -> Vec<Finding> {
    let Ok(bytes) = std::fs::read(library) else {
        return Vec::new();
    };
    let Some(symbols) = undefined_symbols(&bytes) else {
        return Vec::new();
    };
    let mut out: Vec<Finding> = symbols
        .iter()
        .filter(|s| !allowed(s))
        .map(|s| {
            let name = s.split('@').next().unwrap_or(s);
            let (file, line) = locate(name).unwrap_or_else(|| (format!("({unit} library)"), 0));
            Finding {
                file,
                line,
                rule: Rule::Import,
                message: format!(
                    "the {unit} library imports `{name}` from the system, which no kernel or tiling function needs"
                ),
            }
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_allow_list_takes_runtime_needs_and_refuses_system_access() {
        for ok in [
            "memcpy@GLIBC_2.14",
            "expf",
            "sqrtl",
            "__cxa_guard_acquire",
            "_Unwind_Resume",
            "_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE9_M_createERmm",
            "_Znwm",
            "getenv",
            "__gmon_start__",
        ] {
            assert!(allowed(ok), "{ok}");
        }
        for bad in [
            "open",
            "pread64",
            "pwrite64",
            "glob",
            "symlinkat",
            "execve",
            "kill",
            "syscall",
            "socket",
            "_ZNSt10filesystem4pathC1Ev",
            "_ZNSt6thread15_M_start_threadESt10unique_ptrINS_6_StateESt14default_deleteIS1_EEPFvvE",
            "_ZNSt6chrono3_V212system_clock3nowEv",
            "fopen64",
            "dlopen",
        ] {
            assert!(!allowed(bad), "{bad}");
        }
    }

    #[test]
    fn undefined_symbols_are_read_from_a_real_library() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("x.cpp");
        let lib = dir.path().join("libx.so");
        std::fs::write(
            &src,
            "#include <unistd.h>\n#include <cmath>\nextern \"C\" long f(int fd, char* b) { return pread64(fd, b, 1, 0) + (long)std::sqrt((double)fd); }\n",
        )
        .unwrap();
        let ok = std::process::Command::new("g++")
            .args(["-shared", "-fPIC", "-O1", "-o"])
            .arg(&lib)
            .arg(&src)
            .status()
            .unwrap();
        assert!(ok.success());
        let symbols = undefined_symbols(&std::fs::read(&lib).unwrap()).unwrap();
        assert!(
            symbols.iter().any(|s| s.starts_with("pread64")),
            "{symbols:?}"
        );
        let findings = check_library(&lib, "kernel", &|name| {
            (name == "pread64").then(|| ("op_kernel/x.cpp".to_string(), 3))
        });
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert_eq!(findings[0].to_string(), "import at op_kernel/x.cpp:3: the kernel library imports `pread64` from the system, which no kernel or tiling function needs");
        assert!(undefined_symbols(b"not an elf").is_none());
    }
}
