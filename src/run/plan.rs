//! `membench run` as a plan: what it measures, on which adapters (one, each in turn,
//! or all at once) and where its rows go; [`Plan::execute`] opens each adapter, checks
//! the results file before anything is measured, drives the [`Session`] and prints the
//! summary (or the rows), and says how the run ended.

use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use super::{Lockstep, Party, RunSettings, stop};
use crate::backend::wgpu as gpu;
use crate::error::{Error, Result};
use crate::results;
use crate::suite::{self, Api, Build, Case, Experiment, Profile, RunSizing, Setting, Sizing};
use crate::text;

/// The adapters a run measures.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Adapters {
    /// One, by `--adapter`'s selector (an index or a part of a name); `None` for the
    /// best one, or `WGPU_ADAPTER_NAME`.
    One(Option<String>),
    /// Every adapter in turn, each into its own default results file.
    EachInTurn,
    /// Every adapter at the same time, one thread each, each case started on all of
    /// them at once (`--concurrent`).
    AllAtOnce,
}

/// Where a run's rows go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Destination {
    /// The device's default results file, saved after every case.
    DefaultFile,
    /// This results file, saved after every case.
    File(PathBuf),
    /// Stdout, at the end, in this format.
    Stdout(results::Format),
}

/// Where a plan's cases come from.
#[derive(Clone)]
pub enum CaseSource {
    /// The registry's, as the filters and the profile select them.
    Suite,
    /// Made for the device by the caller (`membench kernel`): rows of their own file.
    Given(Given),
}

/// Cases made for a device, and what the run's end says of their rows.
#[derive(Clone)]
pub struct Given {
    /// What makes the device's cases.
    pub make: Arc<MakeCases>,
    /// Lines after the run's summary, from its rows and the device's default results
    /// file.
    pub(crate) explain: Arc<Explain>,
}

impl std::fmt::Debug for Given {
    // Both fields are closures, with nothing to print.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Given").finish_non_exhaustive()
    }
}

/// What makes a plan's cases for a device ([`Given::make`]).
pub(crate) type MakeCases =
    dyn Fn(&Sizing) -> Result<Vec<(&'static Experiment, Case)>> + Send + Sync;

/// What explains a run's rows ([`Given::explain`]).
pub(crate) type Explain = dyn Fn(&[results::Row], &std::path::Path) -> String + Send + Sync;

impl std::fmt::Debug for CaseSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            CaseSource::Suite => "Suite",
            CaseSource::Given(_) => "Given",
        })
    }
}

impl CaseSource {
    /// Whether its rows are a user's kernels, which never share a file with the suite's.
    pub fn kernels(&self) -> bool {
        matches!(self, CaseSource::Given(_))
    }
}

/// What `membench run` asked for.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The registry's cases, or cases made by the caller.
    pub cases: CaseSource,
    /// Only cases whose id contains one of these (all where empty).
    pub filters: Vec<String>,
    /// What changes the measurements; `concurrent` is set by the plan itself.
    pub settings: RunSettings,
    /// The apis each case runs on.
    pub apis: Vec<Api>,
    /// The builds each case is measured in.
    pub builds: Vec<Build>,
    /// How long one submission may take before the device counts as hung.
    pub(crate) timeout: Duration,
    /// The adapters that measure.
    pub adapters: Adapters,
    pub(crate) destination: Destination,
    /// Only the cases of this profile (of those the filters select).
    pub profile: Option<Profile>,
    /// The expectation file the run is checked against.
    pub expect: Option<PathBuf>,
    /// The expectation file the run, declared healthy, writes (`--bless`).
    pub bless: Option<PathBuf>,
}

/// `--adapter` for every adapter.
const ALL_ADAPTERS: &str = "all";

impl Adapters {
    /// `--adapter` and `--concurrent` as given: `all` is every adapter, in turn, or at
    /// once where `concurrent`, which needs it.
    pub fn of(adapter: Option<String>, concurrent: bool) -> Result<Self> {
        match (adapter, concurrent) {
            (Some(all), concurrent) if all == ALL_ADAPTERS => Ok(match concurrent {
                true => Adapters::AllAtOnce,
                false => Adapters::EachInTurn,
            }),
            (_, true) => Err(Error::Usage(
                "--concurrent measures every adapter at once: it needs --adapter all".to_owned(),
            )),
            (one, false) => Ok(Adapters::One(one)),
        }
    }
}

