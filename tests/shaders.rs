//! Every shader parses and validates with naga, and agrees with its Rust declaration:
//! bindings in order, uniform struct size, override constants; no shader is orphaned.
//! (Cases are checked against the reflection, the one source of a kernel's signature.)
//! Every file under `shaders/` opens with a one-line summary, and every kernel declares
//! its own bindings. The preprocessor (`build.rs`) is tested on throwaway directories.

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
    // A user's kernel binds at its slots; the suite's bind buffer i at binding i.
    assert!(shaders::reflect("gap", source).is_ok());
    let error = shaders::reflect_suite("gap", source).unwrap_err();
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

#[test]
fn every_kernel_is_flat_wgsl_with_its_origin() {
    for (kernel, source) in SHADERS {
        assert!(
            source.starts_with("// "),
            "{kernel}: no one-line comment on top"
        );
        for line in source.lines() {
            assert!(
                !line.trim_start().starts_with('#') && !line.contains("${"),
                "{kernel}: a directive left in the flat WGSL: {line}"
            );
        }
        let origin = shaders::origin(kernel).unwrap_or_else(|| panic!("{kernel}: no origin"));
        assert!(origin.starts_with("shaders/"), "{kernel}: {origin}");
    }
    assert_eq!(shaders::ORIGINS.len(), SHADERS.len());
}

/// Every file under `shaders/`: the WGSL sources, their shared pieces, the CUDA twins and
/// their headers, as (path, text).
fn shader_files() -> std::io::Result<Vec<(std::path::PathBuf, String)>> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders");
    let mut files = Vec::new();
    for dir in [dir.clone(), dir.join("shared"), dir.join("cuda")] {
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            if path
                .extension()
                .is_some_and(|ext| ext == "wgsl" || ext == "cu" || ext == "cuh")
            {
                let text = std::fs::read_to_string(&path)?;
                files.push((path, text));
            }
        }
    }
    files.sort();
    Ok(files)
}

#[test]
fn every_shader_file_opens_with_a_one_line_summary() {
    let files = shader_files().unwrap();
    assert!(files.len() > 40, "{} shader files", files.len());
    for (path, text) in files {
        let first = text.lines().next().unwrap_or_default();
        assert!(
            first.starts_with("// ") && first.len() > 20,
            "{}: no one-line comment on top",
            path.display()
        );
        // What the kernel computes; the rest of its description goes below.
        assert!(
            first.chars().count() <= 100,
            "{}: the first line runs to {} characters (at most 100)",
            path.display(),
            first.chars().count()
        );
    }
}

#[test]
fn each_kernel_declares_its_own_bindings() {
    for (path, text) in shader_files().unwrap() {
        let piece = path.parent().is_some_and(|dir| dir.ends_with("shared"));
        for (number, line) in text.lines().enumerate() {
            let at = format!("{}:{}", path.display(), number + 1);
            assert!(
                !line.trim_start().starts_with("#import bind_"),
                "{at}: bindings imported: the kernel declares them"
            );
            assert!(
                !(piece && line.contains("@binding(")),
                "{at}: a shared piece declares a binding: the kernel declares it"
            );
        }
    }
}

/// The value of a module-scope `const` or the default of an `override`.
fn constant(kernel: &str, name: &str) -> Option<(bool, u32)> {
    let module = naga::front::wgsl::parse_str(shaders::source(kernel)?).ok()?;
    let literal = |init| match module.global_expressions[init] {
        naga::Expression::Literal(naga::Literal::U32(value)) => Some(value),
        naga::Expression::Literal(naga::Literal::AbstractInt(value)) => value.try_into().ok(),
        _ => None,
    };
    if let Some((_, c)) = module
        .constants
        .iter()
        .find(|(_, c)| c.name.as_deref() == Some(name))
    {
        return Some((false, literal(c.init)?));
    }
    let (_, o) = module
        .overrides
        .iter()
        .find(|(_, o)| o.name.as_deref() == Some(name))?;
    Some((true, literal(o.init?)?))
}

