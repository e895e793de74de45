//! Where an operator folder's build finds what its project gives it.
//!
//! An msopgen operator inside a larger project (the cann-ops layout:
//! `src/<family>/<op>/{op_host,op_kernel}` beside `src/common/inc`) is
//! compiled by the project's CMake with more than its own folder: extra
//! include directories (`target_include_directories(optiling ...)`,
//! `add_ops_compile_options(... OPTIONS -I<dir>)`) and extra host sources
//! (`target_sources(optiling ...)`, e.g. a tiling function shared by a
//! family of operators). [`discover`] reads them from the operator's own
//! `CMakeLists.txt`, and finds the headers its sources include that neither
//! the folder nor the simulator has in the project tree around it.
//!
//! Invariants:
//! - Only what exists is returned; nothing is read outside the project
//!   root (the outermost ancestor within [`MAX_UP`] levels that holds a
//!   `CMakeLists.txt`, else the folder's parent).
//! - A header found in several places is taken from the place nearest to
//!   the operator folder (most path components in common), then the
//!   shortest path; the choice is deterministic.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fs;
use std::path::{Component, Path, PathBuf};

/// How far above the operator folder the project root may be.
const MAX_UP: usize = 4;
/// Most files of the project tree indexed.
const MAX_INDEXED: usize = 50_000;
/// Most directory entries visited while indexing.
const MAX_VISITED: usize = 400_000;
/// Most headers followed when looking for unresolved includes.
const MAX_FOLLOWED: usize = 2_000;
/// Folders of a project never searched for headers (they hold examples,
/// tests and build output, not the operator's code).
const SKIPPED_DIRS: &[&str] = &[
    "build",
    "build_out",
    "output",
    "examples",
    "docs",
    "framework",
    "tests",
    "test",
    "third_party",
];
/// CMake targets whose sources and include directories make the host
/// library (tiling, shape inference, OpDef); `opapi` is the aclnn layer.
const HOST_TARGETS: &[&str] = &[
    "optiling",
    "opsproto",
    "op_host_aclnn",
    "op_host_aclnnInner",
    "op_host_aclnnExc",
];

/// What the project adds to an operator folder's build.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProjectLayout {
    /// Include directories outside the folder, in the order found.
    pub include_dirs: Vec<PathBuf>,
    /// Host sources outside `op_host/` (from the CMake host targets).
    pub host_sources: Vec<PathBuf>,
    /// Headers the sources include (directly or not) that register a
    /// tiling data class (`REGISTER_TILING_DATA_CLASS`), in the order met:
    /// where the kernel's tiling struct comes from when the folder has no
    /// `op_host/*_tiling.h`.
    pub tiling_headers: Vec<PathBuf>,
}

impl ProjectLayout {
    /// The tiling header for the operator `op_type` (`ForeachAbs`): the
    /// first of [`ProjectLayout::tiling_headers`] that registers a class for
    /// it, else the first one.
    pub fn tiling_header_for(&self, op_type: &str) -> Option<PathBuf> {
        let wanted = format!("REGISTER_TILING_DATA_CLASS({op_type},");
        self.tiling_headers
            .iter()
            .find(|h| {
                fs::read_to_string(h)
                    .map(|t| t.replace(' ', "").contains(&wanted))
                    .unwrap_or(false)
            })
            .or(self.tiling_headers.first())
            .cloned()
    }
}