impl Destination {
    /// `--out` and `--format` as given: `-` is stdout (CSV unless `format` says
    /// otherwise), a path a results file, none the device's default file.
    pub(crate) fn of(out: Option<PathBuf>, format: Option<results::Format>) -> Result<Self> {
        match (out, format) {
            (Some(out), format) if out.as_os_str() == "-" => {
                Ok(Destination::Stdout(format.unwrap_or(results::Format::Csv)))
            }
            (_, Some(_)) => Err(Error::Usage(
                "--format chooses what `--out -` prints; a results file is CSV".to_owned(),
            )),
            (Some(out), None) => Ok(Destination::File(out)),
            (None, None) => Ok(Destination::DefaultFile),
        }
    }
}

/// `--size`'s matrix: `NXxNY`, both at least 1.
pub(crate) fn parse_matrix(text: &str) -> std::result::Result<(u32, u32), String> {
    let dimension = |part: &str| {
        part.trim()
            .parse::<u32>()
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| format!("`{part}` is not a positive whole number"))
    };
    match text.split_once(['x', 'X']) {
        Some((nx, ny)) => Ok((dimension(nx)?, dimension(ny)?)),
        None => Err(format!("`{text}` is not of the form NXxNY, e.g. 4096x4096")),
    }
}

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    /// Every case measured or skipped.
    Measured,
    /// A case failed, or an adapter could not run.
    Failed,
    /// A signal stopped it after the case under way.
    Stopped(i32),
    /// Measured, and a case slower than its expectation (`--expect`).
    BelowExpectation,
}

impl Ended {
    /// The process's exit status: 0, 1, or 128 + the signal, as a shell reports a
    /// program the signal ended.
    pub fn exit_status(self) -> u8 {
        match self {
            Ended::Measured => 0,
            Ended::Failed => 1,
            Ended::Stopped(signal) => u8::try_from(128 + signal).unwrap_or(u8::MAX),
            Ended::BelowExpectation => BELOW_EXPECTATION,
        }
    }

    /// How several runs ended: as the last that did not measure everything.
    fn worse(self, next: Ended) -> Ended {
        if next == Ended::Measured { self } else { next }
    }
}

/// The exit status of a run slower than its expectation: 1 is a run that could not
/// measure, 2 a usage error.
pub(crate) const BELOW_EXPECTATION: u8 = 3;

/// Stdout, as the runs on several adapters share it.
pub(super) type Out<'o> = Mutex<&'o mut (dyn Write + Send)>;

/// Writes `text` to `out`.
pub(super) fn print(out: &Out, text: &str) -> Result<()> {
    let mut out = out.lock().unwrap_or_else(PoisonError::into_inner);
    out.write_all(text.as_bytes()).map_err(Error::Stdout)
}

/// Refuses `apis` and `builds` of which nothing is measured: each api measures the
/// builds it has.
pub(crate) fn check_settings(apis: &[Api], builds: &[Build]) -> Result<()> {
    if !Setting::selected(apis, builds).is_empty() {
        return Ok(());
    }
    let names = |names: Vec<String>| names.join(",");
    Err(Error::Usage(format!(
        "no api of --api {} has a build of --build {}: tax-free and unchecked are \
         wgpu's, rolled is CUDA's, default both's",
        names(apis.iter().map(ToString::to_string).collect()),
        names(builds.iter().map(ToString::to_string).collect()),
    )))
}

/// One adapter of `--adapter all --concurrent`.
pub(super) struct Concurrent<'l> {
    /// Its index, which its progress lines start with.
    pub(super) index: usize,
    /// The adapters measuring at once, this one included.
    pub(super) adapters: u32,
    /// Its place in the lockstep the adapters measure in.
    pub(super) party: Party<'l>,
}

