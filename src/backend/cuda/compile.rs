//! NVRTC: an experiment's CUDA C twin compiled to PTX for one case, with the kernel's
//! `shaders/permutations` keys, the case's override constants and its block shape as
//! defines. Needs only libnvrtc: no driver, no GPU (`membench list --emit ptx`, the
//! tests).
//!
//! The twins' conventions, which [`check_ptx`] holds every compiled twin to:
//! - the entry is `extern "C" __global__ void <source>(..)` in `shaders/cuda/<source>.cu`;
//! - its parameters are the case's storage buffers (inputs and outputs) in binding
//!   order, as pointers;
//! - the uniform buffer's words are a `__constant__` struct named `params` of the
//!   uniform's exact size, laid out as the WGSL's uniform struct;
//! - defines: each key of the WGSL kernel's permutation line (`-DPAD=1`; a flag is
//!   `-DNEIGHBORED=1`), then each override constant (`-DWORKGROUP_SIZE=256`,
//!   `-DC1=0.8f`; an override of the same name as a key replaces it), then `BLOCK_X`,
//!   `BLOCK_Y`, `BLOCK_Z` and `BLOCK_SIZE` (their product), the case's workgroup size,
//!   then `RUNTIME_LOOP`, which a twin puts before each loop whose trip count is a
//!   run-time value: empty in the default build, `#pragma unroll 1` in the rolled one.

use crate::error::{Error, Result};
use crate::suite::{Buffer, Case, CudaBuild, CudaTwin, Experiment, Twin, shaders};

/// The architecture the twins are checked against without a device (H100, H200).
pub(crate) const DEFAULT_ARCH: (i32, i32) = (9, 0);

/// Why NVRTC cannot be used here, if it cannot. Checked before any NVRTC call: cudarc
/// panics on a missing library.
pub(crate) fn nvrtc_unavailable() -> Option<String> {
    // SAFETY: only tries to open the library by its usual names.
    let present = unsafe { cudarc::nvrtc::sys::is_culib_present() };
    (!present).then(|| {
        "NVRTC not found (libnvrtc.so, libnvrtc.so.13): put CUDA's lib directory on \
         LD_LIBRARY_PATH"
            .to_owned()
    })
}

/// What a twin's `RUNTIME_LOOP` stands for in CUDA build `build`.
fn runtime_loop(build: CudaBuild) -> &'static str {
    match build {
        CudaBuild::Default => "",
        CudaBuild::Rolled => "_Pragma(\"unroll 1\")",
    }
}

/// One case's twin, ready to compile.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Program {
    pub twin: CudaTwin,
    /// The CUDA C text (`shaders/cuda/<twin.source>.cu`).
    pub source: &'static str,
    /// `NAME=value` pairs, in the order [`Program::options`] passes them.
    pub(crate) defines: Vec<(String, String)>,
}

impl Program {
    /// The twin of `experiment` for `case` in CUDA build `build`, or why there is none.
    pub(crate) fn of(experiment: &Experiment, case: &Case, build: CudaBuild) -> Result<Program> {
        let twin = match experiment.twin {
            Twin::Cuda(twin) => twin,
            Twin::None(why) => {
                return Err(Error::Cuda(format!(
                    "{} has no CUDA twin: {why}",
                    experiment.name()
                )));
            }
        };
        let kernel = experiment
            .kernel
            .ok_or_else(|| Error::Cuda(format!("{} runs no kernel to twin", experiment.name())))?;
        let source = shaders::cuda_source(twin.source)
            .ok_or_else(|| Error::Cuda(format!("no shaders/cuda/{}.cu", twin.source)))?;
        let mut defines: Vec<(String, String)> = shaders::keys(kernel)
            .iter()
            .map(|(key, value)| ((*key).to_owned(), value.unwrap_or("1").to_owned()))
            .collect();
        for &(name, value) in &case.overrides {
            let value = define_value(value)
                .ok_or_else(|| Error::Cuda(format!("{name} = {value} is no C literal")))?;
            match defines.iter_mut().find(|(key, _)| key == name) {
                Some(define) => define.1 = value,
                None => defines.push((name.to_owned(), value)),
            }
        }
        let [x, y, z] = case.workgroup_size;
        defines.extend([
            ("BLOCK_X".to_owned(), x.to_string()),
            ("BLOCK_Y".to_owned(), y.to_string()),
            ("BLOCK_Z".to_owned(), z.to_string()),
            ("BLOCK_SIZE".to_owned(), (x * y * z).to_string()),
            ("RUNTIME_LOOP".to_owned(), runtime_loop(build).to_owned()),
        ]);
        Ok(Program {
            twin,
            source,
            defines,
        })
    }

