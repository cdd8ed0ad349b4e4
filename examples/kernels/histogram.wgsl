// A histogram of n integers into BINS bins: each workgroup counts into its own bins
// in workgroup memory with atomics, then adds them to the global bins with atomics.
// The grid may be 2-D (more workgroups than a dimension holds): invocation (x, y)
// takes value y * (workgroups in x * WG) + x.

override BINS: u32 = 256u;
override WG: u32 = 256u;

@group(0) @binding(0)
var<storage, read> values: array<u32>;
@group(0) @binding(1)
var<storage, read_write> bins: array<atomic<u32>>;

var<workgroup> local_bins: array<atomic<u32>, BINS>;

@compute @workgroup_size(WG)
fn main(
    @builtin(global_invocation_id) id: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    for (var b = lane; b < BINS; b += WG) {
        atomicStore(&local_bins[b], 0u);
    }
    workgroupBarrier();
    let i = id.y * (groups.x * WG) + id.x;
    if i < arrayLength(&values) {
        atomicAdd(&local_bins[values[i] % BINS], 1u);
    }
    workgroupBarrier();
    for (var b = lane; b < BINS; b += WG) {
        atomicAdd(&bins[b], atomicLoad(&local_bins[b]));
    }
}
