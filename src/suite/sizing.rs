//! Sizing: the limits and settings that size cases for one device, the one rule for
//! what a device cannot run, and the layout of grids beyond one dimension's limit.

/// The device memory blocks wgpu's allocator shares among buffers: 4 MiB, the
/// smallest it takes, so that every larger buffer gets a device allocation of its own.
/// With the default blocks (128–256 MiB, shared by the buffers that fit), where a
/// case's buffers landed depended on the cases run before it, and `reduce/neighbored`
/// took three times as long after the `smem_pad` transposes as alone; with blocks of
/// their own, the same in every order (docs/findings.md, Where a buffer lies can
/// matter more than noise).
pub(crate) const SHARED_BLOCK_BYTES: u64 = 4 << 20;

/// The largest binding a case sizes, in bytes: `u32::MAX` words, so that a uniform
/// counts any binding's 4-byte elements in a u32 ([`count`]).
pub(crate) const MAX_BINDING_BYTES: u64 = 4 * u32::MAX as u64;

/// `n` elements of one binding as the u32 a uniform counts them in. It never
/// saturates: a binding's elements are 4 bytes or more, and it holds at most
/// [`MAX_BINDING_BYTES`].
pub(crate) fn count(n: u64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The limits and settings that size cases for one device.
#[derive(Clone, Debug)]
pub struct Sizing {
    /// Shrink every working set for a fast correctness run (CI, lavapipe).
    pub quick: bool,
    /// Requested size of the main buffer of streaming experiments, in bytes.
    pub buffer_bytes: Option<u64>,
    /// A software adapter (lavapipe): its timings only show that the suite runs.
    pub software: bool,
    /// The device's largest storage binding, in bytes, at most [`MAX_BINDING_BYTES`].
    pub max_binding_bytes: u64,
    /// The device's most invocations in one workgroup.
    pub max_workgroup_invocations: u32,
    /// The device's most workgroups along one dimension.
    pub max_workgroups_per_dimension: u32,
    /// Bytes of `var<workgroup>` storage one workgroup may use.
    pub max_workgroup_storage_bytes: u32,
    /// Storage buffers the host may map (`Features::MAPPABLE_PRIMARY_BUFFERS`).
    pub mappable_storage: bool,
    /// Why host memory cannot be imported as a buffer (`VK_EXT_external_memory_host`),
    /// where it cannot.
    pub host_import_skip: Option<String>,
    /// The adapter's subgroup sizes (smallest, largest); `None` without
    /// `Features::SUBGROUP`.
    pub subgroup_sizes: Option<(u32, u32)>,
    /// The adapter runs f16 arithmetic (`Features::SHADER_F16`).
    pub shader_f16: bool,
    /// Requested matrix size (columns, rows) of the 2-D experiments (`--size`).
    pub matrix: Option<(u32, u32)>,
    /// The largest width and height of a 2-D texture (`max_texture_dimension_2d`).
    pub max_texture_dimension_2d: u32,
}

impl Sizing {
    /// Default bytes per buffer for streaming (DRAM) experiments: far beyond any L2
    /// (50-60 MB on H100/H200) at full size, small with `--quick`.
    const FULL_BUFFER_BYTES: u64 = 256 << 20;
    /// Software adapters run a scalar copy at about 1 GB/s on a few cores: a full run
    /// at GPU sizes would take most of an hour.
    const SOFTWARE_BUFFER_BYTES: u64 = 16 << 20;
    const QUICK_BUFFER_BYTES: u64 = 4 << 20;

    /// The largest working set of a sweep before device limits: `--buffer-mib` if
    /// given, else `quick`, `software` or `full` by the kind of run.
    pub(crate) fn sweep_max_bytes(&self, full: u64, software: u64, quick: u64) -> u64 {
        self.buffer_bytes.unwrap_or(if self.quick {
            quick
        } else if self.software {
            software
        } else {
            full
        })
    }

    /// Nominal limits of a large GPU, for listing cases without a device.
    pub fn nominal(quick: bool) -> Self {
        Sizing {
            quick,
            buffer_bytes: None,
            software: false,
            max_binding_bytes: 2 << 30,
            max_workgroup_invocations: 1024,
            max_workgroups_per_dimension: 65535,
            max_workgroup_storage_bytes: 48 << 10,
            mappable_storage: true,
            host_import_skip: None,
            subgroup_sizes: Some((32, 32)),
            shader_f16: true,
            matrix: None,
            // What wgpu reports for an H100's or H200's Vulkan adapter.
            max_texture_dimension_2d: 32768,
        }
    }

    /// Why a 2-D texture of `width` × `height` texels cannot be made here, if it cannot.
    pub(crate) fn texture_skip(&self, width: u32, height: u32) -> Option<String> {
        let max = self.max_texture_dimension_2d;
        (width > max || height > max).then(|| {
            format!("a {width}x{height} texture exceeds the adapter's largest 2-D texture ({max})")
        })
    }

    /// Why a kernel that needs subgroup operations cannot run here, if it cannot.
    pub(crate) fn subgroup_skip(&self) -> Option<String> {
        self.subgroup_sizes
            .is_none()
            .then(|| "the adapter does not offer subgroup operations (Features::SUBGROUP)".into())
    }

    /// Why a kernel that computes in f16 cannot run here, if it cannot.
    pub fn f16_skip(&self) -> Option<String> {
        (!self.shader_f16)
            .then(|| "the adapter does not offer f16 arithmetic (Features::SHADER_F16)".into())
    }

    /// Why a workgroup of `invocations` using `storage_bytes` of workgroup memory
    /// cannot run here, if it cannot.
    pub(crate) fn workgroup_skip(&self, invocations: u32, storage_bytes: u32) -> Option<String> {
        if invocations > self.max_workgroup_invocations {
            Some(format!(
                "workgroup of {invocations} exceeds the adapter's {} invocations",
                self.max_workgroup_invocations
            ))
        } else if storage_bytes > self.max_workgroup_storage_bytes {
            Some(format!(
                "{storage_bytes} bytes of workgroup memory exceed the adapter's {}",
                self.max_workgroup_storage_bytes
            ))
        } else {
            None
        }
    }

    /// Bytes of the main buffer of a streaming experiment: the requested size, or the
    /// default capped by the device's binding limit (checked against it elsewhere).
    pub(crate) fn stream_buffer_bytes(&self) -> u64 {
        let default = if self.quick {
            Self::QUICK_BUFFER_BYTES
        } else if self.software {
            Self::SOFTWARE_BUFFER_BYTES
        } else {
            Self::FULL_BUFFER_BYTES
        };
        self.buffer_bytes
            .unwrap_or_else(|| default.min(self.max_binding_bytes))
    }
}

/// How a grid wider than one dimension's workgroup limit is laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grid {
    /// One row of workgroups: only possible up to the per-dimension limit.
    OneD,
    /// Rows of at most the per-dimension limit; kernels linearise
    /// `wid.y * nwg.x + wid.x` and drop the overhang with their bounds check.
    TwoD,
}

