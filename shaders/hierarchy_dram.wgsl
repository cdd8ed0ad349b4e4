// hierarchy/dram_*, persist: a grid-stride loop over a vec4<u32> buffer far larger than the L2.
//
// The kernels made from this file (see `permutations`), BabelStream's three splits and one
// more:
// - hierarchy_dram_read (DRAM_READ): reads every vec4 once (the read-only split);
// - hierarchy_dram_write (DRAM_WRITE): writes a known pattern, a hash of each index, to
//   every vec4, reading nothing (the write-only split);
// - hierarchy_dram_copy (DRAM_COPY): copies every vec4 (the copy);
// - hierarchy_persist (PERSIST): reads every vec4 of a streaming buffer once and, beside
//   each, one of a hot buffer that fits the L2, read round and round. The CUDA twin may
//   keep the hot buffer in the L2 through a persisting access policy window, which WebGPU
//   has no API for.
// With SUMS (dram_read, persist) each workgroup writes the wrapping sum of what it read.

struct Params {
    vec4s: u32,
#if PERSIST
    hot_vec4s: u32,
#endif
}

@group(0) @binding(0)
var<uniform> params: Params;
#if DRAM_READ
@group(0) @binding(1)
var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(2)
var<storage, read_write> sums: array<u32>;
#endif
#if DRAM_WRITE
@group(0) @binding(1)
var<storage, read_write> dst: array<vec4<u32>>;
#endif
#if DRAM_COPY
@group(0) @binding(1)
var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(2)
var<storage, read_write> dst: array<vec4<u32>>;
#endif
#if PERSIST
@group(0) @binding(1)
var<storage, read> stream: array<vec4<u32>>;
@group(0) @binding(2)
var<storage, read> hot: array<vec4<u32>>;
@group(0) @binding(3)
var<storage, read_write> sums: array<u32>;
#endif

override WORKGROUP_SIZE: u32 = 256;

#import workgroup_index
#if SUMS
#import workgroup_sum
#endif
#if DRAM_WRITE

// Varied, non-zero words from a few integer operations: the pattern must cost less
// than the store it feeds, and must not compress.
fn pattern(i: u32) -> vec4<u32> {
    let h = (i ^ 0x9E3779B9u) * 0x85EBCA6Bu;
    return vec4<u32>(h, h ^ 0xC2B2AE35u, h * 0x27D4EB2Fu, ~h) | vec4<u32>(1u);
}
#endif

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let group = workgroup_index(wid, nwg);
    let grid = nwg.x * nwg.y * WORKGROUP_SIZE;
#if SUMS
    var acc = vec4<u32>();
#endif
    for (var i = group * WORKGROUP_SIZE + lid; i < params.vec4s; i += grid) {
#if DRAM_READ
        acc += src[i];
#endif
#if DRAM_WRITE
        dst[i] = pattern(i);
#endif
#if DRAM_COPY
        dst[i] = src[i];
#endif
#if PERSIST
        acc += stream[i] + hot[i % params.hot_vec4s];
#endif
    }
#if SUMS
    let sum = workgroup_sum(lid, acc.x + acc.y + acc.z + acc.w);
    if lid == 0u {
        sums[group] = sum;
    }
#endif
}
