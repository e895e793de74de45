//! Compile errors in a CANN build's log, as `file:line` of the package.
//!
//! bisheng is clang-based: an error reads `<file>:<line>:<col>: error:
//! <message>` (the same shape as g++'s). The build compiles the project's
//! copies of the package's files (`<project>/op_host/...`,
//! `<project>/op_kernel/...`), so a location in the copy is mapped back to
//! the package's file.

use crate::UnitFailure;
use std::path::Path;

/// The first error of each unit (`host` for `op_host/`, `kernel` for
/// `op_kernel/`, `build` for anything else) in `log`, in order of
/// appearance, with paths under `project` rewritten to `package`.
pub fn first_errors(log: &str, project: &Path, package: &Path) -> Vec<UnitFailure> {
    let mut out: Vec<UnitFailure> = Vec::new();
    for line in log.lines() {
        let Some((location, message)) = error_line(line) else {
            continue;
        };
        let (file, line_no) = location;
        let file = Path::new(file);
        let mapped = match file.strip_prefix(project) {
            Ok(rel) => package.join(rel),
            // build.sh runs in the project: a relative path is in it.
            Err(_) if file.is_relative() => package.join(file),
            Err(_) => file.to_path_buf(),
        };
        let rel = mapped.strip_prefix(package).unwrap_or(&mapped);
        let unit = if rel.starts_with("op_kernel") {
            "kernel"
        } else if rel.starts_with("op_host") {
            "host"
        } else {
            "build"
        };
        if out.iter().any(|u| u.unit == unit) {
            continue;
        }
        out.push(UnitFailure {
            unit: unit.into(),
            location: format!("{}:{line_no}", mapped.display()),
            message: message.trim().to_string(),
        });
    }
    out
}

/// `((file, line), message)` of a `file:line[:col]: error: message` line.
fn error_line(line: &str) -> Option<((&str, u32), &str)> {
    let at = line
        .find(": error: ")
        .or_else(|| line.find(": fatal error: "))?;
    let message = line[at..].split_once("error: ")?.1;
    let mut parts = line[..at].rsplitn(3, ':');
    let last = parts.next()?;
    let middle = parts.next()?;
    let (file, line_no) = match (last.parse::<u32>(), middle.parse::<u32>()) {
        // file:line:col
        (Ok(_), Ok(l)) => (parts.next()?, l),
        // file:line
        (Ok(l), Err(_)) => (&line[..at - last.len() - 1], l),
        _ => return None,
    };
    Some(((file.trim(), line_no), message))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_map_to_the_package_file_and_line() {
        let log = "[ 50%] Building\n\
                   /w/AddCustom/op_kernel/add_custom.cpp:12:5: error: use of undeclared identifier 'x'\n\
                   /w/AddCustom/op_kernel/add_custom.cpp:20:1: error: later\n\
                   op_host/add_custom.cpp:7: error: host one\n\
                   make: *** [all] Error 2\n";
        let units = first_errors(log, Path::new("/w/AddCustom"), Path::new("/pkg"));
        assert_eq!(units.len(), 2);
        assert_eq!(units[0].unit, "kernel");
        assert_eq!(units[0].location, "/pkg/op_kernel/add_custom.cpp:12");
        assert_eq!(units[0].message, "use of undeclared identifier 'x'");
        assert_eq!(units[1].unit, "host");
        assert_eq!(units[1].location, "/pkg/op_host/add_custom.cpp:7");
        assert!(first_errors("all good\n", Path::new("/w"), Path::new("/p")).is_empty());
    }
}