impl Grid {
    /// The name the CSV and the tables use.
    pub fn label(self) -> &'static str {
        match self {
            Grid::OneD => "1d",
            Grid::TwoD => "2d",
        }
    }

    /// Workgroup counts covering `groups` workgroups, or why this layout cannot.
    pub fn workgroups(self, groups: u64, max_per_dimension: u32) -> Result<[u32; 3], String> {
        let max = u64::from(max_per_dimension);
        let (x, y) = match self {
            Grid::OneD if groups <= max => (groups, 1),
            Grid::OneD => {
                return Err(format!(
                    "a 1-D dispatch of {groups} workgroups exceeds the limit of {max} per dimension"
                ));
            }
            Grid::TwoD => {
                let rows = groups.div_ceil(max).max(1);
                (groups.div_ceil(rows), rows)
            }
        };
        match (u32::try_from(x), u32::try_from(y)) {
            (Ok(x), Ok(y)) if y <= max_per_dimension => Ok([x, y, 1]),
            _ => Err(format!("{groups} workgroups do not fit a 2-D dispatch")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_d_grid_covers_and_stays_within_limits() {
        for groups in [1u64, 65535, 65536, 262_144, 1 << 20, 3_000_001] {
            let [x, y, z] = Grid::TwoD.workgroups(groups, 65535).unwrap_or([0; 3]);
            let total = u64::from(x) * u64::from(y) * u64::from(z);
            assert!(total >= groups, "{groups}: {x}x{y} too small");
            assert!(
                total - groups < u64::from(y),
                "{groups}: {x}x{y} wastes a row"
            );
            assert!(x <= 65535 && y <= 65535);
        }
    }

    #[test]
    fn one_d_grid_refuses_beyond_the_limit() {
        assert_eq!(Grid::OneD.workgroups(65535, 65535), Ok([65535, 1, 1]));
        assert!(Grid::OneD.workgroups(65536, 65535).is_err());
    }
}