    /// The entry point: the function named after the twin's file.
    pub(crate) fn entry(&self) -> &'static str {
        self.twin.source
    }

    /// NVRTC's options for compute capability `arch`: PTX for `compute_XY`, which the
    /// driver compiles for the device when the module is loaded.
    pub(crate) fn options(&self, (major, minor): (i32, i32)) -> Vec<String> {
        let mut options = vec![format!("--gpu-architecture=compute_{major}{minor}")];
        options.extend(
            self.defines
                .iter()
                .map(|(name, value)| format!("-D{name}={value}")),
        );
        options
    }

    /// What identifies the compiled module: the same text, defines and architecture
    /// make the same PTX.
    pub(crate) fn cache_key(&self, arch: (i32, i32)) -> String {
        format!("{} {}", self.twin.source, self.options(arch).join(" "))
    }

    /// The PTX of this program for `arch`.
    pub(crate) fn compile(&self, arch: (i32, i32)) -> Result<String> {
        if let Some(why) = nvrtc_unavailable() {
            return Err(Error::CudaUnavailable(why));
        }
        let options = cudarc::nvrtc::CompileOptions {
            options: self.options(arch),
            name: Some(format!("{}.cu", self.twin.source)),
            ..Default::default()
        };
        let ptx = cudarc::nvrtc::compile_ptx_with_opts(self.source, options)
            .map_err(|error| Error::Cuda(describe_compile_error(self.twin.source, &error)))?;
        // The image is NUL-terminated ASCII text.
        let bytes: Vec<u8> = ptx
            .as_bytes()
            .unwrap_or_default()
            .iter()
            .copied()
            .take_while(|&b| b != 0)
            .collect();
        String::from_utf8(bytes)
            .map_err(|_| Error::Cuda(format!("{}: NVRTC's PTX is not text", self.twin.source)))
    }
}

/// `membench list --emit ptx`: the PTX of each distinct twin program of `cases` for
/// `arch`, under a `// twin: ` line naming its source, first case and options.
pub(crate) fn ptx_listing(
    cases: &[(&Experiment, Case)],
    build: CudaBuild,
    arch: (i32, i32),
) -> Result<String> {
    let mut seen = Vec::new();
    let mut listing = String::new();
    for (experiment, case) in cases {
        if matches!(experiment.twin, Twin::None(_)) {
            continue;
        }
        let program = Program::of(experiment, case, build)?;
        let key = program.cache_key(arch);
        if seen.contains(&key) {
            continue;
        }
        let ptx = program.compile(arch)?;
        listing.push_str(&format!(
            "// twin: shaders/cuda/{}.cu for {}: {}\n{ptx}\n",
            program.twin.source,
            case.id(experiment),
            program.options(arch).join(" ")
        ));
        seen.push(key);
    }
    if seen.is_empty() {
        return Err(Error::Cuda(
            "the matching cases have no CUDA twin: host transfers only".to_owned(),
        ));
    }
    Ok(listing)
}

/// A C literal of an override constant's value: whole numbers as integers, an f32 as
/// its shortest `f` literal (C1..C4), anything else as a double.
#[expect(
    clippy::cast_possible_truncation,
    reason = "guarded: a whole value below 2^53 is an exact i64; an f32 only where it round-trips"
)]
pub(crate) fn define_value(value: f64) -> Option<String> {
    if !value.is_finite() {
        None
    } else if value.fract() == 0.0 && value.abs() < 2f64.powi(53) {
        Some(format!("{}", value as i64))
    } else if f64::from(value as f32) == value {
        Some(format!("{:?}f", value as f32))
    } else {
        Some(format!("{value:?}"))
    }
}

/// NVRTC's log, as text, with the twin it came from.
fn describe_compile_error(source: &str, error: &cudarc::nvrtc::CompileError) -> String {
    match error {
        cudarc::nvrtc::CompileError::CompileError { log, options, .. } => format!(
            "shaders/cuda/{source}.cu does not compile with {}:\n{}",
            options.join(" "),
            log.to_string_lossy().trim_end()
        ),
        other => format!("shaders/cuda/{source}.cu: NVRTC: {other:?}"),
    }
}

