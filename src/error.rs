//! The library's one error type.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(
        "no GPU adapter found{0}; install a Vulkan driver (e.g. mesa-vulkan-drivers) or check WGPU_BACKEND"
    )]
    NoAdapter(String),
    /// An environment variable membench or wgpu reads holds a value it cannot take.
    #[error("{0}")]
    Environment(String),
    #[error("adapter {wanted:?} not found; available adapters:\n{available}")]
    AdapterNotFound { wanted: String, available: String },
    /// `--adapter` empty, or a part of the names of several adapters: never the first.
    #[error(
        "adapter {wanted:?} does not name one adapter: give an index or a part of one \
         name; it matches:\n{matching}"
    )]
    AdapterAmbiguous { wanted: String, matching: String },
    /// The adapter runs no compute shaders: skipped by `--adapter all`.
    #[error("{adapter} runs no compute shaders{why}")]
    NoCompute { adapter: String, why: String },
    #[error("could not open the device: {0}")]
    RequestDevice(#[from] wgpu::RequestDeviceError),
    #[error("GPU error: {0}")]
    Gpu(String),
    /// The CUDA backend cannot run here at all (no driver, no NVRTC, too old a driver,
    /// no matching device): the run goes on without it.
    #[error("CUDA backend unavailable: {0}")]
    CudaUnavailable(String),
    /// A CUDA call or an NVRTC compilation failed for one case.
    #[error("CUDA: {0}")]
    Cuda(String),
    #[error("the device did not finish within {0:?} (hung or lost)")]
    Timeout(std::time::Duration),
    #[error("buffer mapping failed: {0}")]
    Map(String),
    #[error("verification failed: {0}")]
    Verification(String),
    #[error("{what} of {requested} bytes exceeds the device limit of {limit} bytes")]
    SizeLimit {
        what: &'static str,
        requested: u64,
        limit: u64,
    },
    #[error("malformed case: {0}")]
    Case(String),
    /// A command asked for what it cannot do (a format it does not print).
    #[error("{0}")]
    Usage(String),
    #[error("no experiment matches {0:?}; `membench list` shows the registry")]
    NoMatch(String),
    #[error("an empty filter would match every case: leave --filter out to take them all")]
    EmptyFilter,
    #[error("internal error: {0}")]
    Internal(String),
    /// The signal handlers could not be installed.
    #[error("{0}")]
    Signals(String),
    /// A command's output (stdout) took not all it was given: a closed pipe, a full disk.
    /// Not `source`, as [`Error::Io`].
    #[error("writing to stdout: {0}")]
    Stdout(std::io::Error),
    #[error("{}: {message}", crate::text::shown_path(path))]
    Results { path: PathBuf, message: String },
    /// Rows that could not be written where they were going: why, what was saved, and
    /// where they are instead. Not `source`: a stdout that broke must not read as a
    /// reader that had all it wanted.
    #[error("{error}; {kept}")]
    Unsaved { error: Box<Error>, kept: String },
    /// Not `source`: the message says it already, and a chain would say it twice.
    #[error("{}: {error}", crate::text::shown_path(path))]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
}

impl Error {
    /// What turns an I/O error on `path` into an [`Error::Io`] (for `map_err`).
    pub fn io(path: &std::path::Path) -> impl Fn(std::io::Error) -> Error + use<> {
        let path = path.to_owned();
        move |error| Error::Io {
            path: path.clone(),
            error,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
