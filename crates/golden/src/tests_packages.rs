//! The built-in packages against their goldens: the six first operators
//! load and follow the conventions of their C++ sources, and every case
//! runs through input generation, golden and comparison. (Moved from
//! `ascendopt-op` with the goldens.)

use crate::BUILTINS;
use ascendopt_op::compare::{compare, poisoned};
use ascendopt_op::golden::output_shapes;
use ascendopt_op::package::package_dirs;
use ascendopt_op::tensor::numel;
use ascendopt_op::{builtin_ops_dir, gen_inputs, Case, Dtype, OpPackage};

const SIX: [&str; 6] = [
    "add_custom",
    "muls",
    "sqrt",
    "cast",
    "clip_by_value_v2",
    "rms_norm",
];

/// The conventions the C++ sources rely on (op.md): OpDef class names,
/// kernel entries equal to the folder names, attr names.
#[test]
fn the_six_builtin_packages_load_and_follow_the_conventions() {
    let dir = builtin_ops_dir();
    let found: Vec<String> = package_dirs(&dir)
        .unwrap()
        .iter()
        .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    let op_types = [
        "AddCustom",
        "Muls",
        "Sqrt",
        "Cast",
        "ClipByValueV2",
        "RmsNorm",
    ];
    for (name, op_type) in SIX.iter().zip(op_types) {
        assert!(
            found.iter().any(|f| f == name),
            "{name} missing in {found:?}"
        );
        let p = OpPackage::load(&dir.join(name), &BUILTINS).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(p.name(), *name);
        assert_eq!(p.spec.kernel, *name);
        assert_eq!(p.spec.op_type, op_type);
        assert!(!p.host_sources.is_empty() && !p.kernel_sources.is_empty());
        assert!(p
            .tiling_header
            .as_ref()
            .is_some_and(|h| h.ends_with(format!("{name}_tiling.h"))));
        assert!(
            p.tiling.knobs().any(|k| k.name == "TILE_BYTES"),
            "{name} has no TILE_BYTES knob"
        );
        assert!(p.cases().len() >= 3);
        // Review rules: a tail case, a large case, fp16 and fp32.
        let bytes = |c: &Case| {
            c.inputs
                .iter()
                .map(|i| numel(&i.shape) * i.dtype.size())
                .collect::<Vec<_>>()
        };
        assert!(
            p.cases()
                .iter()
                .any(|c| bytes(c).iter().any(|b| b % 32 != 0)),
            "{name}: no tail case"
        );
        let largest = p
            .cases()
            .iter()
            .map(|c| c.input_elements())
            .max()
            .unwrap_or(0);
        // Large enough that the launch head is under 20% of its Task
        // Duration (`ascendopt suite` checks the share), small enough
        // to simulate in seconds at every evaluation.
        assert!(
            (4_000_000..=80_000_000).contains(&largest),
            "{name}: largest case has {largest} elements"
        );
        let dtypes: Vec<Dtype> = p.cases().iter().map(|c| c.inputs[0].dtype).collect();
        assert!(
            dtypes.contains(&Dtype::Float16) && dtypes.contains(&Dtype::Float32),
            "{name}"
        );
        for c in p.cases() {
            assert!(output_shapes(&p.spec, c).unwrap().is_some());
        }
    }
    let attr = |op: &str, a: &str| {
        OpPackage::load(&dir.join(op), &BUILTINS)
            .unwrap()
            .spec
            .attr(a)
            .is_some()
    };
    assert!(attr("muls", "value") && attr("cast", "dst_type") && attr("rms_norm", "epsilon"));
}

/// Every small case of the six packages runs through generation, golden
/// and comparison; the golden agrees with itself and a poisoned output
/// is reported unwritten.
#[test]
fn small_cases_generate_and_compute() {
    let dir = builtin_ops_dir();
    for name in SIX {
        let p = OpPackage::load(&dir.join(name), &BUILTINS).unwrap();
        for c in p.cases().iter().filter(|c| c.input_elements() <= 70_000) {
            let inputs = gen_inputs(c, 11);
            let out = p.golden(c, &inputs).unwrap_or_else(|e| panic!("{e}"));
            let shapes = output_shapes(&p.spec, c).unwrap().unwrap();
            for ((t, co), shape) in out.iter().zip(&c.outputs).zip(&shapes) {
                assert_eq!(&t.shape, shape);
                let r = compare(t, t, co.tolerance).unwrap();
                assert!(r.passed(), "{name}/{}: {r}", c.name);
                let r = compare(t, &poisoned(t.dtype, &t.shape), co.tolerance).unwrap();
                assert_eq!(r.unwritten, t.numel(), "{name}/{}", c.name);
            }
        }
    }
}

/// The large cases too; slow in debug builds, so only with
/// `ASCENDOPT_SLOW_TESTS=1`.
#[test]
fn large_cases_generate_and_compute() {
    if std::env::var_os("ASCENDOPT_SLOW_TESTS").is_none() {
        return;
    }
    let dir = builtin_ops_dir();
    for name in SIX {
        let p = OpPackage::load(&dir.join(name), &BUILTINS).unwrap();
        for c in p.cases().iter().filter(|c| c.input_elements() > 70_000) {
            let start = std::time::Instant::now();
            let inputs = gen_inputs(c, 5);
            let generated = start.elapsed();
            let out = p.golden(c, &inputs).unwrap_or_else(|e| panic!("{e}"));
            eprintln!(
                "{name}/{}: {} elements, gen {:?}, golden {:?}",
                c.name,
                c.input_elements(),
                generated,
                start.elapsed() - generated
            );
            assert_eq!(out.len(), c.outputs.len());
        }
    }
}
