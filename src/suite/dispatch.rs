//! How a case's repetitions are issued to the GPU: back to back in one compute pass
//! (every case but the `launch` family's), or one of the ways the `launch` family
//! prices a dispatch, a pass, a submission and CUDA's graphs.

/// How the clock issues a case's repetitions. Each repetition is one dispatch of the
/// case's grid; the sample is timed on the GPU clock unless [`Dispatch::host_clock`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Dispatch {
    /// Back to back in one compute pass, every dispatch on the case's own buffers
    /// (CUDA: launches on one stream). wgpu puts a barrier between dispatches that
    /// write one `read_write` buffer.
    #[default]
    Pass,
    /// Back to back in one compute pass, each dispatch writing an output buffer of its
    /// own: no barrier between them.
    Apart,
    /// One compute pass per dispatch, all in one encoder, each writing its own output.
    PassEach,
    /// As [`Dispatch::Apart`], each dispatch indirect (`dispatch_workgroups_indirect`),
    /// which wgpu validates with a dispatch of its own.
    Indirect,
    /// One submission per dispatch, each waited for (host clock; encoding off it).
    SubmitEach,
    /// One submission per dispatch, all submitted, then one wait (host clock).
    SubmitAll,
    /// CUDA: the launches captured in a graph, which is launched (GPU clock).
    Graph,
}

impl Dispatch {
    /// Whether the sample is timed on the host clock around submission and wait.
    pub fn host_clock(self) -> bool {
        matches!(self, Dispatch::SubmitEach | Dispatch::SubmitAll)
    }

    /// What WebGPU has no API for in this way of issuing, if anything.
    pub(crate) fn wgsl_lacks(self) -> Option<&'static str> {
        (self == Dispatch::Graph).then_some("CUDA graphs (cuStreamBeginCapture, cuGraphLaunch)")
    }

    /// What CUDA has no counterpart for, if anything: a compute pass, its barriers and
    /// wgpu's indirect validation are wgpu's.
    #[cfg(feature = "cuda")]
    pub(crate) fn cuda_lacks(self) -> Option<&'static str> {
        match self {
            Dispatch::Apart | Dispatch::PassEach | Dispatch::Indirect => {
                Some("compute passes and wgpu's barriers between them are wgpu's")
            }
            Dispatch::Pass | Dispatch::SubmitEach | Dispatch::SubmitAll | Dispatch::Graph => None,
        }
    }
}
