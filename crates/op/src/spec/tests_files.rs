//! Inputs and expected outputs from files the user already has (issue 21
//! item 7): `kind = "file"` inputs (raw `.bin` as gen_data.py writes them
//! with `tofile`, or `.npy`) and `[golden] files = true` with each case's
//! `expected` files, so an existing test's data runs unchanged.

use super::*;
use crate::gen::gen_inputs;
use crate::golden;

const SPEC: &str = r#"[op]
name = "add_custom"
level = 1
op_type = "AddCustom"

[[inputs]]
name = "x"
dtypes = ["float32"]

[[inputs]]
name = "y"
dtypes = ["float32"]

[[outputs]]
name = "z"
dtype = { same_as = "x" }

[golden]
files = true

[[cases]]
name = "user"
shapes = [[2, 3], [2, 3]]
inputs.x = { kind = "file", path = "input/input_x.bin" }
inputs.y = { kind = "file", path = "input/input_y.npy" }
expected.z = "output/golden.bin"
"#;

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// A package folder with the data files; returns (dir guard, op.toml path).
fn package(files: &[(&str, Vec<u8>)]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    for (rel, bytes) in files {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }
    let toml = dir.path().join("op.toml");
    (dir, toml)
}

fn data() -> Vec<(&'static str, Vec<u8>)> {
    let x: Vec<f32> = (0..6).map(|i| i as f32 * 0.5).collect();
    let y = Tensor {
        dtype: Dtype::Float32,
        shape: vec![2, 3],
        data: f32_bytes(&[1.0, -1.0, 2.0, -2.0, 3.0, -3.0]),
    };
    vec![
        ("input/input_x.bin", f32_bytes(&x)),
        ("input/input_y.npy", crate::npy::write_npy(&y)),
        (
            "output/golden.bin",
            f32_bytes(&[1.0, -0.5, 3.0, -0.5, 5.0, -0.5]),
        ),
    ]
}

#[test]
fn inputs_and_expected_outputs_come_from_the_users_files() {
    let (_d, toml) = package(&data());
    let spec = OpSpec::parse(SPEC, &toml, &crate::golden::testing::BUILTINS).unwrap();
    let case = &spec.cases[0];
    assert!(case.inputs.iter().all(|i| i.specials.is_empty()));
    // The same values for every seed.
    let a = gen_inputs(case, 1);
    assert_eq!(a, gen_inputs(case, 2));
    assert_eq!(a[0].data, data()[0].1);
    assert_eq!(a[1].shape, vec![2, 3]);
    assert_eq!(a[1].get_f64(3), -2.0);
    let shapes = golden::output_shapes(&spec, case).unwrap();
    assert_eq!(shapes, Some(vec![vec![2, 3]]));
    let out = golden::golden(&spec, case, &a).unwrap();
    assert_eq!(out[0].data, data()[2].1);
    assert_eq!(out[0].shape, vec![2, 3]);
}

fn load_err(text: &str, files: &[(&str, Vec<u8>)]) -> String {
    let (_d, toml) = package(files);
    OpSpec::parse(text, &toml, &crate::golden::testing::BUILTINS)
        .unwrap_err()
        .to_string()
}

#[test]
fn file_data_that_does_not_fit_the_case_is_an_error_naming_the_key() {
    let mut short = data();
    short[0].1.truncate(20);
    let e = load_err(SPEC, &short);
    assert!(
        e.contains("cases[0].inputs.x.path") && e.contains("holds 20 bytes; 6 elements of float32"),
        "{e}"
    );

    let e = load_err(&SPEC.replace("input/input_x.bin", "../x.bin"), &data());
    assert!(
        e.contains("must be a relative path inside the package"),
        "{e}"
    );

    let e = load_err(
        &SPEC.replace("input/input_y.npy", "input/none.npy"),
        &data(),
    );
    assert!(e.contains("cannot read") && e.contains("none.npy"), "{e}");

    let e = load_err(
        &SPEC.replace(
            "path = \"input/input_x.bin\" }",
            "path = \"input/input_x.bin\", low = 0.0 }",
        ),
        &data(),
    );
    assert!(e.contains("`low` does not apply to kind = \"file\""), "{e}");

    // Expected files need [golden] files = true, and it needs them.
    let e = load_err(
        &SPEC.replace("files = true", "builtin = \"add_custom\""),
        &data(),
    );
    assert!(
        e.contains("expected-output files need [golden] files = true"),
        "{e}"
    );
    let e = load_err(
        &SPEC.replace("expected.z = \"output/golden.bin\"\n", ""),
        &data(),
    );
    assert!(e.contains("give output `z` a file"), "{e}");

    // A raw expected file of another shape says its shape.
    let e = load_err(
        &SPEC.replace(
            "expected.z = \"output/golden.bin\"",
            "expected.z = { path = \"output/golden.bin\", shape = [4] }",
        ),
        &data(),
    );
    assert!(e.contains("holds 24 bytes; 4 elements"), "{e}");
}
