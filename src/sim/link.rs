//! How fast bytes cross between host and device, outside the device's memory: a PCIe
//! link, at the rate the PCI-SIG specifications give it or as a `pcie_link` column
//! names it; or, on a software adapter, whose device memory is host memory, a host
//! thread's copy; and what each api's transfers cost besides. The device presets and
//! the transfer model both read them.

use crate::suite::Api;

/// One host thread's copy rate, GB/s. A core keeps about 10 cache-line misses in
/// flight (its L1's fill buffers), so one thread copies about 10 × 64 bytes per memory
/// latency, about 80 ns on a two-socket server: 8 GB/s. Source: John McCalpin's reply
/// in "Single-threaded memory performance for dual socket Xeon E5-* systems" (Intel
/// Software Tuning forum, 2014): single-thread bandwidth is concurrency-limited, 10 L1
/// misses per latency of 69-79 ns.
pub(crate) const HOST_COPY_GBPS_PER_THREAD: f64 = 8.0;

/// One host thread's copy rate where the bytes it reads sit in the host's last-level
/// cache, GB/s: the same 10 misses in flight as [`HOST_COPY_GBPS_PER_THREAD`], each
/// an L3 hit of about 40 ns rather than a memory latency of 80 (Chips and Cheese,
/// "Sapphire Rapids: Golden Cove Hits Servers", 2023, measures over 30 ns for a server
/// mesh's L3): 16 GB/s.
pub(crate) const HOST_CACHED_COPY_GBPS_PER_THREAD: f64 = 10.0 * 64.0 / 40.0;

/// The most bytes a host copy reads that the host's last-level cache keeps between a
/// sample's repeats. Estimate: a server socket's L3 holds 32 MB (an AMD EPYC core
/// complex's) to 105 MB (a 56-core Xeon of the 4th generation, 1.875 MB a core, in
/// Intel's article 000027820); the smaller is taken.
pub(crate) const HOST_CACHE_BYTES: f64 = 32.0 * 1024.0 * 1024.0;

/// The host's page, bytes: the unit memory is pinned in (x86-64's base page; CUDA
/// asks registered ranges to be aligned to it, 4 KB, in `cuMemHostRegister`'s
/// documentation).
pub(crate) const HOST_PAGE_BYTES: f64 = 4096.0;

/// Pinning one host page for a transfer and releasing it, µs. Estimate: pinning takes
/// a reference on the page's `struct page` and writes its address into the driver's
/// page list for the GPU, unpinning drops the reference: about three cache misses a
/// page, each a memory latency of about 80 ns (the source of
/// [`HOST_COPY_GBPS_PER_THREAD`]).
pub(crate) const PIN_US_PER_PAGE: f64 = 3.0 * 0.080;

/// A 256-byte payload's share of a PCIe packet (estimate: about 24 bytes of header,
/// sequence number, CRC and framing per packet).
const PCIE_PAYLOAD_SHARE: f64 = 256.0 / 280.0;

/// The share of the bus's DMA rate that a kernel's reads of host memory reach: each
/// read completion carries one 128-byte line (the L2's), so about 24 bytes of header
/// and framing go with 128 bytes of payload rather than 256.
pub(crate) const READ_COMPLETION_SHARE: f64 = (128.0 / 152.0) / PCIE_PAYLOAD_SHARE;

/// PCIe x16 links, GB/s: lanes × transfer rate × line-code efficiency / 8 bits, × the
/// payload's share. PCI-SIG base specifications: 8, 16 and 32 GT/s a lane for
/// generations 3 to 5, 128b/130b coding.
pub(crate) const PCIE3_X16_GBPS: f64 = 16.0 * 8.0 * (128.0 / 130.0) / 8.0 * PCIE_PAYLOAD_SHARE;
pub(crate) const PCIE4_X16_GBPS: f64 = 2.0 * PCIE3_X16_GBPS;
pub(crate) const PCIE5_X16_GBPS: f64 = 4.0 * PCIE3_X16_GBPS;

