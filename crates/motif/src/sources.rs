//! [`Sources`]: the source files of an operator package held in memory, the
//! unit every motif transforms.

use super::MotifError;
use crate::knobfind::ChipLimits;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Folders of a package whose C++ files are sources.
const SOURCE_DIRS: [&str; 2] = ["op_host", "op_kernel"];
/// Extensions of source files.
const SOURCE_EXTS: [&str; 5] = ["cpp", "cc", "cxx", "h", "hpp"];

/// The C++ sources of one operator package (op_host/ and op_kernel/),
/// keyed by their path relative to the package with `/` separators
/// (`op_kernel/add_custom.cpp`). Everything else of the package (op.toml,
/// a golden script) stays on disk and is copied unchanged by
/// [`Sources::write_to`].
///
/// The sources also carry the limits of the device they are optimised
/// for ([`Sources::chip`]; the 910B2's unless set with
/// [`Sources::with_chip`]): the motifs size cores and tiles by them, and
/// every candidate made from these sources keeps them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sources {
    origin: Option<PathBuf>,
    files: BTreeMap<String, String>,
    chip: ChipLimits,
}

impl Sources {
    /// Reads the C++ files under `dir/op_host` and `dir/op_kernel`.
    pub fn load(dir: &Path) -> Result<Sources, MotifError> {
        let mut files = BTreeMap::new();
        for sub in SOURCE_DIRS {
            let root = dir.join(sub);
            if !root.is_dir() {
                continue;
            }
            let mut stack = vec![root];
            while let Some(d) = stack.pop() {
                let entries = std::fs::read_dir(&d).map_err(|e| MotifError::Io {
                    path: d.clone(),
                    message: e.to_string(),
                })?;
                for entry in entries {
                    let entry = entry.map_err(|e| MotifError::Io {
                        path: d.clone(),
                        message: e.to_string(),
                    })?;
                    let path = entry.path();
                    if path.is_dir() {
                        stack.push(path);
                        continue;
                    }
                    let is_source = path
                        .extension()
                        .and_then(|e| e.to_str())
                        .is_some_and(|e| SOURCE_EXTS.contains(&e));
                    if !is_source {
                        continue;
                    }
                    let text = std::fs::read_to_string(&path).map_err(|e| MotifError::Io {
                        path: path.clone(),
                        message: e.to_string(),
                    })?;
                    files.insert(relative(dir, &path), text);
                }
            }
        }
        if files.is_empty() {
            return Err(MotifError::NoSources {
                dir: dir.to_path_buf(),
            });
        }
        Ok(Sources {
            origin: Some(dir.to_path_buf()),
            files,
            chip: ChipLimits::default(),
        })
    }

    /// These sources for a device with `chip`'s cores and UB.
    pub fn with_chip(mut self, chip: ChipLimits) -> Sources {
        self.chip = chip;
        self
    }

    /// The limits of the device these sources are optimised for.
    pub fn chip(&self) -> ChipLimits {
        self.chip
    }

    /// Sources from (path, text) pairs, with no package on disk behind them
    /// (tests, generated candidates).
    pub fn from_files<I, P, T>(files: I) -> Sources
    where
        I: IntoIterator<Item = (P, T)>,
        P: Into<String>,
        T: Into<String>,
    {
        Sources {
            origin: None,
            files: files
                .into_iter()
                .map(|(p, t)| (p.into(), t.into()))
                .collect(),
            chip: ChipLimits::default(),
        }
    }

    /// The package folder these sources were loaded from, if any.
    pub fn origin(&self) -> Option<&Path> {
        self.origin.as_deref()
    }

    /// The text of one file.
    pub fn get(&self, path: &str) -> Option<&str> {
        self.files.get(path).map(|s| s.as_str())
    }

    /// Replaces (or adds) one file: a C/C++ file under `op_kernel/` or
    /// `op_host/`, named by a path that is normalised first; anything else
    /// (op.toml, a golden, a path leaving those folders) is refused.
    pub fn set(&mut self, path: &str, text: String) -> Result<(), MotifError> {
        let path = ascendopt_llm::edits::confined_path(path)
            .map_err(|e| MotifError::Outside(e.to_string()))?;
        self.files.insert(path, text);
        Ok(())
    }

    /// [`Sources::set`] for a file given by its path on disk, `path`
    /// lying under the package folder `dir` (as rendered tiling files are).
    pub fn set_at(&mut self, dir: &Path, path: &Path, text: String) -> Result<(), MotifError> {
        if !path.starts_with(dir) {
            return Err(MotifError::Outside(format!(
                "{} is not under the package {}",
                path.display(),
                dir.display()
            )));
        }
        self.set(&relative(dir, path), text)
    }