/// `add_custom` → `AddCustom`: the OpDef class name msopgen derives from
/// an operator folder's name.
pub fn camel_case(snake: &str) -> String {
    snake
        .split('_')
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// The project around `op_dir`: CMake additions, then directories of the
/// headers that `sources` include (directly or through headers found)
/// and that neither their own folder, `include_dirs`, the simulator's
/// headers (`sim_include`) nor the system has.
pub fn discover(
    op_dir: &Path,
    sources: &[PathBuf],
    include_dirs: &[PathBuf],
    sim_include: &Path,
) -> ProjectLayout {
    let Ok(op_dir) = fs::canonicalize(op_dir) else {
        return ProjectLayout::default();
    };
    let root = project_root(&op_dir);
    let mut layout = from_cmake(&op_dir, &root);
    let mut dirs: Vec<PathBuf> = include_dirs
        .iter()
        .filter_map(|d| fs::canonicalize(d).ok())
        .chain(layout.include_dirs.iter().cloned())
        .collect();
    let mut index: Option<BTreeMap<String, Vec<PathBuf>>> = None;
    let mut queue: VecDeque<PathBuf> = sources
        .iter()
        .chain(&layout.host_sources)
        .filter_map(|s| fs::canonicalize(s).ok())
        .collect();
    let mut seen: BTreeSet<PathBuf> = queue.iter().cloned().collect();
    let mut followed = 0;
    while let Some(file) = queue.pop_front() {
        followed += 1;
        if followed > MAX_FOLLOWED {
            break;
        }
        let Ok(text) = fs::read_to_string(&file) else {
            continue;
        };
        let is_source = file.extension().is_some_and(|e| e == "cpp" || e == "cc");
        if !is_source
            && text.contains("REGISTER_TILING_DATA_CLASS(")
            && !layout.tiling_headers.contains(&file)
        {
            layout.tiling_headers.push(file.clone());
        }
        let here = file.parent().unwrap_or(Path::new("/")).to_path_buf();
        for target in text.lines().filter_map(include_target) {
            let target = Path::new(target);
            if target.is_absolute() || is_system(target) || sim_include.join(target).is_file() {
                continue;
            }
            let found = std::iter::once(&here)
                .chain(&dirs)
                .map(|d| d.join(target))
                .find(|p| p.is_file());
            let found = match found {
                Some(path) => Some(path),
                None => {
                    let index = index.get_or_insert_with(|| index_tree(&root));
                    nearest(index, target, &op_dir).map(|(dir, path)| {
                        if !dirs.contains(&dir) {
                            dirs.push(dir.clone());
                            layout.include_dirs.push(dir);
                        }
                        path
                    })
                }
            };
            if let Some(path) = found.and_then(|p| fs::canonicalize(p).ok()) {
                if path.starts_with(&root) && seen.insert(path.clone()) {
                    queue.push_back(path);
                }
            }
        }
    }
    layout
}

/// The project root of `op_dir` (see the module docs).
fn project_root(op_dir: &Path) -> PathBuf {
    let mut root = op_dir.parent().unwrap_or(op_dir).to_path_buf();
    for dir in op_dir.ancestors().skip(1).take(MAX_UP) {
        if dir.join("CMakeLists.txt").is_file() {
            root = dir.to_path_buf();
        }
    }
    root
}

/// Standard and system headers: no extension (`<vector>`), or present
/// under the system include directories.
fn is_system(target: &Path) -> bool {
    if target.extension().is_none() && target.components().count() == 1 {
        return true;
    }
    [
        "/usr/include",
        "/usr/local/include",
        "/usr/include/x86_64-linux-gnu",
    ]
    .iter()
    .any(|d| Path::new(d).join(target).is_file())
}

/// The file named by an `#include "x"` or `#include <x>` line.
fn include_target(line: &str) -> Option<&str> {
    ascendopt_op::package::include_target(line)
}

/// Every header file under `root` by file name (skipping hidden and
/// [`SKIPPED_DIRS`] folders).
fn index_tree(root: &Path) -> BTreeMap<String, Vec<PathBuf>> {
    let mut index: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    let mut stack = vec![(root.to_path_buf(), 0usize)];
    let mut count = 0;
    let mut visited = 0;
    while let Some((dir, depth)) = stack.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        let mut entries: Vec<_> = entries.flatten().collect();
        visited += entries.len();
        if visited > MAX_VISITED {
            return index;
        }
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                if depth < 12 && !SKIPPED_DIRS.contains(&name.as_str()) {
                    stack.push((entry.path(), depth + 1));
                }
            } else if kind.is_file() && is_header(&name) {
                count += 1;
                if count > MAX_INDEXED {
                    return index;
                }
                index.entry(name).or_default().push(entry.path());
            }
        }
    }
    index
}

fn is_header(name: &str) -> bool {
    [".h", ".hpp", ".hh", ".hxx", ".inc", ".inl"]
        .iter()
        .any(|ext| name.ends_with(ext))
}