#[test]
fn permutations_set_their_keys() {
    // (kernel, PAD, whether PAD is an override)
    for (kernel, pad, is_override) in [
        ("bank_row_col", 0, false),
        ("bank_row_col_pad", 1, false),
        ("bank_rect_row_col_pad", 2, false),
        ("bank_row_col_override", 0, true),
    ] {
        assert_eq!(
            constant(kernel, "PAD"),
            Some((is_override, pad)),
            "{kernel}"
        );
    }
    assert_eq!(constant("reduce_smem", "TILE_WORDS"), Some((false, 1024)));
    assert_eq!(constant("reduce_smem_override", "TILE_WORDS"), None);
    for (kernel, builtin) in [
        ("subgroup_shuffle_up", "subgroupShuffleUp("),
        ("subgroup_shuffle_down", "subgroupShuffleDown("),
        ("subgroup_shuffle_xor", "subgroupShuffleXor("),
    ] {
        let source = shaders::source(kernel).unwrap_or_default();
        for other in [
            "subgroupShuffleUp(",
            "subgroupShuffleDown(",
            "subgroupShuffleXor(",
        ] {
            assert_eq!(
                source.contains(other),
                other == builtin,
                "{kernel}: {other}"
            );
        }
    }
}

/// Runs the binary: success, stdout, stderr.
fn membench(args: &[&str]) -> std::io::Result<(bool, String, String)> {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_membench"))
        .args(args)
        .output()?;
    Ok((
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    ))
}

#[test]
fn list_emits_the_flat_wgsl_of_a_kernel_or_of_cases() {
    let (ok, stdout, _) = membench(&["list", "--emit", "wgsl", "bank_row_col_pad"]).unwrap();
    assert!(ok);
    let source = shaders::source("bank_row_col_pad").unwrap_or_default();
    assert_eq!(stdout, format!("// kernel: bank_row_col_pad\n{source}"));
    // A case filter: every kernel its cases run, once each.
    let (ok, stdout, _) = membench(&["list", "--emit", "wgsl", "stencil/"]).unwrap();
    assert!(ok);
    let headers: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("// kernel: "))
        .collect();
    assert_eq!(
        headers,
        [
            "// kernel: stencil_uniform_coef",
            "// kernel: stencil_storage_coef",
            "// kernel: stencil_const_coef",
            "// kernel: stencil_global_direct",
            "// kernel: stencil_texture",
        ]
    );
    let (ok, stdout, stderr) = membench(&["list", "--emit", "wgsl", "nonesuch"]).unwrap();
    assert!(!ok && stdout.is_empty());
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("no kernel or case matches \"nonesuch\""),
        "{stderr}"
    );
}

// The preprocessor itself, on throwaway shader directories.
#[expect(
    dead_code,
    reason = "the tests call the preprocessor, not the whole build"
)]
#[path = "../build.rs"]
mod build;

/// Flattens `files` (path under shaders/, text) with build.rs's preprocessor: the
/// kernels' flat texts, or its error.
fn flatten(name: &str, files: &[(&str, &str)]) -> Result<Vec<(String, String)>, String> {
    let io = |e: std::io::Error| e.to_string();
    let root = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&root);
    for (path, text) in files {
        let path = root.join("shaders").join(path);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        std::fs::write(path, text).map_err(io)?;
    }
    let out = root.join("out");
    build::shaders(&root, &out)?;
    let mut kernels = Vec::new();
    for entry in std::fs::read_dir(out.join("wgsl")).map_err(io)? {
        let path = entry.map_err(io)?.path();
        let stem = path.file_stem().unwrap_or_default().to_string_lossy();
        kernels.push((
            stem.into_owned(),
            std::fs::read_to_string(&path).map_err(io)?,
        ));
    }
    kernels.sort();
    Ok(kernels)
}