    /// Every file, in path order.
    pub fn files(&self) -> impl Iterator<Item = (&str, &str)> {
        self.files.iter().map(|(p, t)| (p.as_str(), t.as_str()))
    }

    /// The kernel files (sources and headers under op_kernel/), in path
    /// order.
    pub fn kernel_files(&self) -> impl Iterator<Item = (&str, &str)> {
        self.files().filter(|(p, _)| p.starts_with("op_kernel/"))
    }

    /// The host files and headers (under op_host/), in path order.
    pub fn host_files(&self) -> impl Iterator<Item = (&str, &str)> {
        self.files().filter(|(p, _)| p.starts_with("op_host/"))
    }

    /// Writes the package to `dir`: first every file of the origin package
    /// (op.toml and the rest, unchanged), then these sources over them.
    pub fn write_to(&self, dir: &Path) -> Result<(), MotifError> {
        let io = |path: &Path, e: std::io::Error| MotifError::Io {
            path: path.to_path_buf(),
            message: e.to_string(),
        };
        std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
        if let Some(origin) = &self.origin {
            let same = match (origin.canonicalize(), dir.canonicalize()) {
                (Ok(a), Ok(b)) => a == b,
                _ => false,
            };
            if !same {
                copy_tree(origin, dir)?;
            }
        }
        for (rel, text) in &self.files {
            let path = dir.join(rel);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
            }
            std::fs::write(&path, text).map_err(|e| io(&path, e))?;
        }
        Ok(())
    }

    /// The files that differ between `self` and `other` (in either), in
    /// path order.
    pub fn changed_files(&self, other: &Sources) -> Vec<String> {
        let mut paths: Vec<&String> = self.files.keys().chain(other.files.keys()).collect();
        paths.sort();
        paths.dedup();
        paths
            .into_iter()
            .filter(|p| self.files.get(*p) != other.files.get(*p))
            .cloned()
            .collect()
    }
}

fn relative(dir: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(dir).unwrap_or(path);
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

fn copy_tree(from: &Path, to: &Path) -> Result<(), MotifError> {
    ascendopt_op::package::copy_tree(from, to, &[]).map_err(|(path, e)| MotifError::Io {
        path,
        message: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loads_writes_and_keeps_the_rest_of_the_package() {
        let src = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(src.path().join("op_kernel")).unwrap();
        std::fs::create_dir_all(src.path().join("op_host")).unwrap();
        std::fs::write(src.path().join("op.toml"), "[op]\n").unwrap();
        std::fs::write(src.path().join("op_kernel/k.cpp"), "int k;\n").unwrap();
        std::fs::write(src.path().join("op_host/k.cpp"), "int h;\n").unwrap();
        std::fs::write(src.path().join("op_host/k_tiling.h"), "int t;\n").unwrap();
        std::fs::write(src.path().join("op_host/notes.txt"), "x\n").unwrap();
        let mut s = Sources::load(src.path()).unwrap();
        let paths: Vec<&str> = s.files().map(|(p, _)| p).collect();
        assert_eq!(
            paths,
            ["op_host/k.cpp", "op_host/k_tiling.h", "op_kernel/k.cpp"]
        );
        assert_eq!(s.kernel_files().count(), 1);
        assert_eq!(s.host_files().count(), 2);
        let before = s.clone();
        s.set("op_kernel/k.cpp", "int k2;\n".into()).unwrap();
        assert_eq!(s.changed_files(&before), ["op_kernel/k.cpp"]);
        // Nothing outside the sources can be set.
        for bad in ["op_kernel/../op.toml", "op.toml", "../x.cpp", "/tmp/x.h"] {
            assert!(s.set(bad, "x".into()).is_err(), "{bad}");
        }
        assert_eq!(s.set("op_kernel/./new.h", "y".into()).ok(), Some(()));
        assert_eq!(s.get("op_kernel/new.h"), Some("y"));

        let out = tempfile::tempdir().unwrap();
        s.write_to(out.path()).unwrap();
        assert_eq!(
            std::fs::read_to_string(out.path().join("op.toml")).unwrap(),
            "[op]\n"
        );
        assert_eq!(
            std::fs::read_to_string(out.path().join("op_host/notes.txt")).unwrap(),
            "x\n"
        );
        assert_eq!(
            std::fs::read_to_string(out.path().join("op_kernel/k.cpp")).unwrap(),
            "int k2;\n"
        );
    }

    #[test]
    fn a_folder_without_sources_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(
            Sources::load(dir.path()),
            Err(MotifError::NoSources { .. })
        ));
    }
}
