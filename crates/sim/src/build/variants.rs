//! The msopgen build's per-variant kernel macros.
//!
//! CANN's operator project compiles the kernel once per dtype combination
//! of the OpDef and gives the kernel three macros per parameter (guide
//! 2.10.2.4 "Kernel侧算子实现", 核函数内获取算子输入输出的数据类型和格式):
//!
//! - `DTYPE_<ARG>`: the device-side C++ type (`half`, `float`, ...);
//! - `ORIG_DTYPE_<ARG>`: the dtype of the OpDef without its namespace
//!   (`DT_FLOAT16`, `DT_FLOAT`, ...), comparable with those names;
//! - `FORMAT_<ARG>`: the format of the OpDef without its namespace
//!   (`FORMAT_ND`, ...);
//!
//! where `<ARG>` is the parameter's name in upper case. The names the
//! macros expand to are declared for the kernel by
//! `include/ascendopt/kernel/msopgen_build.h` (force-included into every
//! kernel unit).
//!
//! A kernel that uses none of these macros is compiled once, as before; one
//! that does is compiled once per dtype combination its cases launch with.
//! Where it uses them may be a header of its project it includes (the
//! cann-ops foreach kernels name `DTYPE_SCALAR` in `src/common/inc`):
//! [`files_reached`] follows the kernel's quoted includes.

use ascendopt_op::Dtype;
use std::collections::{BTreeSet, VecDeque};
use std::path::{Path, PathBuf};

/// Most files [`files_reached`] reads.
const MAX_REACHED: usize = 2_000;

/// One kernel parameter (input or output, in kernel order) of a variant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VariantParam<'a> {
    /// The parameter's name in the OpDef (`x`, `x1`, `gamma`).
    pub name: &'a str,
    /// Its dtype in this variant.
    pub dtype: Dtype,
    /// Its format without the namespace (`FORMAT_ND`).
    pub format: &'a str,
}

/// The device-side C++ type of `dtype` (what `DTYPE_<ARG>` expands to).
/// complex64 has no scalar type on the device; kernels address it as
/// pairs of floats, so its macro names an 8-byte integer of that size.
pub fn device_type(dtype: Dtype) -> &'static str {
    match dtype {
        Dtype::Float16 => "half",
        Dtype::Bfloat16 => "bfloat16_t",
        Dtype::Float32 => "float",
        Dtype::Int8 => "int8_t",
        Dtype::Uint8 => "uint8_t",
        Dtype::Int16 => "int16_t",
        Dtype::Uint16 => "uint16_t",
        Dtype::Int32 => "int32_t",
        Dtype::Uint32 => "uint32_t",
        Dtype::Int64 => "int64_t",
        Dtype::Uint64 => "uint64_t",
        Dtype::Bool => "bool",
        Dtype::Float64 => "double",
        Dtype::Complex64 => "uint64_t",
    }
}

/// The OpDef's name of `dtype` without `ge::` (what `ORIG_DTYPE_<ARG>`
/// expands to).
pub fn ge_name(dtype: Dtype) -> &'static str {
    match dtype {
        Dtype::Float16 => "DT_FLOAT16",
        Dtype::Bfloat16 => "DT_BF16",
        Dtype::Float32 => "DT_FLOAT",
        Dtype::Int8 => "DT_INT8",
        Dtype::Uint8 => "DT_UINT8",
        Dtype::Int16 => "DT_INT16",
        Dtype::Uint16 => "DT_UINT16",
        Dtype::Int32 => "DT_INT32",
        Dtype::Uint32 => "DT_UINT32",
        Dtype::Int64 => "DT_INT64",
        Dtype::Uint64 => "DT_UINT64",
        Dtype::Bool => "DT_BOOL",
        Dtype::Float64 => "DT_DOUBLE",
        Dtype::Complex64 => "DT_COMPLEX64",
    }
}

/// The macro suffix of a parameter: its name in upper case, with any
/// character that cannot be in a macro name replaced by `_`.
pub fn macro_arg(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect()
}

/// The defines of one variant: `DTYPE_<ARG>`, `ORIG_DTYPE_<ARG>` and
/// `FORMAT_<ARG>` for every parameter. An output named like an input (a
/// ref parameter: the kernel writes that input) has its own under
/// `<ARG>_REF`, as public kernels name them (`DTYPE_Y_REF` for an OpDef
/// with Input("y") and Output("y")).
pub fn variant_defines(params: &[VariantParam<'_>]) -> Vec<String> {
    let mut out = Vec::with_capacity(params.len() * 3);
    let mut seen = std::collections::BTreeSet::new();
    for p in params {
        let mut arg = macro_arg(p.name);
        if !seen.insert(arg.clone()) {
            arg.push_str("_REF");
        }
        out.push(format!("DTYPE_{arg}={}", device_type(p.dtype)));
        out.push(format!("ORIG_DTYPE_{arg}={}", ge_name(p.dtype)));
        out.push(format!("FORMAT_{arg}={}", p.format));
    }
    out
}

/// Whether any of `files` names a per-variant macro of one of the
/// parameters `names` (`DTYPE_X`, `ORIG_DTYPE_X`, `FORMAT_X` as whole
/// words). Unreadable files count as not using them (the build then
/// reports what it cannot read).
pub fn uses_variant_macros(names: &[&str], files: &[&Path]) -> bool {
    let macros: Vec<String> = names
        .iter()
        .flat_map(|n| {
            let arg = macro_arg(n);
            [
                format!("DTYPE_{arg}"),
                format!("ORIG_DTYPE_{arg}"),
                format!("FORMAT_{arg}"),
                format!("DTYPE_{arg}_REF"),
                format!("ORIG_DTYPE_{arg}_REF"),
                format!("FORMAT_{arg}_REF"),
            ]
        })
        .collect();
    files.iter().any(|file| {
        std::fs::read_to_string(file)
            .map(|text| words(&text).any(|w| macros.iter().any(|m| m == w)))
            .unwrap_or(false)
    })
}

/// The identifier-like words of `text`.
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
}

