// hierarchy/dram_write: a grid-stride loop writes a known pattern, a hash of each index, to every vec4<u32> of a buffer far larger than the L2, reading nothing (BabelStream's write-only split).

struct Params {
    vec4s: u32,
}

@group(0) @binding(0)
var<uniform> params: Params;
@group(0) @binding(1)
var<storage, read_write> dst: array<vec4<u32>>;

override WORKGROUP_SIZE: u32 = 256;

#import workgroup_index

// Varied, non-zero words from a few integer operations: the pattern must cost less
// than the store it feeds, and must not compress.
fn pattern(i: u32) -> vec4<u32> {
    let h = (i ^ 0x9E3779B9u) * 0x85EBCA6Bu;
    return vec4<u32>(h, h ^ 0xC2B2AE35u, h * 0x27D4EB2Fu, ~h) | vec4<u32>(1u);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let grid = nwg.x * nwg.y * WORKGROUP_SIZE;
    for (var i = workgroup_index(wid, nwg) * WORKGROUP_SIZE + lid; i < params.vec4s; i += grid) {
        dst[i] = pattern(i);
    }
}
