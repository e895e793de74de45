//! Operator packages on disk: `ops/<name>/` with `op.toml`, `op_host/`,
//! `op_kernel/` and optionally a golden script.

use crate::error::{KeyPath, OpError};
use crate::golden::{self, Builtins};
use crate::spec::{Case, GoldenSpec, OpSpec};
use crate::tensor::Tensor;
use crate::tiling::{TilingSource, TilingSpace};
use std::path::{Component, Path, PathBuf};

/// Environment variable that overrides [`builtin_ops_dir`].
pub const OPS_DIR_ENV: &str = "ASCENDOPT_OPS_DIR";

/// A loaded, validated operator package.
#[derive(Debug, Clone)]
pub struct OpPackage {
    /// The package directory.
    pub dir: PathBuf,
    /// The validated op.toml.
    pub spec: OpSpec,
    /// Host sources (absolute or relative to the working directory, as `dir`).
    pub host_sources: Vec<PathBuf>,
    /// Kernel sources.
    pub kernel_sources: Vec<PathBuf>,
    /// The tiling-data header, when there is one.
    pub tiling_header: Option<PathBuf>,
    /// Tiling regions, knobs and constraints.
    pub tiling: TilingSpace,
}

/// `path` with `.` and `dir/..` removed lexically.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                let popped = match out.components().next_back() {
                    Some(Component::Normal(_)) => out.pop(),
                    _ => false,
                };
                if !popped {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

/// Copies the folder `from` into `to` (created), recursively, leaving out
/// sub-folders named in `skip` (e.g. a package's `build`/`target`). The
/// error names the path that failed. One implementation for every place
/// that copies a package or a tree of one.
pub fn copy_tree(from: &Path, to: &Path, skip: &[&str]) -> Result<(), (PathBuf, std::io::Error)> {
    std::fs::create_dir_all(to).map_err(|e| (to.to_path_buf(), e))?;
    for entry in std::fs::read_dir(from).map_err(|e| (from.to_path_buf(), e))? {
        let entry = entry.map_err(|e| (from.to_path_buf(), e))?;
        let src = entry.path();
        let name = entry.file_name();
        let dst = to.join(&name);
        if src.is_dir() {
            if skip.iter().any(|s| name == *s) {
                continue;
            }
            copy_tree(&src, &dst, skip)?;
        } else {
            std::fs::copy(&src, &dst).map_err(|e| (src.clone(), e))?;
        }
    }
    Ok(())
}

/// The repository's `ops/` directory (the built-in operators), or
/// `$ASCENDOPT_OPS_DIR` when set and non-empty.
pub fn builtin_ops_dir() -> PathBuf {
    ops_dir_from(std::env::var_os(OPS_DIR_ENV))
}

fn ops_dir_from(env: Option<std::ffi::OsString>) -> PathBuf {
    match env {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => normalize(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ops")),
    }
}

/// Every subdirectory of `dir` that holds an op.toml, sorted by name.
pub fn package_dirs(dir: &Path) -> Result<Vec<PathBuf>, OpError> {
    let entries = std::fs::read_dir(dir).map_err(|e| OpError::io("list", dir, e))?;
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| OpError::io("list", dir, e))?;
        let path = entry.path();
        if path.join("op.toml").is_file() {
            out.push(path);
        }
    }
    out.sort();
    Ok(out)
}

/// Whether an op_host file belongs to the operator's aclnn API layer:
/// CANN's operator build compiles those into the op-API library, apart
/// from the tiling, shape inference and OpDef that the simulator's host
/// library holds, and they call aclnn internals that no tiling needs. Such
/// a file is named `aclnn*` (the generated or hand-written L2 API), or it
/// builds an aclnn executor (it includes `opdev/op_executor.h`,
/// `opdev/make_op_executor.h`, a header of `aclnn_kernels/` or of
/// `level0/`: the L0 and L2 layers, `*_l0.cpp`, `acl_*.cpp`).
pub fn is_op_api_source(path: &Path) -> bool {
    let named = path
        .file_name()
        .map(|n| n.to_string_lossy().starts_with("aclnn"))
        .unwrap_or(false);
    if named {
        return true;
    }
    let Ok(text) = std::fs::read_to_string(path) else {
        return false;
    };
    let op_api = |target: &str| {
        target == "opdev/op_executor.h"
            || target == "opdev/make_op_executor.h"
            || target.starts_with("aclnn/")
            || target.starts_with("aclnn_kernels/")
            || target.starts_with("level0/")
    };
    let targets: Vec<&str> = text.lines().filter_map(include_target).collect();
    if targets.iter().any(|t| op_api(t)) {
        return true;
    }
    // One level down: the op-API layer's own header beside it (padv3.cpp
    // includes padv3.h, which includes opdev/op_executor.h).
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    targets.iter().any(|t| {
        let beside = dir.join(t);
        beside.is_file()
            && std::fs::read_to_string(&beside)
                .map(|h| h.lines().filter_map(include_target).any(op_api))
                .unwrap_or(false)
    })
}