/// `files` and every file they reach by quoted `#include "..."`, found
/// beside the including file or else in `include_dirs` (the first that
/// has it), each once, `files` first; at most [`MAX_REACHED`]. Angle
/// includes are system and simulator headers, which name no parameter.
pub fn files_reached(files: &[PathBuf], include_dirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut seen: BTreeSet<PathBuf> = BTreeSet::new();
    let mut out = Vec::new();
    let mut queue: VecDeque<PathBuf> = files.iter().cloned().collect();
    while let Some(file) = queue.pop_front() {
        if out.len() >= MAX_REACHED {
            break;
        }
        let key = file.canonicalize().unwrap_or_else(|_| file.clone());
        if !seen.insert(key) {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        out.push(file.clone());
        let here = file.parent().map(Path::to_path_buf).unwrap_or_default();
        for name in quoted_includes(&text) {
            let found = std::iter::once(&here)
                .chain(include_dirs)
                .map(|d| d.join(name))
                .find(|p| p.is_file());
            if let Some(p) = found {
                queue.push_back(p);
            }
        }
    }
    out
}

/// The names of a text's `#include "name"` directives.
fn quoted_includes(text: &str) -> impl Iterator<Item = &str> {
    text.lines().filter_map(|line| {
        let rest = line.trim_start().strip_prefix('#')?.trim_start();
        let rest = rest.strip_prefix("include")?.trim_start();
        let rest = rest.strip_prefix('"')?;
        rest.split('"').next().filter(|n| !n.is_empty())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_variant_defines_the_three_macros_per_parameter() {
        let params = [
            VariantParam {
                name: "x1",
                dtype: Dtype::Float16,
                format: "FORMAT_ND",
            },
            VariantParam {
                name: "y",
                dtype: Dtype::Bfloat16,
                format: "FORMAT_ND",
            },
        ];
        assert_eq!(
            variant_defines(&params),
            [
                "DTYPE_X1=half",
                "ORIG_DTYPE_X1=DT_FLOAT16",
                "FORMAT_X1=FORMAT_ND",
                "DTYPE_Y=bfloat16_t",
                "ORIG_DTYPE_Y=DT_BF16",
                "FORMAT_Y=FORMAT_ND",
            ]
        );
        assert_eq!(macro_arg("input-x"), "INPUT_X");
        // A ref output (named like its input) gets the _REF forms.
        let refs = [params[1].clone(), params[1].clone()];
        assert_eq!(
            variant_defines(&refs)[3..],
            [
                "DTYPE_Y_REF=bfloat16_t",
                "ORIG_DTYPE_Y_REF=DT_BF16",
                "FORMAT_Y_REF=FORMAT_ND",
            ]
        );
    }

    #[test]
    fn only_a_parameter_macro_as_a_whole_word_counts() {
        let dir = tempfile::tempdir().unwrap();
        let uses = dir.path().join("uses.cpp");
        let near = dir.path().join("near.cpp");
        std::fs::write(&uses, "using T = DTYPE_X;\n").unwrap();
        std::fs::write(&near, "int MY_DTYPE_X = 0; int DTYPE_XY; // FORMAT_ND\n").unwrap();
        assert!(uses_variant_macros(&["x"], &[uses.as_path()]));
        assert!(!uses_variant_macros(&["x"], &[near.as_path()]));
        assert!(!uses_variant_macros(&["z"], &[uses.as_path()]));
        assert!(!uses_variant_macros(
            &["x"],
            &[dir.path().join("missing.cpp").as_path()]
        ));
    }

    #[test]
    fn the_macros_count_in_headers_the_kernel_includes() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let write = |rel: &str, text: &str| {
            let p = root.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, text).unwrap();
            p
        };
        let kernel = write(
            "op/op_kernel/k.cpp",
            "#include \"kernel_operator.h\"\n  #  include \"fam/op_kernel/binary.h\"\n\
             #include <vector>\n",
        );
        write(
            "common/inc/fam/op_kernel/binary.h",
            "#include \"scalar.h\"\n#include \"binary.h\"\n",
        );
        write(
            "common/inc/fam/op_kernel/scalar.h",
            "using S = DTYPE_SCALAR;\n",
        );
        let inc = vec![root.join("common/inc")];
        let reached = files_reached(std::slice::from_ref(&kernel), &inc);
        assert_eq!(
            reached,
            [
                kernel.clone(),
                root.join("common/inc/fam/op_kernel/binary.h"),
                root.join("common/inc/fam/op_kernel/scalar.h"),
            ]
        );
        let refs: Vec<&Path> = reached.iter().map(PathBuf::as_path).collect();
        assert!(uses_variant_macros(&["x", "scalar"], &refs));
        // Without the include directory the header is not found.
        assert_eq!(files_reached(&[kernel], &[]).len(), 1);
    }
}