#[test]
fn the_preprocessor_expands_imports_ifs_and_values() {
    let source = "// s\n#import f\n#if A\na ${N}\n#if !B\nnot b\n#else\nb\n#endif\n#else\nnot a\n#endif\n#import f\n";
    let kernels = flatten(
        "expands",
        &[
            (
                "permutations",
                "# comment\nk1: s A N=1\nk2: s A B N=2\nk3: s\n",
            ),
            ("s.wgsl", source),
            ("shared/f.wgsl", "// f\nfn f() {}\n"),
            ("plain.wgsl", "// plain\n#import f\n"),
        ],
    )
    .unwrap();
    let f = "// f\nfn f() {}\n";
    assert_eq!(
        kernels,
        [
            ("k1".into(), format!("// s\n{f}a 1\nnot b\n")),
            ("k2".into(), format!("// s\n{f}a 2\nb\n")),
            ("k3".into(), format!("// s\n{f}not a\n")),
            ("plain".into(), format!("// plain\n{f}")),
        ]
    );
}

#[test]
fn a_twin_s_includes_are_replaced_by_their_headers() {
    let root = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("cuda_includes");
    let _ = std::fs::remove_dir_all(&root);
    let dir = root.join("shaders/cuda");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("h.cuh"), "int h();\n").unwrap();
    std::fs::write(
        dir.join("a.cu"),
        "// a\n#if T\n#include \"h.cuh\"\n#endif\n",
    )
    .unwrap();
    let out = root.join("out");
    build::cuda_sources(&root, &out).unwrap();
    assert_eq!(
        std::fs::read_to_string(out.join("cuda/a.cu")).unwrap(),
        "// a\n#if T\nint h();\n#endif\n"
    );
    std::fs::write(dir.join("b.cu"), "// b\n#include \"missing.cuh\"\n").unwrap();
    let error = build::cuda_sources(&root, &out).unwrap_err();
    assert!(
        error.ends_with("b.cu:2: no shaders/cuda/missing.cuh to include"),
        "{error}"
    );
}

#[test]
fn a_malformed_directive_or_permutation_fails_the_build() {
    let s = |text: &'static str| ("s.wgsl", text);
    for (name, files, expected) in [
        (
            "directive",
            vec![s("// s\n#iff A\n")],
            "shaders/s.wgsl:2: `#iff A` is not",
        ),
        (
            "unclosed",
            vec![s("// s\n#if A\n"), ("permutations", "k: s A\n")],
            "shaders/s.wgsl:2: #if without #endif",
        ),
        (
            "else",
            vec![s("// s\n#else\n")],
            "shaders/s.wgsl:2: #else without #if",
        ),
        (
            "endif",
            vec![s("// s\n#endif\n")],
            "shaders/s.wgsl:2: #endif without #if",
        ),
        (
            "unset",
            vec![s("// s\n#if A\n#endif\n")],
            "shaders/s.wgsl:2: #if A: no kernel",
        ),
        (
            "value",
            vec![s("// s\n${N}\n")],
            "shaders/s.wgsl:2: ${N}: N is not set",
        ),
        (
            "brace",
            vec![s("// s\n${N\n")],
            "shaders/s.wgsl:2: `${` without `}`",
        ),
        (
            "import",
            vec![s("// s\n#import g\n")],
            "shaders/shared/g.wgsl: ",
        ),
        (
            "line",
            vec![s("// s\n"), ("permutations", "k s A\n")],
            "shaders/permutations:1: expected",
        ),
        (
            "source",
            vec![s("// s\n"), ("permutations", "k: t A\n")],
            "shaders/permutations:1: no shaders/t.wgsl",
        ),
        (
            "unread",
            vec![s("// s\n"), ("permutations", "k: s A\n")],
            "shaders/permutations:1: shaders/s.wgsl never reads A",
        ),
        (
            "twice",
            vec![s("// s\n${A}\n"), ("permutations", "k: s A=1\nk: s A=2\n")],
            "shaders/permutations:2: kernel k is listed twice",
        ),
        (
            "clash",
            vec![
                s("// s\n${A}\n"),
                ("k.wgsl", "// k\n"),
                ("permutations", "k: s A=1\n"),
            ],
            "shaders/permutations:1: kernel k is also shaders/k.wgsl",
        ),
    ] {
        let error = flatten(&format!("error_{name}"), &files).unwrap_err();
        assert!(error.starts_with(expected), "{name}: {error}");
    }
}
