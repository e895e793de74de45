//! Lists the simulator's kernel emulation headers for `apis.rs`, so the
//! API list the prompts and the docs carry follows every header that
//! exists, new ones included, without a hand-kept list.

use std::path::{Path, PathBuf};

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            walk(&path, out);
        } else if path.extension().is_some_and(|e| e == "h") {
            out.push(path);
        }
    }
}

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let kernel = manifest.join("../sim/include/ascendopt/kernel");
    println!("cargo:rerun-if-changed={}", kernel.display());
    let mut files = Vec::new();
    walk(&kernel, &mut files);
    files.sort();
    let mut text =
        String::from("/// The kernel emulation headers (path under `ascendopt/kernel/`, text).\n");
    text.push_str("const HEADERS: &[(&str, &str)] = &[\n");
    for f in &files {
        let rel = f
            .strip_prefix(&kernel)
            .expect("walked under it")
            .to_string_lossy()
            .replace('\\', "/");
        if rel == "unsupported.h" {
            continue;
        }
        let abs = std::fs::canonicalize(f).expect("a listed file exists");
        text.push_str(&format!(
            "    ({rel:?}, include_str!({:?})),\n",
            abs.display().to_string()
        ));
    }
    text.push_str("];\n");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets it")).join("headers.rs");
    std::fs::write(&out, text).expect("OUT_DIR is writable");
}