/// Where `target` (`foreach/utils.h`) is under the project: the include
/// directory that makes it resolve and the file, nearest to `op_dir`.
fn nearest(
    index: &BTreeMap<String, Vec<PathBuf>>,
    target: &Path,
    op_dir: &Path,
) -> Option<(PathBuf, PathBuf)> {
    let name = target.file_name()?.to_string_lossy().into_owned();
    let wanted: Vec<Component<'_>> = target
        .components()
        .filter(|c| !matches!(c, Component::CurDir))
        .collect();
    if wanted.iter().any(|c| matches!(c, Component::ParentDir)) {
        return None;
    }
    let mut best: Option<(usize, usize, PathBuf, PathBuf)> = None;
    for path in index.get(&name)? {
        let parts: Vec<Component<'_>> = path.components().collect();
        if parts.len() < wanted.len() || parts[parts.len() - wanted.len()..] != wanted[..] {
            continue;
        }
        let dir: PathBuf = parts[..parts.len() - wanted.len()].iter().collect();
        let common = dir
            .components()
            .zip(op_dir.components())
            .take_while(|(a, b)| a == b)
            .count();
        let len = path.components().count();
        let better = match &best {
            None => true,
            Some((c, l, _, p)) => {
                common > *c || (common == *c && (len < *l || (len == *l && path < p)))
            }
        };
        if better {
            best = Some((common, len, dir, path.clone()));
        }
    }
    best.map(|(_, _, dir, path)| (dir, path))
}

/// The additions of the operator's own `CMakeLists.txt` (host targets'
/// sources and include directories, `-I` options of the kernel compile).
fn from_cmake(op_dir: &Path, root: &Path) -> ProjectLayout {
    let mut layout = ProjectLayout::default();
    let Ok(text) = fs::read_to_string(op_dir.join("CMakeLists.txt")) else {
        return layout;
    };
    let text: String = text
        .lines()
        .map(|l| l.split('#').next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    for (command, args) in cmake_calls(&text) {
        let mut words = args.split_whitespace();
        match command.as_str() {
            "target_sources" | "target_include_directories" => {
                let Some(target) = words.next() else {
                    continue;
                };
                if !HOST_TARGETS.contains(&target) {
                    continue;
                }
                for word in words {
                    if matches!(
                        word,
                        "PRIVATE" | "PUBLIC" | "INTERFACE" | "BEFORE" | "SYSTEM"
                    ) {
                        continue;
                    }
                    let Some(path) = resolve(word, op_dir, root) else {
                        continue;
                    };
                    if command == "target_sources" {
                        let source = path.extension().is_some_and(|e| e == "cpp" || e == "cc");
                        if source
                            && path.is_file()
                            && !path.starts_with(op_dir.join("op_host"))
                            && !ascendopt_op::package::is_op_api_source(&path)
                            && !layout.host_sources.contains(&path)
                        {
                            layout.host_sources.push(path);
                        }
                    } else if path.is_dir() && !layout.include_dirs.contains(&path) {
                        layout.include_dirs.push(path);
                    }
                }
            }
            "add_ops_compile_options" => {
                for word in words {
                    let Some(dir) = word.strip_prefix("-I") else {
                        continue;
                    };
                    if let Some(path) = resolve(dir, op_dir, root) {
                        if path.is_dir() && !layout.include_dirs.contains(&path) {
                            layout.include_dirs.push(path);
                        }
                    }
                }
            }
            _ => {}
        }
    }
    layout
}

/// The `name(args)` calls of a CMake text (arguments unparsed).
fn cmake_calls(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i].is_ascii_alphabetic() || bytes[i] == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            let name = &text[start..i];
            let mut j = i;
            while j < bytes.len() && (bytes[j] == b' ' || bytes[j] == b'\t') {
                j += 1;
            }
            if j < bytes.len() && bytes[j] == b'(' {
                let mut depth = 0;
                let mut k = j;
                while k < bytes.len() {
                    match bytes[k] {
                        b'(' => depth += 1,
                        b')' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    k += 1;
                }
                out.push((
                    name.to_ascii_lowercase(),
                    text[j + 1..k.min(bytes.len())].to_string(),
                ));
                i = k + 1;
            }
        } else {
            i += 1;
        }
    }
    out
}