/// How the run on one adapter (`ran`) under `--adapter all` ended, its error reported:
/// one adapter that cannot run must not cost the others their results. An adapter that
/// runs no compute shaders is skipped, not failed.
fn adapter_ended(index: usize, info: &wgpu::AdapterInfo, ran: Result<Ended>) -> Ended {
    ran.unwrap_or_else(|error| {
        let said = text::shown_lines(&with_causes(&error));
        if let Error::NoCompute { .. } = error {
            stderrln!("membench: adapter {index} skipped: {said}");
            return Ended::Measured;
        }
        stderrln!("membench: adapter {index} ({}): {said}", info.name);
        Ended::Failed
    })
}

/// `error` and its causes joined by `: `, as the command line reports an error.
fn with_causes(error: &Error) -> String {
    let mut said = error.to_string();
    let mut cause = std::error::Error::source(error);
    while let Some(next) = cause {
        said = format!("{said}: {next}");
        cause = next.source();
    }
    said
}

/// The identity of the results of the adapter `info` (the GPU `gpu`) at `sizing`.
pub fn identity(
    info: &wgpu::AdapterInfo,
    gpu: &results::GpuIdentity,
    sizing: RunSizing,
) -> results::Identity {
    results::Identity {
        device: info.name.clone(),
        gpu_uuid: gpu.gpu_uuid.clone(),
        backend: format!("{:?}", info.backend).to_lowercase(),
        sizing,
    }
}

/// An adapter `--adapter all` measures: its index in `membench devices`' list, what it
/// is and which GPU.
struct Listed {
    index: usize,
    info: wgpu::AdapterInfo,
    gpu: results::GpuIdentity,
}

/// The adapters that run compute shaders, by their index in the whole list: one that
/// cannot (the GL adapter of an NVIDIA driver) is said once and left out.
fn compute_adapters() -> Result<Vec<Listed>> {
    let adapters = gpu::adapters(&gpu::instance()?);
    if adapters.is_empty() {
        return Err(Error::NoAdapter(String::new()));
    }
    let mut listed = Vec::new();
    for (index, adapter) in adapters.iter().enumerate() {
        let info = gpu::info(adapter);
        if let Some(why) = gpu::no_compute(adapter) {
            stderrln!(
                "membench: adapter {index} skipped: {} runs no compute shaders{why}",
                gpu::describe(&info)
            );
            continue;
        }
        let gpu = gpu::identity::of(adapter, &info)?;
        listed.push(Listed { index, info, gpu });
    }
    Ok(listed)
}

/// The results file of each adapter of `listed`: `destination`'s template, or the
/// default file; adapters that would still share one (two GPUs of one model without a
/// UUID) get their index appended.
fn adapter_paths(listed: &[Listed], sizing: RunSizing, destination: &Destination) -> Vec<PathBuf> {
    let paths = listed
        .iter()
        .map(|adapter| {
            let identity = identity(&adapter.info, &adapter.gpu, sizing);
            match destination {
                Destination::File(template) => {
                    expand(template, &identity, &adapter.gpu, adapter.index)
                }
                _ => identity.default_path(),
            }
        })
        .collect();
    results::distinct_paths(paths)
}

/// The fields `--out` may name, each replaced by the run's: several runs (a job array,
/// one process per GPU) into one directory, each into its own file.
pub(crate) const TEMPLATE_FIELDS: [&str; 3] = ["{host}", "{uuid}", "{adapter}"];

/// `template` with `{host}`, `{uuid}` ([`results::Identity::uuid_word`]) and
/// `{adapter}` (its index) replaced, on the path's bytes: the rest of it, in any
/// encoding, is kept. A path without them is itself.
pub(crate) fn expand(
    template: &std::path::Path,
    identity: &results::Identity,
    gpu: &results::GpuIdentity,
    adapter: usize,
) -> PathBuf {
    let values = [
        results::slug(&gpu.host),
        identity.uuid_word(),
        adapter.to_string(),
    ];
    let fields: Vec<(&str, &str)> = TEMPLATE_FIELDS
        .iter()
        .copied()
        .zip(values.iter().map(String::as_str))
        .collect();
    results::replace_in_path(template, &fields)
}

