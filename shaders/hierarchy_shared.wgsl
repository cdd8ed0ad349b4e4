// hierarchy/shared: every workgroup reads one chunk of WORKGROUP_SIZE vec4<u32>s of one shared buffer per pass, a different chunk each pass, and writes the wrapping sum of what it read.
//
// Workgroup g reads chunk (g + pass × step) mod chunks: neighbouring workgroups (which
// share an SM) read different chunks, and step (about 0.618 × chunks) keeps an SM from
// coming back to a chunk it read lately, so its L1 seldom serves: the L2 does while it
// holds the buffer, then DRAM.
#if L1_BYPASS
//
// hierarchy/shared_l1_bypass is this kernel with an L1 bypass in its CUDA twin
// (`__ldcg`). WGSL has no cache hint, so wgpu does not run it.
#endif

struct Params {
    chunks: u32,
    passes: u32,
    step: u32,
}

@group(0) @binding(0)
var<uniform> params: Params;
@group(0) @binding(1)
var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(2)
var<storage, read_write> sums: array<u32>;

override WORKGROUP_SIZE: u32 = 256;

#import workgroup_index
#import workgroup_sum

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let group = workgroup_index(wid, nwg);
    var chunk = group % params.chunks;
    var acc = vec4<u32>();
    for (var round = 0u; round < params.passes; round++) {
        acc += src[chunk * WORKGROUP_SIZE + lid];
        // step < chunks: one wrap at most, and no division in the loop.
        chunk += params.step;
        if chunk >= params.chunks {
            chunk -= params.chunks;
        }
    }
    let sum = workgroup_sum(lid, acc.x + acc.y + acc.z + acc.w);
    if lid == 0u {
        sums[group] = sum;
    }
}