/// The file named by an `#include "x"` or `#include <x>` line, if the
/// line is one.
pub fn include_target(line: &str) -> Option<&str> {
    let rest = line.trim_start().strip_prefix('#')?;
    let rest = rest.trim_start().strip_prefix("include")?.trim_start();
    let (close, body) = match rest.chars().next()? {
        '"' => ('"', &rest[1..]),
        '<' => ('>', &rest[1..]),
        _ => return None,
    };
    let end = body.find(close)?;
    Some(&body[..end])
}

/// Folders at the top of a package that are build products, not part of it.
pub const BUILD_DIRS: [&str; 2] = ["build", "target"];

/// Deepest folder nesting [`package_files`] follows (a symlink loop in a
/// hostile package ends here instead of recursing forever).
pub const MAX_PACKAGE_DEPTH: u32 = 16;

/// Every file under `dir` (recursively; hidden entries, and the build
/// products of [`BUILD_DIRS`] at the top, left out), as (relative path with
/// `/`, path), sorted. Folders nested deeper than [`MAX_PACKAGE_DEPTH`] are
/// an error.
pub fn package_files(dir: &Path) -> Result<Vec<(String, PathBuf)>, OpError> {
    fn walk(
        dir: &Path,
        rel: &str,
        depth: u32,
        out: &mut Vec<(String, PathBuf)>,
    ) -> Result<(), OpError> {
        if depth > MAX_PACKAGE_DEPTH {
            return Err(OpError::io(
                "list",
                dir,
                std::io::Error::other("folders nested too deep"),
            ));
        }
        let entries = std::fs::read_dir(dir).map_err(|e| OpError::io("list", dir, e))?;
        for entry in entries {
            let entry = entry.map_err(|e| OpError::io("list", dir, e))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') || (depth == 0 && BUILD_DIRS.contains(&name.as_str())) {
                continue;
            }
            let path = entry.path();
            let rel = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            match std::fs::metadata(&path) {
                Ok(meta) if meta.is_dir() => walk(&path, &rel, depth + 1, out)?,
                Ok(meta) if meta.is_file() => out.push((rel, path)),
                _ => {}
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(dir, "", 0, &mut out)?;
    out.sort();
    Ok(out)
}

/// The `*.cpp` files of `dir` (not recursive), sorted, without the
/// op-API layer ([`is_op_api_source`]).
pub fn cpp_files(dir: &Path) -> Result<Vec<PathBuf>, OpError> {
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    let entries = std::fs::read_dir(dir).map_err(|e| OpError::io("list", dir, e))?;
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| OpError::io("list", dir, e))?;
        let path = entry.path();
        if path.is_file()
            && path.extension().is_some_and(|e| e == "cpp")
            && !is_op_api_source(&path)
        {
            out.push(path);
        }
    }
    out.sort();
    Ok(out)
}

