//! The op.toml forms for CANN parameters beyond one tensor each: tensor
//! lists (`kind = "list"`), optional inputs a case leaves out (`omit`),
//! value-depend inputs, in-place outputs, unchecked outputs.

use super::*;

const LISTS: &str = r#"[op]
name = "foreach_axpy"
level = 2
op_type = "ForeachAxpy"

[[inputs]]
name = "x"
dtypes = ["float16", "float32"]
kind = "list"

[[inputs]]
name = "bias"
dtypes = ["float16", "float32"]
dtype = { same_as = "x" }
optional = true

[[inputs]]
name = "axes"
dtypes = ["int32"]
value_depend = true

[[outputs]]
name = "y"
kind = "list"
inplace = "x"

[[outputs]]
name = "count"
dtypes = ["int32"]
check = false

[golden]
script = "golden.py"

[[cases]]
name = "three"
shapes = [[[4, 8], [5], [2, 3]], [7], [1]]
dtypes = { x = "float32" }

[[cases]]
name = "no_bias"
omit = ["bias"]
shapes = [[[16]], [1]]
dtypes = { x = "float16" }
"#;

fn parse(text: &str) -> Result<OpSpec, OpError> {
    OpSpec::parse(
        text,
        Path::new("ops/foreach_axpy/op.toml"),
        &crate::golden::testing::BUILTINS,
    )
}

#[test]
fn lists_optional_inputs_and_in_place_outputs_resolve_to_flat_tensors_and_a_layout() {
    let spec = parse(LISTS).unwrap();
    let x = spec.input("x").unwrap();
    assert!(x.list && !x.optional);
    assert!(spec.input("bias").unwrap().optional);
    assert!(spec.input("axes").unwrap().value_depend);
    assert_eq!(spec.outputs[0].inplace.as_deref(), Some("x"));
    assert!(!spec.outputs[1].checked);

    let three = spec.case("three").unwrap();
    let names: Vec<(&str, Option<usize>, &[usize])> = three
        .inputs
        .iter()
        .map(|i| (i.name.as_str(), i.list_index, i.shape.as_slice()))
        .collect();
    assert_eq!(
        names,
        [
            ("x", Some(0), &[4, 8][..]),
            ("x", Some(1), &[5][..]),
            ("x", Some(2), &[2, 3][..]),
            ("bias", None, &[7][..]),
            ("axes", None, &[1][..]),
        ]
    );
    // y is x in place: three tensors, each its input's memory.
    let outs: Vec<(&str, Option<usize>, Option<usize>, bool)> = three
        .outputs
        .iter()
        .map(|o| (o.name.as_str(), o.list_index, o.inplace_of, o.checked))
        .collect();
    assert_eq!(
        outs,
        [
            ("y", Some(0), Some(0), true),
            ("y", Some(1), Some(1), true),
            ("y", Some(2), Some(2), true),
            ("count", None, None, false),
        ]
    );
    assert_eq!(three.outputs[0].dtype, Dtype::Float32);
    assert_eq!(
        three.layout,
        ArgLayout {
            inputs: vec![
                ArgSlot::List(vec![0, 1, 2]),
                ArgSlot::One(3),
                ArgSlot::One(4)
            ],
            outputs: vec![ArgSlot::List(vec![0, 1, 2]), ArgSlot::One(3)],
            in_place: vec![(0, 0), (1, 1), (2, 2)],
            host_values: vec![4],
        }
    );
    assert!(three.layout.check(5, 4).is_ok());

    let no_bias = spec.case("no_bias").unwrap();
    assert_eq!(no_bias.omitted, ["bias"]);
    assert_eq!(no_bias.inputs.len(), 2);
    assert_eq!(no_bias.layout.inputs[1], ArgSlot::Absent);
    assert_eq!(no_bias.outputs[0].dtype, Dtype::Float16);
}

