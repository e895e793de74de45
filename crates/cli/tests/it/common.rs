//! Helpers shared by the CLI's end-to-end tests.

use std::path::Path;

/// A copy of built-in operator `op` in `dst` without its cases of more
/// than `max_elements` input elements (a small operator for quick tests).
pub fn small_copy(op: &str, dst: &Path, max_elements: u64) -> std::path::PathBuf {
    fn copy(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let e = e.unwrap();
            if e.file_name() == "build" {
                continue;
            }
            let (s, d) = (e.path(), to.join(e.file_name()));
            if s.is_dir() {
                copy(&s, &d)
            } else {
                std::fs::copy(&s, &d).unwrap();
            }
        }
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../ops")
        .join(op);
    let out = dst.join(op);
    copy(&src, &out);
    let text = std::fs::read_to_string(out.join("op.toml")).unwrap();
    let elements = |block: &str| -> u64 {
        block
            .lines()
            .find(|l| l.trim_start().starts_with("shapes"))
            .map(|l| {
                let v = l.split_once('=').unwrap().1;
                v.split("],")
                    .map(|dims| {
                        dims.chars()
                            .map(|c| if c.is_ascii_digit() { c } else { ' ' })
                            .collect::<String>()
                            .split_whitespace()
                            .map(|n| n.parse::<u64>().unwrap())
                            .product::<u64>()
                    })
                    .sum()
            })
            .unwrap_or(0)
    };
    let mut kept = String::new();
    let mut block = String::new();
    let mut dropped = 0;
    let flush = |block: &mut String, kept: &mut String, dropped: &mut usize| {
        if block.starts_with("[[cases]]") && elements(block) > max_elements {
            *dropped += 1;
        } else {
            kept.push_str(block);
        }
        block.clear();
    };
    for line in text.lines() {
        if line.starts_with('[') {
            flush(&mut block, &mut kept, &mut dropped);
        }
        block.push_str(line);
        block.push('\n');
    }
    flush(&mut block, &mut kept, &mut dropped);
    assert!(dropped > 0, "{op}: no large case to drop");
    assert!(kept.contains("[[cases]]"), "{op}: cases left");
    std::fs::write(out.join("op.toml"), kept).unwrap();
    out
}