impl OpPackage {
    /// Loads `dir/op.toml`, resolves the sources (listed ones must exist;
    /// by default every `*.cpp` of `op_host/` and `op_kernel/`), parses the
    /// tiling regions of the host sources and the tiling header, and checks
    /// the `[tiling]` constraints and the golden script. A builtin golden
    /// the spec names is looked up in `builtins` (every built-in
    /// operator's: `ascendopt_golden::BUILTINS`).
    pub fn load(dir: &Path, builtins: &Builtins) -> Result<OpPackage, OpError> {
        let dir = normalize(dir);
        let file = dir.join("op.toml");
        let spec = OpSpec::load(&file, builtins)?;
        let op = KeyPath::root().key("op");

        let resolve = |listed: &Option<Vec<PathBuf>>,
                       key: &str,
                       sub: &str|
         -> Result<Vec<PathBuf>, OpError> {
            match listed {
                Some(list) => {
                    let mut out = Vec::new();
                    for (i, rel) in list.iter().enumerate() {
                        let p = dir.join(rel);
                        if !p.is_file() {
                            return Err(spec.error_at(
                                op.key(key).index(i),
                                format!("{} does not exist", p.display()),
                            ));
                        }
                        out.push(p);
                    }
                    Ok(out)
                }
                None => {
                    let found = cpp_files(&dir.join(sub))?;
                    if found.is_empty() {
                        return Err(spec.error_at(
                            op.clone(),
                            format!(
                                "{} has no .cpp file; add sources there or list them in op.{key}",
                                dir.join(sub).display()
                            ),
                        ));
                    }
                    Ok(found)
                }
            }
        };
        let host_sources = resolve(&spec.host_sources, "host_sources", "op_host")?;
        let kernel_sources = resolve(&spec.kernel_sources, "kernel_sources", "op_kernel")?;

        let tiling_header = match &spec.tiling_header {
            Some(rel) => {
                let p = dir.join(rel);
                if !p.is_file() {
                    return Err(spec.error_at(
                        op.key("tiling_header"),
                        format!("{} does not exist", p.display()),
                    ));
                }
                Some(p)
            }
            None => {
                let p = dir.join("op_host").join(format!("{}_tiling.h", spec.name));
                p.is_file().then_some(p)
            }
        };

        let mut sources = Vec::new();
        for path in host_sources.iter().chain(tiling_header.iter()) {
            let text = std::fs::read_to_string(path).map_err(|e| OpError::io("read", path, e))?;
            let s = TilingSource::parse(path, &text)?;
            if !s.regions.is_empty() {
                sources.push(s);
            }
        }
        let tiling = TilingSpace {
            sources,
            constraints: spec.constraints.clone(),
        };
        let knobs: Vec<(String, PathBuf, usize)> = tiling
            .knobs()
            .map(|k| (k.name.clone(), k.file.clone(), k.line))
            .collect();
        for (i, (name, file, line)) in knobs.iter().enumerate() {
            if let Some((_, first_file, first_line)) = knobs[..i].iter().find(|(n, _, _)| n == name)
            {
                return Err(OpError::Source {
                    file: file.clone(),
                    line: *line,
                    message: format!(
                        "knob `{name}` is already declared at {}:{first_line}",
                        first_file.display()
                    ),
                });
            }
        }
        let cpath = KeyPath::root().key("tiling").key("constraints");
        for (i, c) in spec.constraints.iter().enumerate() {
            for v in c.vars() {
                if tiling.knob(v).is_none() {
                    let names: Vec<&str> = knobs.iter().map(|(n, _, _)| n.as_str()).collect();
                    return Err(spec.error_at(
                        cpath.index(i),
                        format!(
                            "unknown knob `{v}` (knobs: {})",
                            if names.is_empty() {
                                "none".to_string()
                            } else {
                                names.join(", ")
                            }
                        ),
                    ));
                }
            }
        }
        if let Err(e) = tiling.check(&Default::default()) {
            return Err(spec.error_at(
                cpath,
                format!("the knobs' current values violate a constraint: {e}"),
            ));
        }

        if let GoldenSpec::Script(rel) = &spec.golden {
            let p = dir.join(rel);
            if !p.is_file() {
                return Err(spec.error_at(
                    KeyPath::root().key("golden").key("script"),
                    format!("{} does not exist", p.display()),
                ));
            }
        }

        Ok(OpPackage {
            dir,
            spec,
            host_sources,
            kernel_sources,
            tiling_header,
            tiling,
        })
    }

    /// The operator name.
    pub fn name(&self) -> &str {
        &self.spec.name
    }

    /// The test cases.
    pub fn cases(&self) -> &[Case] {
        &self.spec.cases
    }

    /// A case by name.
    pub fn case(&self, name: &str) -> Option<&Case> {
        self.spec.case(name)
    }

    /// The expected outputs of a case for the given inputs.
    pub fn golden(&self, case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, OpError> {
        golden::golden(&self.spec, case, inputs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_files_skip_hidden_and_build_folders_and_stop_at_a_symlink_loop() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("op_kernel/sub")).unwrap();
        std::fs::create_dir_all(root.join("build")).unwrap();
        std::fs::write(root.join("op_kernel/k.cpp"), "k").unwrap();
        std::fs::write(root.join("op_kernel/sub/h.h"), "h").unwrap();
        std::fs::write(root.join(".hidden"), "x").unwrap();
        std::fs::write(root.join("build/out.o"), "o").unwrap();
        let rels: Vec<String> = package_files(root)
            .unwrap()
            .into_iter()
            .map(|(r, _)| r)
            .collect();
        assert_eq!(rels, ["op_kernel/k.cpp", "op_kernel/sub/h.h"]);
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(root.join("op_kernel"), root.join("op_kernel/sub/loop"))
                .unwrap();
            let err = package_files(root).unwrap_err().to_string();
            assert!(err.contains("folders nested too deep"), "{err}");
        }
    }
    use crate::Dtype;

