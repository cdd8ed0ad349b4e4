//! The library's side of `membench kernel`: a user crate describes a kernel in Rust
//! ([`GpuKernel`]: source, entry, sizes, buffers with data, uniforms, dispatch, declared
//! bytes) and measures it through the session `membench run` uses, with any sampler —
//! criterion's, through [`crate::measure::Driven`], in a user's `cargo bench`
//! (`benches/kernel.rs` shows it). The rows it gives can be written to a results file.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use super::instance::{Description, Fill, Init, Reference, Verify, instance};
use crate::backend::wgpu::GpuContext;
use crate::error::{Error, Result};
use crate::measure::Sample;
use crate::run::{self, Backends, Output, Quiet, Ran, RunSettings, Session};
use crate::suite::{Api, Build};

/// A kernel described in Rust: what `membench kernel`'s flags say, as values.
#[derive(Clone, Debug)]
pub struct GpuKernel {
    description: Description,
}

impl GpuKernel {
    /// The kernel `name` (its rows' variant) of WGSL `source`.
    pub fn new(name: &str, source: &str) -> Self {
        GpuKernel {
            description: Description {
                name: name.to_owned(),
                file: name.to_owned(),
                source: source.to_owned(),
                ..Description::default()
            },
        }
    }

    /// The compute entry point, where the source has several.
    pub fn entry(mut self, entry: &str) -> Self {
        self.description.entry = Some(entry.to_owned());
        self
    }

    /// A size of the rows' `param` (as `--size`).
    pub fn size(mut self, name: &str, value: u64) -> Self {
        self.description.sizes.push((name.to_owned(), value));
        self
    }

    /// The element count of binding `name`'s runtime-sized array (as `--buffer`).
    pub fn buffer(mut self, name: &str, count: u64) -> Self {
        self.description.counts.push((name.to_owned(), count));
        self
    }

    /// Binding `name`'s first contents made by `init` (as `--init`).
    pub fn init(mut self, name: &str, init: Init) -> Self {
        self.description
            .fills
            .push((name.to_owned(), Fill::Init(init)));
        self
    }

    /// Binding `name`'s first contents, word by word (f32 as their bits); the rest of
    /// the buffer zeros.
    pub fn data(mut self, name: &str, words: Vec<u32>) -> Self {
        self.description
            .fills
            .push((name.to_owned(), Fill::Words(Arc::new(words))));
        self
    }

    /// A uniform field `NAME.FIELD` and its components (as `--uniform`).
    pub fn uniform(mut self, field: &str, components: &[f64]) -> Self {
        self.description
            .uniforms
            .push((field.to_owned(), components.to_vec()));
        self
    }

    /// A pipeline-overridable constant (as `--override`).
    pub fn constant(mut self, name: &str, value: f64) -> Self {
        self.description.overrides.push((name.to_owned(), value));
        self
    }

    /// The workgroups of the dispatch (as `--workgroups`).
    pub fn dispatch(mut self, workgroups: [u32; 3]) -> Self {
        self.description.workgroups = Some(workgroups);
        self
    }

    /// The bytes the kernel must move (as `--bytes`); else the interpreter counts them.
    pub fn bytes(mut self, bytes: u64) -> Self {
        self.description.bytes = Some(bytes);
        self
    }

    /// Checks the outputs against `reference` instead of the interpreter: from every
    /// binding's first words (group then binding order, uniforms included), each
    /// `read_write` binding's words after one dispatch, in that order; floats within
    /// the interpreter's tolerance. The bytes are then declared ([`GpuKernel::bytes`])
    /// or every storage binding's.
    pub fn reference(
        mut self,
        reference: impl Fn(&[&[u32]]) -> Vec<Vec<u32>> + Send + Sync + 'static,
    ) -> Self {
        self.description.verify = Verify::Reference(Reference(Arc::new(reference)));
        self
    }

    /// No check against the interpreter, for `why` (the rows say so).
    pub fn unverified(mut self, why: &str) -> Self {
        self.description.verify = Verify::Skip(why.to_owned());
        self
    }

    /// What the flags of `membench kernel` would say.
    pub fn description(&self) -> &Description {
        &self.description
    }
}

/// How [`measure`] measures.
#[derive(Clone, Debug)]
pub struct Measuring<'a> {
    /// `--quick` sizing and the fewest samples.
    pub quick: bool,
    /// The builds each case is measured in.
    pub builds: Vec<Build>,
    /// Where the rows are written (a results file of kernels), if anywhere.
    pub out: Option<&'a Path>,
}

impl Default for Measuring<'_> {
    fn default() -> Self {
        Measuring {
            quick: false,
            builds: vec![Build::Default],
            out: None,
        }
    }
}

/// Verifies and times `kernels` on the best adapter (or `WGPU_ADAPTER_NAME`) through the
/// session of `membench run`, `sampler` taking the samples; the rows, with the
/// simulator's predictions, and written to `measuring.out` where given.
pub fn measure(
    kernels: &[GpuKernel],
    sampler: &mut dyn Sample,
    measuring: &Measuring,
) -> Result<Ran> {
    let timeout = Duration::from_secs(20);
    let ctx = GpuContext::new(None, timeout)?;
    let settings = RunSettings {
        quick: measuring.quick,
        ..RunSettings::default()
    };
    let sizing = ctx.sizing(settings.quick, None, None)?;
    let cases = kernels
        .iter()
        .map(|kernel| {
            let made = instance(&kernel.description, &sizing).map_err(Error::Usage)?;
            Ok((made.experiment, made.case))
        })
        .collect::<Result<Vec<_>>>()?;
    let backends = Backends::new(&ctx, &[Api::Wgpu], &measuring.builds, timeout);
    let measurers = backends.measurers();
    let identity = run::identity(&ctx.info, &ctx.identity, settings.sizing());
    let case_rows = run::case_rows(&cases);
    let session = Session {
        output: measuring.out.map(|path| Output {
            path,
            identity: &identity,
            case_rows: &case_rows,
        }),
        ..Session::new(&measurers, &settings, &ctx.info.name)
    };
    session.run(&cases, sampler, &Quiet)
}