/// A CMake path argument as a path under `root`: `${CMAKE_CURRENT_SOURCE_DIR}`
/// is the operator folder, a relative path is relative to it, and
/// `${ANY}/rest` is `rest` under the nearest ancestor (or a child of one)
/// that has it.
fn resolve(word: &str, op_dir: &Path, root: &Path) -> Option<PathBuf> {
    let word = word.trim_matches('"');
    let path = if let Some(rest) = word.strip_prefix("${CMAKE_CURRENT_SOURCE_DIR}") {
        op_dir.join(rest.trim_start_matches('/'))
    } else if word.starts_with("${") {
        let end = word.find('}')?;
        let rest = word[end + 1..].trim_start_matches('/');
        if rest.is_empty() || rest.contains("${") {
            return None;
        }
        let mut found = None;
        'up: for dir in op_dir.ancestors().skip(1) {
            if !dir.starts_with(root) {
                break;
            }
            if dir.join(rest).exists() {
                found = Some(dir.join(rest));
                break;
            }
            let Ok(children) = fs::read_dir(dir) else {
                continue;
            };
            let mut children: Vec<PathBuf> = children
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect();
            children.sort();
            for child in children {
                if child.join(rest).exists() {
                    found = Some(child.join(rest));
                    break 'up;
                }
            }
        }
        found?
    } else if Path::new(word).is_absolute() {
        return None;
    } else {
        op_dir.join(word)
    };
    let path = fs::canonicalize(path).ok()?;
    path.starts_with(root).then_some(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    /// A project laid out like cann-ops: a shared include tree and a shared
    /// tiling source, two operators.
    fn project() -> tempfile::TempDir {
        let tmp = tempfile::tempdir().unwrap();
        let r = tmp.path();
        write(&r.join("CMakeLists.txt"), "project(x)\n");
        write(
            &r.join("src/common/inc/fam/proto.h"),
            "#include \"fam/deep.h\"\n",
        );
        write(&r.join("src/common/inc/fam/deep.h"), "#include <vector>\n");
        write(&r.join("src/common/inc/fam/op_kernel/kern.h"), "\n");
        write(&r.join("src/common/src/fam/tiling_func.cpp"), "\n");
        write(&r.join("src/other/op_x/op_host/local.h"), "\n");
        write(&r.join("src/fam/op_a/examples/fam/proto.h"), "\n");
        write(
            &r.join("src/fam/op_a/CMakeLists.txt"),
            "add_ops_compile_options(OP_NAME A OPTIONS -I${OP_COMMON_DIR}/inc/fam/op_kernel\n -Werror)\n\
             target_sources(optiling PRIVATE\n  ${OP_COMMON_DIR}/src/fam/tiling_func.cpp # shared\n)\n\
             target_sources(opapi PRIVATE op_host/aclnn_a.cpp)\n\
             # target_sources(optiling PRIVATE ${OP_COMMON_DIR}/src/fam/gone.cpp)\n",
        );
        write(
            &r.join("src/fam/op_a/op_host/a.cpp"),
            "#include \"fam/proto.h\"\n#include \"register/op_def_registry.h\"\n#include <cstdio>\n",
        );
        write(
            &r.join("src/fam/op_a/op_kernel/a.cpp"),
            "#include \"kern.h\"\n#include \"local.h\"\n",
        );
        tmp
    }

    #[test]
    fn cmake_additions_and_included_project_headers_are_found() {
        let tmp = project();
        let root = fs::canonicalize(tmp.path()).unwrap();
        let op = root.join("src/fam/op_a");
        let sim = tempfile::tempdir().unwrap();
        write(&sim.path().join("register/op_def_registry.h"), "\n");
        let layout = discover(
            &op,
            &[op.join("op_host/a.cpp"), op.join("op_kernel/a.cpp")],
            &[op.join("op_host"), op.join("op_kernel")],
            sim.path(),
        );
        assert_eq!(
            layout.host_sources,
            [root.join("src/common/src/fam/tiling_func.cpp")]
        );
        assert_eq!(
            layout.include_dirs,
            [
                root.join("src/common/inc/fam/op_kernel"),
                root.join("src/common/inc"),
                root.join("src/other/op_x/op_host"),
            ],
            "the examples copy of fam/proto.h is not taken"
        );
    }

    #[test]
    fn a_lone_folder_adds_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let op = tmp.path().join("op");
        write(&op.join("op_host/a.cpp"), "#include \"missing.h\"\n");
        let layout = discover(&op, &[op.join("op_host/a.cpp")], &[], tmp.path());
        assert_eq!(layout, ProjectLayout::default());
    }
}