/// Whether `path` names one of [`TEMPLATE_FIELDS`].
pub(super) fn is_template(path: &std::path::Path) -> bool {
    let bytes = path.as_os_str().as_encoded_bytes();
    TEMPLATE_FIELDS
        .iter()
        .any(|field| bytes.windows(field.len()).any(|w| w == field.as_bytes()))
}

impl Plan {
    /// The plan's settings, with `concurrent` adapters measuring at once (`None` alone).
    pub(super) fn settings(&self, concurrent: Option<u32>) -> RunSettings {
        RunSettings {
            concurrent,
            ..self.settings.clone()
        }
    }

    /// Runs the plan, printing to `out` (stdout) the summary of each adapter's run, or
    /// the rows where they go there; progress and notes go to stderr. From here on a
    /// first signal stops the run after the case under way.
    pub fn execute(&self, out: &mut (dyn Write + Send)) -> Result<Ended> {
        let out = Mutex::new(out);
        stop::stop_gracefully();
        let concurrent = match &self.adapters {
            Adapters::One(selector) => {
                return self.run_on(selector.as_deref(), &self.destination, None, &out);
            }
            Adapters::EachInTurn => false,
            Adapters::AllAtOnce => true,
        };
        let templated = matches!(&self.destination, Destination::File(path) if is_template(path));
        if self.destination != Destination::DefaultFile && !templated {
            return Err(Error::Usage(format!(
                "--out names one file: with --adapter all each adapter writes its own default \
                 file, or the file a template names ({})",
                TEMPLATE_FIELDS.join(", ")
            )));
        }
        let listed = compute_adapters()?;
        if concurrent {
            return self.run_concurrent(&listed, &out);
        }
        let paths = adapter_paths(&listed, self.settings(None).sizing(), &self.destination);
        let mut ended = Ended::Measured;
        for (adapter, path) in listed.iter().zip(paths) {
            if stop::interrupted() {
                break;
            }
            stderrln!(
                "membench: adapter {} ({} of {}): {}",
                adapter.index,
                adapter.index + 1,
                listed.len(),
                gpu::describe(&adapter.info)
            );
            let ran = self.run_on(
                Some(&adapter.index.to_string()),
                &Destination::File(path),
                None,
                &out,
            );
            ended = ended.worse(adapter_ended(adapter.index, &adapter.info, ran));
        }
        Ok(ended)
    }

