//! Every shader parses and validates with naga, and agrees with its Rust declaration:
//! bindings in order, uniform struct size, override constants; no shader is orphaned.

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
fn declarations_match_their_shaders() {
    for experiment in REGISTRY {
        let name = experiment.name();
        // A pure transfer runs no kernel: nothing to agree with.
        let Some(kernel) = experiment.kernel else {
            assert!(
                experiment.bindings.is_empty(),
                "{name}: bindings without a kernel"
            );
            continue;
        };
        let source =
            shaders::source(kernel).unwrap_or_else(|| panic!("{name}: no shaders/{kernel}.wgsl"));
        let reflection = shaders::reflect(kernel, source).unwrap();
        assert_eq!(reflection.bindings, experiment.bindings, "{name}: bindings");
        assert_eq!(
            reflection.uniform_bytes, experiment.uniform_bytes,
            "{name}: uniform struct size"
        );
        for case in (experiment.cases)(&Sizing::nominal(true)) {
            for (constant, _) in &case.overrides {
                assert!(
                    reflection.overrides.iter().any(|o| o == constant),
                    "{name}/{}: override {constant} not in the shader",
                    case.param
                );
            }
        }
    }
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
            let id = format!("{}/{}", experiment.name(), case.param);
            assert!(ids.insert(id.clone()), "duplicate case {id}");
        }
    }
}