#[test]
fn errors_name_the_key_of_a_misused_parameter_form() {
    let cases: [(&str, &str, &str); 11] = [
        (
            "check = false",
            "check = false\nargument = false",
            "outputs[1].argument: `argument = false` needs `inplace = \"<input>\"`",
        ),
        (
            "value_depend = true",
            "value_depend = true\nargument = false",
            "inputs[2].argument: `argument` applies to outputs only",
        ),
        (
            "shapes = [[[4, 8], [5], [2, 3]], [7], [1]]",
            "shapes = [[4, 8], [7], [1]]",
            "cases[0].shapes[0]: input `x` is a tensor list: give a list of shapes",
        ),
        (
            "shapes = [[[4, 8], [5], [2, 3]], [7], [1]]",
            "shapes = [[[4, 8]], [[7]], [1]]",
            "cases[0].shapes[1]: input `bias` is a single tensor: give one shape",
        ),
        (
            "shapes = [[[4, 8], [5], [2, 3]], [7], [1]]",
            "shapes = [[], [7], [1]]",
            "cases[0].shapes[0]: tensor list `x` needs at least one tensor",
        ),
        (
            "omit = [\"bias\"]",
            "omit = [\"axes\"]",
            "cases[1].omit[0]: input `axes` is not optional",
        ),
        (
            "omit = [\"bias\"]\nshapes = [[[16]], [1]]",
            "omit = [\"bias\"]\nshapes = [[[16]], [7], [1]]",
            "cases[1].shapes: 3 shapes given but the operator has 2 inputs (this case leaves out bias)",
        ),
        (
            "kind = \"list\"\n\n[[inputs]]\nname = \"bias\"",
            "kind = \"lists\"\n\n[[inputs]]\nname = \"bias\"",
            "inputs[0].kind: unknown kind `lists`",
        ),
        (
            "inplace = \"x\"",
            "inplace = \"axes\"",
            "outputs[0].inplace: `y` and input `axes` must both be lists or both single tensors",
        ),
        (
            "check = false",
            "check = false\noptional = true",
            "outputs[1].optional: `optional` applies to inputs only",
        ),
        (
            "value_depend = true",
            "value_depend = true\nlength_of = \"x\"",
            "inputs[2].length_of: `length_of` applies to outputs only",
        ),
    ];
    for (from, to, expected) in cases {
        assert!(LISTS.contains(from), "{from}");
        let err = parse(&LISTS.replacen(from, to, 1)).unwrap_err().to_string();
        assert!(err.contains(expected), "{to}\n{err}");
        assert!(err.starts_with("ops/foreach_axpy/op.toml:"), "{err}");
    }
}

/// An OpDef without outputs whose kernel writes into an input (ScatterSub's
/// `var`): the output has no kernel argument, is the input in place, and
/// the layout has no output slot.
#[test]
fn an_in_place_output_without_an_argument_has_no_output_slot() {
    let text = r#"[op]
name = "scatter_sub"
level = 2
op_type = "ScatterSub"

[[inputs]]
name = "var"
dtypes = ["float32"]

[[inputs]]
name = "indices"
dtypes = ["int32"]

[[outputs]]
name = "var_out"
inplace = "var"
argument = false

[golden]
script = "golden.py"

[[cases]]
name = "small"
shapes = [[8, 4], [3]]
"#;
    let spec = OpSpec::parse(
        text,
        Path::new("ops/scatter_sub/op.toml"),
        &crate::golden::testing::BUILTINS,
    )
    .unwrap();
    assert!(!spec.outputs[0].argument);
    let case = spec.case("small").unwrap();
    assert_eq!(case.outputs[0].inplace_of, Some(0));
    assert_eq!(case.outputs[0].dtype, Dtype::Float32);
    assert_eq!(
        case.layout,
        ArgLayout {
            inputs: vec![ArgSlot::One(0), ArgSlot::One(1)],
            outputs: vec![],
            in_place: vec![(0, 0)],
            host_values: vec![],
        }
    );
    assert!(case.layout.check(2, 1).is_ok());
    assert_eq!(case.layout.output_params(1), [None]);
    // Without the in-place pair the output would be lost: rejected.
    let lost = ArgLayout {
        in_place: vec![],
        ..case.layout.clone()
    };
    assert!(lost
        .check(2, 1)
        .unwrap_err()
        .to_string()
        .contains("output tensor 0 is in no kernel argument"));
}

#[test]
fn a_list_output_needs_a_list_input_for_its_length() {
    let text = LISTS
        .replacen("kind = \"list\"\n", "", 1)
        .replacen(
            "shapes = [[[4, 8], [5], [2, 3]], [7], [1]]",
            "shapes = [[4, 8], [7], [1]]",
            1,
        )
        .replacen("shapes = [[[16]], [1]]", "shapes = [[16], [1]]", 1)
        .replacen("inplace = \"x\"", "dtype = { same_as = \"x\" }", 1);
    let err = parse(&text).unwrap_err().to_string();
    assert!(
        err.contains("outputs[0].kind: list output `y` needs a list input"),
        "{err}"
    );
}
