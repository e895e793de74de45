//! The precompiled standard-library bundle of host units.
//!
//! CANN's host headers bring the C++ standard library into every op_host
//! file (strings, vectors, maps, streams, printf: host code written for
//! CANN uses them without including them), so the simulator's CANN-named
//! host headers include `ascendopt/host/std_bundle.h`. Parsing those
//! headers costs several times what the rest of a typical host unit
//! costs; g++ instead loads them precompiled (a `.gch` beside a copy of
//! the bundle, force-included first), built once per compiler, flag set,
//! define set and bundle text, and kept in the build cache
//! (`pch-<key>/`).
//!
//! A precompiled header that cannot be built or used changes nothing but
//! speed: the host unit then parses the bundle as text (g++ falls back on
//! its own when the `.gch` does not match, and [`host_std_bundle`] answers
//! the plain header when the `.gch` cannot be built).

use super::{
    compiler_facts, run_compiler, temp_path, BuildCache, BuildError, KeyHasher, Toolchain, Unit,
    COMMON_FLAGS,
};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The bundle, relative to the emulation include directory.
pub(crate) const STD_BUNDLE: &str = "ascendopt/host/std_bundle.h";

/// The header a host unit force-includes first: a copy of the bundle with
/// its `.gch` beside it, or the bundle itself when no `.gch` could be
/// built; None when the emulation headers have no bundle (a reduced
/// include tree).
pub(crate) fn host_std_bundle(
    toolchain: &Toolchain,
    defines: &[String],
    cache: &BuildCache,
    timeout: Duration,
) -> Result<Option<PathBuf>, BuildError> {
    let bundle = toolchain.include_dir.join(STD_BUNDLE);
    let Ok(text) = fs::read(&bundle) else {
        return Ok(None);
    };
    let facts = compiler_facts(&toolchain.cxx, timeout)?;
    let mut hasher = KeyHasher::new("host-std-pch");
    hasher.path(&facts.path);
    hasher.field(facts.version.as_bytes());
    for flag in COMMON_FLAGS {
        hasher.field(flag.as_bytes());
    }
    for define in defines {
        hasher.field(b"define");
        hasher.field(define.as_bytes());
    }
    hasher.field(&text);
    let dir = cache.dir().join(format!("pch-{}", hasher.finish()));
    let header = dir.join("ascendopt_host_std.h");
    if header.is_file() && super::integrity::cached(&gch_of(&header)) {
        return Ok(Some(header));
    }
    // A bundle whose `.gch` changed since its build (or lost its hash) is
    // built again, never used.
    if dir.exists() {
        let _ = fs::remove_dir_all(&dir);
    }
    match build_pch(toolchain, defines, &text, &dir, cache, timeout) {
        Ok(()) => Ok(Some(header)),
        // Not fatal: the unit parses the bundle as text.
        Err(_) => Ok(Some(bundle)),
    }
}

/// `header.gch`.
fn gch_of(header: &Path) -> PathBuf {
    let mut name = header.as_os_str().to_owned();
    name.push(".gch");
    PathBuf::from(name)
}

/// Builds `dir` (header copy and `.gch`) in a temporary folder renamed
/// into place, so a reader never sees half of it.
fn build_pch(
    toolchain: &Toolchain,
    defines: &[String],
    text: &[u8],
    dir: &Path,
    cache: &BuildCache,
    timeout: Duration,
) -> Result<(), BuildError> {
    let tmp = temp_path(cache, dir);
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| BuildError::Cache { path, source }
    };
    fs::create_dir_all(&tmp).map_err(io(&tmp))?;
    let header = tmp.join("ascendopt_host_std.h");
    fs::write(&header, text).map_err(io(&header))?;
    let mut args: Vec<std::ffi::OsString> = COMMON_FLAGS.iter().map(Into::into).collect();
    for define in defines {
        args.push(format!("-D{define}").into());
    }
    args.push("-x".into());
    args.push("c++-header".into());
    args.push(header.clone().into());
    let gch = gch_of(&header);
    let built = run_compiler(Unit::Host, toolchain, args, &gch, cache, timeout, &header);
    let result = built.and_then(|()| match fs::rename(&tmp, dir) {
        Ok(()) => Ok(()),
        // Another process put it there first: theirs is as good.
        Err(_) if dir.join("ascendopt_host_std.h").is_file() => Ok(()),
        Err(source) => Err(BuildError::Cache {
            path: dir.to_path_buf(),
            source,
        }),
    });
    let _ = fs::remove_dir_all(&tmp);
    result
}