    /// `--adapter all --concurrent`: every adapter in a thread of its own, each case
    /// measured on all of them at once. An adapter that fails, or has measured its last
    /// case, leaves the others measuring.
    fn run_concurrent(&self, listed: &[Listed], out: &Out) -> Result<Ended> {
        if let [only] = listed {
            return Err(Error::Usage(format!(
                "--concurrent needs two adapters that compute, or more; there is one: {}",
                gpu::describe(&only.info)
            )));
        }
        let adapters = u32::try_from(listed.len())
            .map_err(|e| Error::Internal(format!("counting the adapters: {e}")))?;
        // A filter that matches nothing is refused once, not per adapter.
        suite::select(&Sizing::nominal(self.settings.quick), &self.filters)?;
        let paths = adapter_paths(
            listed,
            self.settings(Some(adapters)).sizing(),
            &self.destination,
        );
        let lockstep = Lockstep::new(listed.len());
        let endings: Vec<Ended> = std::thread::scope(|scope| {
            let threads: Vec<_> = lockstep
                .parties()
                .into_iter()
                .zip(paths)
                .enumerate()
                .map(|(position, (party, path))| {
                    let adapter = &listed[position];
                    scope.spawn(move || {
                        let concurrent = Concurrent {
                            index: adapter.index,
                            adapters,
                            party,
                        };
                        let ran = self.run_on(
                            Some(&adapter.index.to_string()),
                            &Destination::File(path),
                            Some(&concurrent),
                            out,
                        );
                        adapter_ended(adapter.index, &adapter.info, ran)
                    })
                })
                .collect();
            threads
                .into_iter()
                // A panic has printed its message; its adapter failed.
                .map(|thread| thread.join().unwrap_or(Ended::Failed))
                .collect()
        });
        Ok(endings.into_iter().fold(Ended::Measured, Ended::worse))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_templates_name_the_host_gpu_and_adapter() {
        let gpu = results::GpuIdentity {
            host: "node-07.cluster".to_owned(),
            gpu_uuid: "GPU-8f2e1c3a-516b-4d2e-9a0b-7c1122334455".to_owned(),
            pci_bus_id: "0000:07:00.0".to_owned(),
            pcie_link: "gen5x16".to_owned(),
        };
        let identity = results::Identity {
            device: "NVIDIA H100 80GB HBM3".to_owned(),
            gpu_uuid: gpu.gpu_uuid.clone(),
            backend: "vulkan".to_owned(),
            sizing: RunSizing::default(),
        };
        let template = std::path::Path::new("out/{host}-{uuid}-{adapter}.csv");
        assert!(is_template(template) && !is_template(std::path::Path::new("out/a.csv")));
        assert_eq!(
            expand(template, &identity, &gpu, 3),
            PathBuf::from("out/node-07-cluster-8f2e1c3a-3.csv")
        );
        assert_eq!(
            identity.default_path(),
            PathBuf::from("results/nvidia-h100-80gb-hbm3-8f2e1c3a-vulkan.csv")
        );
        // Without a UUID, the device's name: a word that every run of it repeats.
        let software = results::Identity {
            gpu_uuid: "-".to_owned(),
            ..identity
        };
        assert_eq!(
            expand(template, &software, &gpu, 0),
            PathBuf::from("out/node-07-cluster-nvidia-h100-80gb-hbm3-0.csv")
        );
        // A directory that is not UTF-8 is kept byte for byte.
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt as _;
            let dir = std::ffi::OsStr::from_bytes(b"out-\xff\xfe");
            let template = std::path::Path::new(dir).join("{uuid}.csv");
            assert!(is_template(&template));
            assert_eq!(
                expand(&template, &software, &gpu, 0),
                std::path::Path::new(dir).join("nvidia-h100-80gb-hbm3.csv")
            );
        }
    }

    #[test]
    fn matrix_sizes_parse_and_bad_ones_say_why() {
        assert_eq!(parse_matrix("1000x3000"), Ok((1000, 3000)));
        assert_eq!(parse_matrix("64X32"), Ok((64, 32)));
        assert!(parse_matrix("4096").unwrap_err().contains("NXxNY"));
        assert!(parse_matrix("0x8").unwrap_err().contains("positive"));
        assert!(parse_matrix("ax8").unwrap_err().contains("`a`"));
    }

    #[test]
    fn flags_that_contradict_each_other_are_refused() {
        assert_eq!(Adapters::of(None, false).unwrap(), Adapters::One(None));
        assert_eq!(
            Adapters::of(Some("all".to_owned()), true).unwrap(),
            Adapters::AllAtOnce
        );
        assert!(Adapters::of(Some("0".to_owned()), true).is_err());
        let stdout = Destination::of(Some(PathBuf::from("-")), None).unwrap();
        assert_eq!(stdout, Destination::Stdout(results::Format::Csv));
        assert!(
            Destination::of(Some(PathBuf::from("a.csv")), Some(results::Format::Json)).is_err()
        );
        assert!(check_settings(&[Api::Wgpu], &[Build::Rolled]).is_err());
    }

    #[test]
    fn several_runs_end_as_the_last_that_did_not_measure_everything() {
        let endings = [
            Ended::Failed,
            Ended::Measured,
            Ended::Stopped(15),
            Ended::Measured,
        ];
        let ended = endings.into_iter().fold(Ended::Measured, Ended::worse);
        assert_eq!(ended, Ended::Stopped(15));
        assert_eq!(ended.exit_status(), 143);
        assert_eq!(Ended::Stopped(300).exit_status(), u8::MAX);
        assert_eq!(Ended::Failed.exit_status(), 1);
    }
}
