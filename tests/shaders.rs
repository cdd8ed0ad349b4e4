//! Every shader parses and validates with naga, and agrees with its Rust declaration:
//! bindings in order, uniform struct size, override constants; no shader is orphaned.
//! (Cases are checked against the reflection, the one source of a kernel's signature.)

use membench::suite::shaders::{self, SHADERS};
use membench::suite::{REGISTRY, Sizing};

#[test]
fn every_shader_parses_and_validates() {
    for (kernel, source) in SHADERS {
        if let Err(error) = shaders::reflect(kernel, source) {
            panic!("{error}");
        }
    }
}

#[test]
fn cases_agree_with_their_shaders() {
    for experiment in REGISTRY {
        let name = experiment.name();
        // A pure transfer runs no kernel: nothing to agree with.
        let Some(kernel) = experiment.kernel else {
            continue;
        };
        let reflection = shaders::signature(kernel).unwrap();
        for case in (experiment.cases)(&Sizing::nominal(true)) {
            if let Err(error) = experiment.kernel_for(&case) {
                panic!("{name}/{}: {error}", case.params);
            }
            for (constant, _) in &case.overrides {
                assert!(
                    reflection.overrides.iter().any(|o| o == constant),
                    "{name}/{}: override {constant} not in the shader",
                    case.params
                );
            }
        }
    }
}

#[test]
fn a_case_that_disagrees_with_its_shader_is_refused() {
    let experiment = &membench::suite::families::copy::OFFSET;
    let mut case = (experiment.cases)(&Sizing::nominal(true)).remove(0);
    case.buffers.pop();
    let error = experiment.kernel_for(&case).unwrap_err();
    assert!(error.contains("do not match"), "{error}");
    let mut case = (experiment.cases)(&Sizing::nominal(true)).remove(0);
    case.buffers[0] = membench::suite::Buffer::Uniform(vec![1, 2, 3]);
    let error = experiment.kernel_for(&case).unwrap_err();
    assert!(error.contains("uniform of Some(12) bytes"), "{error}");
}

#[test]
fn every_shader_belongs_to_an_experiment() {
    for (kernel, _) in SHADERS {
        assert!(
            REGISTRY.iter().any(|e| e.kernel == Some(*kernel)),
            "shaders/{kernel}.wgsl is not used by any experiment"
        );
    }
}

#[test]
fn reflection_catches_a_mismatch() {
    let source = "@group(0) @binding(0) var<storage, read_write> out: array<u32>;\n\
                  @group(0) @binding(2) var<uniform> u: vec4<u32>;\n\
                  @compute @workgroup_size(1) fn main() { out[0] = u.x; }";
    let error = shaders::reflect("gap", source).unwrap_err();
    assert!(error.contains("not numbered"), "{error}");
    assert!(shaders::reflect("broken", "fn main( {").is_err());
}

#[test]
fn case_ids_are_unique() {
    let mut ids = std::collections::HashSet::new();
    for experiment in REGISTRY {
        for case in (experiment.cases)(&Sizing::nominal(false)) {
            let id = format!("{}/{}", experiment.name(), case.params);
            assert!(ids.insert(id.clone()), "duplicate case {id}");
        }
    }
}