/// The link rate (GB/s) of a `pcie_link` column (`gen5x16`: generation and width), or
/// `None` for an empty or unknown one.
pub(crate) fn pcie_link_gbps(pcie_link: &str) -> Option<f64> {
    let (generation, width) = pcie_link.strip_prefix("gen")?.split_once('x')?;
    let width: f64 = width.parse().ok()?;
    // GT/s a lane and the line code's efficiency (8b/10b to generation 2).
    let (rate, code) = match generation {
        "1" => (2.5, 0.8),
        "2" => (5.0, 0.8),
        "3" => (8.0, 128.0 / 130.0),
        "4" => (16.0, 128.0 / 130.0),
        "5" => (32.0, 128.0 / 130.0),
        _ => return None,
    };
    (width > 0.0).then(|| width * rate * code / 8.0 * PCIE_PAYLOAD_SHARE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pcie_links_are_read_from_the_identity_column() {
        let gen5 = pcie_link_gbps("gen5x16").unwrap();
        assert!((gen5 - PCIE5_X16_GBPS).abs() < 1e-9 && (57.0..58.0).contains(&gen5));
        assert!((pcie_link_gbps("gen4x8").unwrap() - PCIE3_X16_GBPS).abs() < 1e-9);
        for bad in ["", "gen9x16", "x16", "gen5x0", "gen5"] {
            assert_eq!(pcie_link_gbps(bad), None, "{bad}");
        }
    }
}

/// One api's costs of moving bytes, each a term of the transfer model's time
/// ([`crate::sim::transfer`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct ApiCosts {
    /// Submitting a transfer and the host seeing it finish, µs (host clock).
    pub(crate) submit_us: f64,
    /// A DMA copy's rate across the link, GB/s; `None`: the device's bus
    /// ([`crate::sim::device::DeviceModel::link_gbps`]).
    pub(crate) link_gbps: Option<f64>,
    /// One command (a copy or a dispatch) between two GPU timestamps, µs (GPU clock).
    pub(crate) command_us: f64,
    /// Each further copy of a batch in one submission or stream, µs (host clock);
    /// `None`: one command's time (the GPU runs a submission's copies one by one).
    pub(crate) next_copy_us: Option<f64>,
    /// A copy within device memory, GB/s of bytes read and written; `None`: the
    /// DRAM's copy rate ([`crate::sim::device::DeviceModel::dram_gbps`]).
    pub(crate) device_copy_gbps: Option<f64>,
    /// Page-locking host memory for a transfer and releasing it after, µs (host
    /// clock), besides [`PIN_US_PER_PAGE`] for each page: the driver calls' own cost.
    pub(crate) register_us: f64,
}

/// The transfer model's costs, per api.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct TransferCosts {
    pub(crate) wgpu: ApiCosts,
    pub(crate) cuda: ApiCosts,
}

impl TransferCosts {
    pub(crate) fn of_mut(&mut self, api: Api) -> &mut ApiCosts {
        match api {
            Api::Cuda => &mut self.cuda,
            _ => &mut self.wgpu,
        }
    }

    pub(crate) fn of(&self, api: Api) -> &ApiCosts {
        match api {
            Api::Cuda => &self.cuda,
            _ => &self.wgpu,
        }
    }
}

/// Every preset's costs until a run's rows measure them. Estimates: a `cudaMemcpy` of
/// a few bytes takes about 10 µs, a queued one about 2 µs more; a Vulkan submission
/// and its fence wait about 50 µs; a command between timestamps a few µs; registering
/// and unregistering host memory two calls into the kernel driver that change the
/// GPU's page tables, about 100 µs (wgpu imports its host memory off the clock).
pub(crate) const ESTIMATED_COSTS: TransferCosts = TransferCosts {
    wgpu: ApiCosts {
        submit_us: 50.0,
        link_gbps: None,
        command_us: 3.0,
        next_copy_us: None,
        device_copy_gbps: None,
        register_us: 0.0,
    },
    cuda: ApiCosts {
        submit_us: 10.0,
        link_gbps: None,
        command_us: 5.0,
        next_copy_us: Some(2.0),
        device_copy_gbps: None,
        register_us: 100.0,
    },
};
