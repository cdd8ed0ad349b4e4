//! The library's one error type.

use std::path::PathBuf;

/// What can go wrong in the library; each message is one line a user can act on.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No adapter at all: the text names what was looked for.
    #[error(
        "no GPU adapter found{0}; install a Vulkan driver (e.g. mesa-vulkan-drivers) or check WGPU_BACKEND"
    )]
    NoAdapter(String),
    /// An environment variable membench or wgpu reads holds a value it cannot take.
    #[error("{0}")]
    Environment(String),
    /// `--adapter` names no adapter present.
    #[error("adapter {wanted:?} not found; available adapters:\n{available}")]
    AdapterNotFound {
        /// What `--adapter` asked for.
        wanted: String,
        /// The adapters present, one a line.
        available: String,
    },
    /// `--adapter` empty, or a part of the names of several adapters: never the first.
    #[error(
        "adapter {wanted:?} does not name one adapter: give an index or a part of one \
         name; it matches:\n{matching}"
    )]
    AdapterAmbiguous {
        /// What `--adapter` asked for.
        wanted: String,
        /// The adapters it matches, one a line.
        matching: String,
    },
    /// The adapter runs no compute shaders: skipped by `--adapter all`.
    #[error("{adapter} runs no compute shaders{why}")]
    NoCompute {
        /// The adapter's name.
        adapter: String,
        /// Why, with its leading separator; empty where the driver gives no reason.
        why: String,
    },
    /// wgpu refused the device the adapter offered.
    #[error("could not open the device: {0}")]
    RequestDevice(#[from] wgpu::RequestDeviceError),
    /// wgpu reported an error while building or running work.
    #[error("GPU error: {0}")]
    Gpu(String),
    /// The CUDA backend cannot run here at all (no driver, no NVRTC, too old a driver,
    /// no matching device): the run goes on without it.
    #[error("CUDA backend unavailable: {0}")]
    CudaUnavailable(String),
    /// A CUDA call or an NVRTC compilation failed for one case.
    #[error("CUDA: {0}")]
    Cuda(String),
    /// The device did not answer in time.
    #[error("the device did not finish within {0:?} (hung or lost)")]
    Timeout(std::time::Duration),
    /// A buffer could not be mapped for reading back.
    #[error("buffer mapping failed: {0}")]
    Map(String),
    /// The output differs from the CPU reference: the case has no bandwidth.
    #[error("verification failed: {0}")]
    Verification(String),
    #[error("{what} of {requested} bytes exceeds the device limit of {limit} bytes")]
    /// A buffer or binding larger than the device allows.
    SizeLimit {
        /// What was too large (a buffer, a binding).
        what: &'static str,
        /// Its size in bytes.
        requested: u64,
        /// The device's limit in bytes.
        limit: u64,
    },
    /// A case whose declaration does not hold together (a registry bug).
    #[error("malformed case: {0}")]
    Case(String),
    /// A command asked for what it cannot do (a format it does not print).
    #[error("{0}")]
    Usage(String),
    /// A `--filter` that selects nothing.
    #[error("no experiment matches {0:?}; `membench list` shows the registry")]
    NoMatch(String),
    /// An empty `--filter`.
    #[error("an empty filter would match every case: leave --filter out to take them all")]
    EmptyFilter,
    /// A broken invariant of membench itself.
    #[error("internal error: {0}")]
    Internal(String),
    /// The signal handlers could not be installed.
    #[error("{0}")]
    Signals(String),
    /// A command's output (stdout) took not all it was given: a closed pipe, a full disk.
    /// Not `source`, as [`Error::Io`].
    #[error("writing to stdout: {0}")]
    Stdout(std::io::Error),
    /// A results file membench cannot take, and why.
    #[error("{}: {message}", crate::text::shown_path(path))]
    Results {
        /// The file.
        path: PathBuf,
        /// What is wrong with it, with the line where one is to blame.
        message: String,
    },
    /// Rows that could not be written where they were going: why, what was saved, and
    /// where they are instead. Not `source`: a stdout that broke must not read as a
    /// reader that had all it wanted.
    #[error("{error}; {kept}")]
    Unsaved {
        /// Why the rows could not be written.
        error: Box<Error>,
        /// Where the rows went instead.
        kept: String,
    },
    /// Not `source`: the message says it already, and a chain would say it twice.
    #[error("{}: {error}", crate::text::shown_path(path))]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// What the system said.
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

/// The library's result: [`Error`] unless said otherwise.
pub type Result<T, E = Error> = std::result::Result<T, E>;
