//! One candidate operator package, in memory: every file of its folder
//! (relative path and bytes), read once. Its identity, the unit of the run
//! store's `sources` table, and its content hash are computed from these
//! files; it reaches the disk only when a compiler needs it
//! ([`Candidate::write`]).
//!
//! The identity text (the store's `sources` row): every C/C++ file of
//! `op_host/` and `op_kernel/` (and any source op.toml lists elsewhere) as
//! text, each after a `//== <path> ==` line, then the SHA-256 of every
//! other file of the package (op.toml, golden scripts, tests, ...) under
//! `//== package files (sha256) ==`. A change to any file of the package, a
//! header or the golden included, makes another candidate. The text is the
//! one earlier versions stored, so the hashes of stored runs still match.
//!
//! Invariant: a candidate's paths are relative, `/`-separated and stay
//! inside the package (no `..`, no root); hidden entries and the build
//! products (`build/`, `target/` at the top) are not part of it; the
//! folder is read with [`ascendopt_op::package::package_files`] (bounded
//! depth).

use crate::store::SourceHash;
use ascendopt_op::package::OpPackage;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

/// Extensions of C/C++ files, kept as text in the identity.
const SOURCE_EXTENSIONS: [&str; 11] = [
    "c", "cc", "cpp", "cxx", "h", "hh", "hpp", "hxx", "inl", "ipp", "tpp",
];

/// Why a candidate could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum CandidateError {
    /// A file or folder could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The package's folder could not be listed (or is nested too deep).
    #[error(transparent)]
    List(#[from] ascendopt_op::OpError),
    /// A path that is not relative and inside the package.
    #[error("`{path}`: not a relative path inside the package")]
    Outside {
        /// The path as given.
        path: String,
    },
}

/// A candidate operator package: every file of its folder, in memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// Relative path (`/`-separated) to contents, sorted by path.
    files: BTreeMap<String, Vec<u8>>,
    /// Sources op.toml lists outside `op_host/` and `op_kernel/` (kept as
    /// text in the identity too).
    listed: BTreeSet<String>,
}

impl Candidate {
    /// Every file of `package`'s folder (hidden entries and build products
    /// left out).
    pub fn read(package: &OpPackage) -> Result<Candidate, CandidateError> {
        let mut files = BTreeMap::new();
        for (rel, path) in ascendopt_op::package::package_files(&package.dir)? {
            let bytes = std::fs::read(&path).map_err(|source| CandidateError::Io {
                path: path.clone(),
                source,
            })?;
            files.insert(rel, bytes);
        }
        let listed = package
            .host_sources
            .iter()
            .chain(&package.kernel_sources)
            .chain(&package.tiling_header)
            .filter_map(|p| p.strip_prefix(&package.dir).ok())
            .map(|p| p.to_string_lossy().replace('\\', "/"))
            .collect();
        Ok(Candidate { files, listed })
    }

    /// This candidate with `sources` (relative path, text) written over
    /// its files (a proposer's edit of `op_kernel/` and `op_host/`).
    pub fn with_sources<'s>(
        &self,
        sources: impl IntoIterator<Item = (&'s str, &'s str)>,
    ) -> Result<Candidate, CandidateError> {
        let mut out = self.clone();
        for (path, text) in sources {
            let rel = relative(path)?;
            out.files.insert(rel, text.as_bytes().to_vec());
        }
        Ok(out)
    }

    /// The files, by relative path.
    pub fn files(&self) -> impl Iterator<Item = (&str, &[u8])> {
        self.files.iter().map(|(p, b)| (p.as_str(), b.as_slice()))
    }

    /// Whether the identity keeps `rel` as text (a C/C++ source of the
    /// kernel or the host, or a source op.toml lists).
    fn is_text(&self, rel: &str) -> bool {
        let source = (rel.starts_with("op_host/") || rel.starts_with("op_kernel/"))
            && rel
                .rsplit_once('.')
                .is_some_and(|(_, e)| SOURCE_EXTENSIONS.contains(&e));
        source || self.listed.contains(rel)
    }

    /// The SHA-256 lines (`<hex>  <path>`) of every file the identity does
    /// not keep as text: op.toml, the golden, scripts, data.
    pub fn other_files_digest(&self) -> String {
        let mut manifest = String::new();
        for (rel, bytes) in &self.files {
            if !self.is_text(rel) {
                manifest.push_str(&format!("{:x}  {rel}\n", Sha256::digest(bytes)));
            }
        }
        manifest
    }

    /// The identity text (module docs): what the run store keeps of a
    /// candidate.
    pub fn identity(&self) -> String {
        let mut text = String::new();
        for (rel, bytes) in &self.files {
            if self.is_text(rel) {
                let body = String::from_utf8_lossy(bytes);
                text.push_str(&format!("//== {rel} ==\n"));
                text.push_str(&body);
                if !body.ends_with('\n') {
                    text.push('\n');
                }
            }
        }
        let manifest = self.other_files_digest();
        if !manifest.is_empty() {
            text.push_str("//== package files (sha256) ==\n");
            text.push_str(&manifest);
        }
        text
    }

    /// The content hash: the SHA-256 of the identity.
    pub fn hash(&self) -> SourceHash {
        SourceHash::of(&self.identity())
    }

    /// Writes every file under `dir` (for the compiler).
    pub fn write(&self, dir: &Path) -> Result<(), CandidateError> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| CandidateError::Io { path, source }
        };
        for (rel, bytes) in &self.files {
            let path = dir.join(relative(rel)?);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(io(parent))?;
            }
            std::fs::write(&path, bytes).map_err(io(&path))?;
        }
        Ok(())
    }
}