    #[test]
    fn op_api_sources_are_told_by_their_includes_or_their_headers() {
        let dir = tempfile::tempdir().unwrap();
        let w = |name: &str, text: &str| {
            let p = dir.path().join(name);
            std::fs::write(&p, text).unwrap();
            p
        };
        w("padv3.h", "#include \"opdev/op_executor.h\"\n");
        w("tiling.h", "#include \"register/tilingdata_base.h\"\n");
        let l0 = w("padv3.cpp", "#include \"padv3.h\"\n");
        let direct = w("two.cpp", "#include <aclnn/aclnn_base.h>\n");
        let tiling = w("pad.cpp", "#include \"tiling.h\"\n#include \"missing.h\"\n");
        let named = w("aclnn_pad.cpp", "\n");
        assert!(is_op_api_source(&l0));
        assert!(is_op_api_source(&direct));
        assert!(is_op_api_source(&named));
        assert!(!is_op_api_source(&tiling));
    }

    #[test]
    fn normalize_removes_dot_dot() {
        assert_eq!(
            normalize(Path::new("/a/b/../../ops")),
            PathBuf::from("/ops")
        );
        assert_eq!(normalize(Path::new("a/./b/../c")), PathBuf::from("a/c"));
        assert_eq!(normalize(Path::new("../x")), PathBuf::from("../x"));
        assert_eq!(normalize(Path::new("a/..")), PathBuf::from("."));
    }

    #[test]
    fn builtin_dir_points_at_the_repo_ops_unless_overridden() {
        let d = ops_dir_from(None);
        assert!(d.ends_with("ops"));
        assert!(!d.to_string_lossy().contains(".."));
        assert!(d.join("add_custom").is_dir());
        assert_eq!(ops_dir_from(Some("".into())), d);
        assert_eq!(
            ops_dir_from(Some("/elsewhere/ops".into())),
            PathBuf::from("/elsewhere/ops")
        );
    }