/// Holds compiled PTX to the twins' conventions: the entry `entry` takes one pointer per
/// storage buffer of `buffers`, `params` in constant memory has the uniform's size (or
/// there is no uniform and no `params`), and the module declares dynamic shared memory
/// exactly where the twin is launched with it.
pub(crate) fn check_ptx(
    ptx: &str,
    entry: &str,
    buffers: &[Buffer],
    dynamic_shared: bool,
) -> Result<()> {
    let error = |what: String| Error::Cuda(format!("shaders/cuda/{entry}.cu: {what}"));
    let header = format!(".entry {entry}(");
    let start = ptx
        .find(&header)
        .ok_or_else(|| error(format!("no extern \"C\" __global__ {entry} in its PTX")))?;
    let signature = &ptx[start..];
    let signature = &signature[..signature.find(')').unwrap_or(signature.len())];
    let parameters = signature.matches(".param ").count();
    let pointers = signature.matches(".param .u64").count();
    let storage = buffers
        .iter()
        .filter(|b| !matches!(b, Buffer::Uniform(_)))
        .count();
    if parameters != storage || pointers != storage {
        return Err(error(format!(
            "{parameters} parameters ({pointers} pointers) where the case binds {storage} \
             storage buffers"
        )));
    }
    let uniform_bytes = buffers.iter().find_map(|buffer| match buffer {
        Buffer::Uniform(_) => Some(buffer.len_bytes()),
        _ => None,
    });
    let params_bytes = constant_bytes(ptx, "params");
    if params_bytes != uniform_bytes {
        return Err(error(format!(
            "__constant__ params of {params_bytes:?} bytes where the uniform has \
             {uniform_bytes:?}"
        )));
    }
    if ptx.contains(".extern .shared") != dynamic_shared {
        return Err(error(format!(
            "extern __shared__ {} where the experiment's twin is declared {}",
            if dynamic_shared { "missing" } else { "present" },
            if dynamic_shared {
                "with dynamic shared memory"
            } else {
                "without"
            }
        )));
    }
    Ok(())
}