/// `path` as a relative `/`-separated path inside the package, or why not.
fn relative(path: &str) -> Result<String, CandidateError> {
    let p = Path::new(path);
    let inside = !path.is_empty()
        && p.components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    if !inside {
        return Err(CandidateError::Outside {
            path: path.to_string(),
        });
    }
    Ok(p.components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn package(files: &[(&str, &str)]) -> (tempfile::TempDir, OpPackage) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("add_custom");
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ops/add_custom");
        ascendopt_op::package::copy_tree(&src, &root, &["build", "target"]).unwrap();
        for (rel, text) in files {
            let path = root.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let pkg = OpPackage::load(&root, &ascendopt_golden::BUILTINS).unwrap();
        (dir, pkg)
    }

    #[test]
    fn every_file_counts_and_hidden_and_build_products_do_not() {
        let (_d, pkg) = package(&[]);
        let base = Candidate::read(&pkg).unwrap();
        let identity = base.identity();
        assert!(identity.starts_with("//== op_host/"), "{identity}");
        assert!(identity.contains("//== op_kernel/add_custom.cpp ==\n"));
        assert!(identity.contains("//== package files (sha256) ==\n"));
        assert!(identity.contains("  op.toml\n"));

        // A data file, a golden script: other candidates.
        let (_d2, with_data) = package(&[("data/x.txt", "1")]);
        assert_ne!(Candidate::read(&with_data).unwrap().hash(), base.hash());
        // Hidden files and build products: the same candidate.
        let (_d3, noisy) = package(&[(".hidden", "x"), ("build/out.o", "x")]);
        assert_eq!(Candidate::read(&noisy).unwrap().hash(), base.hash());
    }

    #[test]
    fn an_edit_in_memory_is_the_candidate_written_and_read_back() {
        let (_d, pkg) = package(&[]);
        let base = Candidate::read(&pkg).unwrap();
        let kernel = "// edited\nint k;\n";
        let edited = base
            .with_sources([("op_kernel/add_custom.cpp", kernel)])
            .unwrap();
        assert_ne!(edited.hash(), base.hash());
        let out = tempfile::tempdir().unwrap();
        let dir = out.path().join("add_custom");
        edited.write(&dir).unwrap();
        let back =
            Candidate::read(&OpPackage::load(&dir, &ascendopt_golden::BUILTINS).unwrap()).unwrap();
        assert_eq!(back, edited);
        assert_eq!(
            std::fs::read_to_string(dir.join("op_kernel/add_custom.cpp")).unwrap(),
            kernel
        );
    }

    #[test]
    fn paths_outside_the_package_are_refused() {
        let (_d, pkg) = package(&[]);
        let base = Candidate::read(&pkg).unwrap();
        for bad in ["../x.cpp", "/etc/passwd", "op_kernel/../../x", ""] {
            assert!(
                matches!(
                    base.with_sources([(bad, "x")]),
                    Err(CandidateError::Outside { .. })
                ),
                "{bad}"
            );
        }
        assert!(base.with_sources([("./op_kernel/a.h", "x")]).is_ok());
    }
}