    fn write(dir: &Path, rel: &str, text: &str) {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    const TOML: &str = r#"[op]
name = "my_add"
level = 1
op_type = "MyAdd"

[[inputs]]
name = "x"
dtypes = ["float32"]

[[outputs]]
name = "y"
dtype = { same_as = "x" }

[golden]
builtin = "sqrt"

[tiling]
constraints = ["TILE * BUF <= 4096"]

[[cases]]
name = "c"
shapes = [[10]]
"#;

    const HOST: &str = "// ascendopt:tiling-begin\nconstexpr uint32_t TILE = 1024; // ascendopt:knob min=256 max=4096 step=pow2\n// ascendopt:tiling-end\n";
    const HEADER: &str = "// ascendopt:tiling-begin\nconstexpr uint32_t BUF = 2; // ascendopt:knob choices=1,2,4\n// ascendopt:tiling-end\n";

    fn user_package() -> tempfile::TempDir {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        write(d, "op.toml", TOML);
        write(d, "op_host/my_add.cpp", HOST);
        write(d, "op_host/my_add_tiling.h", HEADER);
        write(d, "op_kernel/my_add.cpp", "// kernel\n");
        tmp
    }

    #[test]
    fn user_package_with_knobs_in_source_and_header() {
        let tmp = user_package();
        let p = OpPackage::load(tmp.path(), &crate::golden::testing::BUILTINS).unwrap();
        assert_eq!(p.spec.kernel, "my_add");
        assert_eq!(p.host_sources, vec![tmp.path().join("op_host/my_add.cpp")]);
        assert_eq!(
            p.tiling.current().into_iter().collect::<Vec<_>>(),
            vec![("BUF".to_string(), 2), ("TILE".to_string(), 1024)]
        );
        let mut v = std::collections::BTreeMap::new();
        v.insert("BUF".to_string(), 4);
        v.insert("TILE".to_string(), 2048);
        assert!(p
            .tiling
            .check(&v)
            .unwrap_err()
            .to_string()
            .contains("`TILE * BUF <= 4096` does not hold"));
        v.insert("TILE".to_string(), 1024);
        let files = p.tiling.render_with(&v).unwrap();
        assert_eq!(files.len(), 2);
        assert!(files[1].1.contains("BUF = 4;"));
        assert_eq!(files[0].1, HOST);
    }

    #[test]
    fn user_package_errors_are_located() {
        let tmp = user_package();
        let d = tmp.path();
        let file = d.join("op.toml");
        write(d, "op.toml", &TOML.replace("TILE * BUF", "TILE * BUFS"));
        let e = OpPackage::load(d, &crate::golden::testing::BUILTINS)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            format!(
                "{}:18:16: tiling.constraints[0]: unknown knob `BUFS` (knobs: TILE, BUF)",
                file.display()
            )
        );
        write(d, "op.toml", &TOML.replace("<= 4096", "<= 1024"));
        let e = OpPackage::load(d, &crate::golden::testing::BUILTINS)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("tiling.constraints: the knobs' current values violate a constraint"),
            "{e}"
        );
        write(
            d,
            "op.toml",
            &TOML.replace(
                "op_type = \"MyAdd\"",
                "op_type = \"MyAdd\"\nhost_sources = [\"op_host/a.cpp\", \"op_host/missing.cpp\"]",
            ),
        );
        write(d, "op_host/a.cpp", "");
        let e = OpPackage::load(d, &crate::golden::testing::BUILTINS)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            format!(
                "{}:5:34: op.host_sources[1]: {} does not exist",
                file.display(),
                d.join("op_host/missing.cpp").display()
            )
        );
        write(d, "op.toml", TOML);
        std::fs::remove_file(d.join("op_kernel/my_add.cpp")).unwrap();
        let e = OpPackage::load(d, &crate::golden::testing::BUILTINS)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(": op: ") && e.contains("op_kernel has no .cpp file"),
            "{e}"
        );
        write(d, "op_kernel/k.cpp", "");
        write(d, "op_host/my_add_tiling.h", &HEADER.replace("BUF", "TILE"));
        let e = OpPackage::load(d, &crate::golden::testing::BUILTINS)
            .unwrap_err()
            .to_string();
        let want = format!(
            "my_add_tiling.h:2: knob `TILE` is already declared at {}:2",
            d.join("op_host/my_add.cpp").display()
        );
        assert!(e.ends_with(&want), "{e}");
        let e = OpPackage::load(&d.join("nowhere"), &crate::golden::testing::BUILTINS)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("cannot read "), "{e}");
    }

    fn have_numpy() -> bool {
        std::process::Command::new("python3")
            .args(["-c", "import numpy"])
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
    }

    #[test]
    fn script_golden() {
        let tmp = user_package();
        let d = tmp.path();
        let toml = TOML
            .replace("builtin = \"sqrt\"", "script = \"golden.py\"")
            .replace(
                "shapes = [[10]]",
                "shapes = [[3]]\ndtype = \"float32\"\n\n[[cases]]\nname = \"bad\"\nshapes = [[2]]",
            );
        let toml = toml.replace(
            "dtypes = [\"float32\"]",
            "dtypes = [\"float32\"]\n\n[[attrs]]\nname = \"k\"\ntype = \"float\"\ndefault = 0.1",
        );
        write(d, "op.toml", &toml);
        let e = OpPackage::load(d, &crate::golden::testing::BUILTINS)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("golden.script: ") && e.contains("golden.py does not exist"),
            "{e}"
        );
        write(
            d,
            "golden.py",
            "import numpy as np\n\ndef golden(inputs, attrs, case):\n    if case['name'] == 'bad':\n        raise ValueError('boom')\n    return {'y': inputs['x'].astype(np.float64) * attrs['k']}\n",
        );
        let p = OpPackage::load(d, &crate::golden::testing::BUILTINS).unwrap();
        if !have_numpy() {
            eprintln!(
                "script_golden: python3 with numpy not available; only the loader was checked"
            );
            return;
        }
        let c = p.case("c").unwrap();
        let x = crate::Tensor::from_f64s(Dtype::Float32, &[3], &[1.0, 3.0, -2.0]);
        let out = p.golden(c, &[x]).unwrap();
        // float64 results come back rounded once to float32.
        assert_eq!(out[0].dtype, Dtype::Float32);
        assert_eq!(
            out[0].to_f64s(),
            vec![f64::from(0.1f32), f64::from(0.3f32), f64::from(-0.2f32)]
        );
        let bad = p.case("bad").unwrap();
        let e = p
            .golden(bad, &[crate::Tensor::zeros(Dtype::Float32, &[2])])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("case `bad`") && e.contains("ValueError: boom"),
            "{e}"
        );
    }
}