/// Bytes of the `.const` variable `name` in `ptx` (`.const .align 4 .b8 params[8];`).
fn constant_bytes(ptx: &str, name: &str) -> Option<u64> {
    let declared = format!(" {name}[");
    ptx.lines()
        .filter(|line| line.contains(".const ") && line.contains(&declared))
        .find_map(|line| {
            let after = &line[line.find(&declared)? + declared.len()..];
            after[..after.find(']')?].parse().ok()
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::{Family, Measure, REGISTRY, Sizing, Twin};

    #[test]
    fn override_values_become_c_literals() {
        assert_eq!(define_value(256.0).as_deref(), Some("256"));
        assert_eq!(define_value(16_777_619.0).as_deref(), Some("16777619"));
        assert_eq!(define_value(f64::from(0.8f32)).as_deref(), Some("0.8f"));
        assert_eq!(
            define_value(f64::from(-1.0f32 / 280.0)).as_deref(),
            Some("-0.0035714286f")
        );
        assert_eq!(define_value(0.1).as_deref(), Some("0.1"));
        assert_eq!(define_value(f64::NAN), None);
    }

    #[test]
    fn defines_are_the_keys_then_the_overrides_then_the_block_then_the_loops() {
        let sizing = Sizing::nominal(true);
        let unroll4 = REGISTRY
            .iter()
            .find(|e| e.name() == "reduce/unroll4")
            .and_then(|e| Some((e, (e.cases)(&sizing).into_iter().next()?)));
        let Some((experiment, case)) = unroll4 else {
            panic!("reduce/unroll4 has cases");
        };
        let program = Program::of(experiment, &case, CudaBuild::Default).unwrap();
        let options = program.options(DEFAULT_ARCH);
        // The UNROLL flag of reduce_unroll's permutation line takes the override's value.
        assert_eq!(
            options,
            [
                "--gpu-architecture=compute_90",
                "-DUNROLL=4",
                "-DWORKGROUP_SIZE=256",
                "-DBLOCK_X=256",
                "-DBLOCK_Y=1",
                "-DBLOCK_Z=1",
                "-DBLOCK_SIZE=256",
                "-DRUNTIME_LOOP=",
            ]
        );
        let rolled = Program::of(experiment, &case, CudaBuild::Rolled).unwrap();
        assert_eq!(
            rolled.options(DEFAULT_ARCH).last().map(String::as_str),
            Some("-DRUNTIME_LOOP=_Pragma(\"unroll 1\")")
        );
        assert_eq!(program.entry(), "reduce_global");
        let pad = REGISTRY
            .iter()
            .find(|e| e.name() == "bank/row_col_pad")
            .and_then(|e| Some((e, (e.cases)(&sizing).into_iter().next()?)));
        let Some((experiment, case)) = pad else {
            panic!("bank/row_col_pad has cases");
        };
        let program = Program::of(experiment, &case, CudaBuild::Default).unwrap();
        assert_eq!(program.defines[0], ("PAD".to_owned(), "1".to_owned()));
    }

    #[test]
    fn experiments_without_a_twin_say_why() {
        let sizing = Sizing::nominal(true);
        let transfer = REGISTRY
            .iter()
            .find(|e| e.family == Family::Transfer && e.measure != Measure::Kernel)
            .and_then(|e| Some((e, (e.cases)(&sizing).into_iter().next()?)));
        let Some((experiment, case)) = transfer else {
            panic!("a transfer case");
        };
        let error = Program::of(experiment, &case, CudaBuild::Default)
            .err()
            .map(|e| e.to_string());
        assert!(
            error.as_deref().is_some_and(|e| e.contains("no CUDA twin")),
            "{error:?}"
        );
    }

    /// Every case's twin at quick size, each distinct program once, compiled for the
    /// H100/H200's `compute_90` and held to the conventions against the case's buffers.
    /// Without NVRTC it says why and passes, except where CI requires NVRTC
    /// (`CI` and `MEMBENCH_NVRTC_REQUIRED` set).
    #[test]
    fn every_twin_compiles_with_nvrtc_for_every_case() {
        use rayon::prelude::*;
        if let Some(why) = nvrtc_unavailable() {
            let required = std::env::var_os("CI").is_some()
                && std::env::var_os("MEMBENCH_NVRTC_REQUIRED").is_some();
            assert!(
                !required,
                "NVRTC is required here (CI, MEMBENCH_NVRTC_REQUIRED): {why}"
            );
            stderrln!("skipping the NVRTC compilation of the twins: {why}");
            return;
        }
        let sizing = Sizing::nominal(true);
        // Each distinct program with the same program in the rolled build.
        let mut programs: Vec<(String, [Program; 2], Vec<Buffer>)> = Vec::new();
        for experiment in REGISTRY.iter().filter(|e| matches!(e.twin, Twin::Cuda(_))) {
            for case in (experiment.cases)(&sizing) {
                let program = Program::of(experiment, &case, CudaBuild::Default).unwrap();
                let key = program.cache_key(DEFAULT_ARCH);
                match programs.iter().find(|(k, _, _)| *k == key) {
                    // The same program must fit every case that shares it.
                    Some((_, _, buffers)) => assert_eq!(
                        buffers.iter().map(Buffer::binding).collect::<Vec<_>>(),
                        case.buffers.iter().map(Buffer::binding).collect::<Vec<_>>(),
                        "{key}"
                    ),
                    None => {
                        let rolled = Program::of(experiment, &case, CudaBuild::Rolled).unwrap();
                        programs.push((key, [program, rolled], case.buffers.clone()));
                    }
                }
            }
        }
        assert!(programs.len() > 40, "{} programs", programs.len());
        let failures: Vec<String> = programs
            .par_iter()
            .filter_map(|(key, [program, rolled], buffers)| {
                let ptx = |program: &Program| {
                    program.compile(DEFAULT_ARCH).and_then(|ptx| {
                        check_ptx(&ptx, program.entry(), buffers, program.twin.dynamic_shared)?;
                        Ok(ptx)
                    })
                };
                let (default_ptx, rolled_ptx) = match (ptx(program), ptx(rolled)) {
                    (Ok(d), Ok(r)) => (d, r),
                    (Err(e), _) | (_, Err(e)) => return Some(format!("{key}: {e}")),
                };
                // NVRTC unrolls a loop of run-time trip count with a remainder loop it
                // marks `nounroll`; the rolled build must keep every such loop whole.
                (default_ptx.contains("nounroll") && rolled_ptx.len() >= default_ptx.len())
                    .then(|| format!("{key}: a loop of run-time trip count without RUNTIME_LOOP"))
            })
            .collect();
        assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    }

    #[test]
    fn ptx_is_held_to_the_conventions() {
        let ptx = "\
.visible .const .align 4 .b8 params[8];\n\
.visible .entry copy_offset(\n\
\t.param .u64 .ptr .align 1 copy_offset_param_0,\n\
\t.param .u64 .ptr .align 1 copy_offset_param_1\n\
)\n{\n}\n";
        let buffers = [
            Buffer::Uniform(vec![0; 2]),
            Buffer::Input(4),
            Buffer::Output(4),
        ];
        assert!(check_ptx(ptx, "copy_offset", &buffers, false).is_ok());
        assert!(check_ptx(ptx, "copy_offset", &buffers, true).is_err());
        let error = |buffers: &[Buffer]| {
            check_ptx(ptx, "copy_offset", buffers, false)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default()
        };
        assert!(
            error(&[
                Buffer::Uniform(vec![0; 3]),
                Buffer::Input(4),
                Buffer::Output(4)
            ])
            .contains("params of Some(8) bytes where the uniform has Some(12)")
        );
        assert!(
            error(&[Buffer::Uniform(vec![0; 2]), Buffer::Output(4)])
                .contains("2 parameters (2 pointers) where the case binds 1")
        );
        assert!(check_ptx(ptx, "copy_stride", &buffers, false).is_err());
    }
}
