//! Compiling test kernels, shared by the simulator's integration tests:
//! g++ with the emulation headers (`include/`) and the kernel entry unit
//! (`runtime_src/kernel_entry.cpp`), into a shared library in a temporary
//! folder that lives as long as the returned guard.

use std::path::PathBuf;
use std::process::Command;

/// The simulator crate's folder.
pub fn sim_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Compiles `sources` (file name, text) into `lib_name` (e.g. `libk.so`);
/// panics with g++'s messages when it fails.
pub fn compile_sources(lib_name: &str, sources: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for (name, text) in sources {
        let cpp = dir.path().join(name);
        std::fs::write(&cpp, text).unwrap();
        files.push(cpp);
    }
    let so = dir.path().join(lib_name);
    let out = Command::new("g++")
        .args(["-std=c++17", "-O1", "-fPIC", "-shared", "-I"])
        .arg(sim_dir().join("include"))
        .args(&files)
        .arg(sim_dir().join("runtime_src/kernel_entry.cpp"))
        .arg("-o")
        .arg(&so)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (dir, so)
}

/// Compiles one kernel source into `libk.so`.
pub fn compile(src: &str) -> (tempfile::TempDir, PathBuf) {
    compile_sources("libk.so", &[("k.cpp", src)])
}

/// The names the msopgen build's ORIG_DTYPE_<ARG> macros are compared with
/// are GE's codes, the host's ge::DataType ones included (a quantising
/// kernel asks `ORIG_DTYPE_Y == DT_INT4`).
#[test]
fn the_msopgen_dtype_names_are_ges_codes() {
    compile(
        "#include \"kernel_operator.h\"\n\
         #include \"ascendopt/kernel/msopgen_build.h\"\n\
         static_assert(DT_FLOAT16 == 1 && DT_BF16 == 27, \"\");\n\
         static_assert(DT_STRING == 13 && DT_COMPLEX128 == 17, \"\");\n\
         static_assert(DT_UNDEFINED == 28 && DT_INT4 == 29, \"\");\n",
    );
}
