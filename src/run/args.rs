//! `membench run`'s flags, and the [`Plan`] they ask for.

use std::path::PathBuf;
use std::str::FromStr as _;
use std::time::Duration;

use super::{Adapters, Destination, Plan, RunSettings, check_settings, parse_matrix};
use crate::error::{Error, Result};
use crate::health;
use crate::measure::{DEFAULT_SAMPLES, MIN_SAMPLES};
use crate::results;
use crate::suite::{Api, Build, Profile};

/// What `membench run` takes.
#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// Only cases whose id (family/variant/param) contains one of these
    /// (comma-separated, e.g. `copy/offset,copy/peak`).
    #[arg(long, value_delimiter = ',')]
    pub filter: Vec<String>,
    /// Small working sets: a correctness run in seconds (CI, software adapters).
    #[arg(long)]
    pub quick: bool,
    /// Adapter by index, name substring, GPU UUID (or its first 8 digits) or PCI bus
    /// id (see `membench devices`), or `all` for every adapter in turn, each into its
    /// own results file; default: the best one, or `WGPU_ADAPTER_NAME`.
    #[arg(long)]
    pub adapter: Option<String>,
    /// With `--adapter all`: every adapter that computes at the same time, one thread
    /// each, each case started on all of them at once. Rows record `concurrent=N` in
    /// `sizing`, in files of their own (`-concurrent-N`).
    #[arg(long)]
    pub concurrent: bool,
    /// Results CSV; default results/<device>[-<short uuid>]-<backend>[-<sizing>].csv
    /// (`-quick` for --quick). Rows of cases not run are kept; a file of another GPU,
    /// backend or sizing is refused. `{host}`, `{uuid}` and `{adapter}` in it are
    /// replaced (one file per GPU, also with `--adapter all`). `-` prints the rows to
    /// stdout (progress and the summary go to stderr).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// The measuring flags `kernel` has too.
    #[command(flatten)]
    pub measuring: MeasureArgs,
    /// Bytes of the main buffer of the streaming experiments, in MiB (default 256,
    /// 4 with --quick, capped by the device).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) buffer_mib: Option<u64>,
    /// Matrix size of the 2-D experiments (transpose), columns x rows, e.g. 4096x4096
    /// or 1000x3000 (default 4096x4096 and 8192x8192 where the device allows).
    #[arg(long, value_parser = parse_matrix)]
    pub size: Option<(u32, u32)>,
    /// Only the cases of a profile: `health`, the few that show a sick memory system
    /// (seconds on a GPU), and `levels`, the hierarchy and latency sweeps at coarse
    /// steps (the memory levels `membench kernel` reads), in wgpu's default build;
    /// `tax`, the families where wgpu's runtime checks cost most, in its default and
    /// unchecked builds and each check off alone (docs/tax.md).
    #[arg(long, value_enum)]
    pub profile: Option<Profile>,
    /// Checks the run against an expectation file of the GPU's model (shipped in
    /// results/expect/): exit 3 where a case is slower than expected, 1 where one could
    /// not be measured.
    #[arg(long, value_name = "CSV", conflicts_with = "bless")]
    pub expect: Option<PathBuf>,
    /// With `--profile health`, on one adapter: declares this GPU healthy and writes an
    /// expectation file for its model from the run, at the shipped files' margins (90 %
    /// of each median, 50 % for transfers); nothing is written where a case failed.
    #[arg(long, value_name = "CSV", requires = "profile")]
    pub bless: Option<PathBuf>,
}

/// The measuring flags `run` and `kernel` share: how the rows print, in which apis and
/// builds, with how many samples, and when a submission counts as hung.
#[derive(clap::Args, Clone, Debug)]
pub struct MeasureArgs {
    /// What `--out -` prints: the results CSV, the rows as JSON (an array, or a line
    /// each: jsonl), or the summary as a table or in Markdown.
    #[arg(long, value_enum)]
    pub format: Option<results::Format>,
    /// The apis to measure with, comma-separated: wgpu, cuda (where the CUDA
    /// backend is available). Each row records its api. Default: both for `run`;
    /// wgpu for `kernel`, whose kernels have no CUDA twin.
    #[arg(long, value_delimiter = ',', value_parser = Api::from_str)]
    pub api: Vec<Api>,
    /// The builds to measure, comma-separated, each in the apis that have it:
    /// default (what a plain wgpu program gets; NVRTC's twins), tax-free (wgpu:
    /// runtime checks off, barriers at the WGSL spec's scope; unchecked where SPIR-V
    /// passthrough is not offered), unchecked (wgpu: checks off, naga's barriers),
    /// rolled (CUDA: loops with a run-time trip count kept rolled, as NVIDIA's
    /// Vulkan compiler leaves some), no-bounds-checks, no-loop-bounding,
    /// no-int-div-checks (wgpu: that one runtime check off, the others on). Each row
    /// records its build.
    #[arg(long, value_delimiter = ',', default_values = ["default", "tax-free"], value_parser = Build::from_str)]
    pub build: Vec<Build>,
    /// Timed samples per case.
    #[arg(long, default_value_t = DEFAULT_SAMPLES, value_parser = clap::value_parser!(u32).range(i64::from(MIN_SAMPLES)..=4096))]
    pub samples: u32,
    /// Seconds one submission may take before the device counts as hung.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) timeout_s: u64,
}

impl MeasureArgs {
    /// The apis asked for, or `default` where none were.
    pub fn apis_or(&self, default: &[Api]) -> Vec<Api> {
        match self.api.is_empty() {
            true => default.to_vec(),
            false => self.api.clone(),
        }
    }
}

impl RunArgs {
    /// What `membench run`'s flags ask for, refused where they contradict each other.
    pub fn plan(self) -> Result<Plan> {
        // A profile measures what a plain wgpu program gets.
        let (apis, builds) = match self.profile {
            Some(Profile::Health) => (vec![health::SETTING.api()], vec![health::SETTING.build()]),
            // The levels `membench kernel` reads are wgpu's default build's.
            Some(Profile::Levels) => (vec![Api::Wgpu], vec![Build::Default]),
            Some(Profile::Tax) => (vec![Api::Wgpu], crate::suite::profile::TAX_BUILDS.to_vec()),
            None => (
                self.measuring.apis_or(&[Api::Wgpu, Api::Cuda]),
                self.measuring.build,
            ),
        };
        check_settings(&apis, &builds)?;
        let adapters = Adapters::of(self.adapter, self.concurrent)?;
        if self.bless.is_some() && !matches!(adapters, Adapters::One(_)) {
            return Err(Error::Usage(
                "--bless writes one model's file from one GPU: give --adapter one adapter"
                    .to_owned(),
            ));
        }
        Ok(Plan {
            cases: super::CaseSource::Suite,
            profile: self.profile,
            expect: self.expect,
            bless: self.bless,
            destination: Destination::of(self.out, self.measuring.format)?,
            adapters,
            filters: self.filter,
            settings: RunSettings {
                quick: self.quick,
                samples: self.measuring.samples,
                buffer_bytes: self.buffer_mib.map(|mib| mib << 20),
                matrix: self.size,
                concurrent: None,
            },
            apis,
            builds,
            timeout: Duration::from_secs(self.measuring.timeout_s),
        })
    }
}
