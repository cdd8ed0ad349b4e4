// hierarchy/window, shared: workgroups read one buffer over and over, each writing the sum it read.
//
// The kernels made from this file (see `permutations`); each workgroup writes the wrapping
// sum of what it read:
// - hierarchy_window (WINDOW): every workgroup re-reads one window of `vec4s` vec4<u32>s,
//   `loads` loads per invocation from its own rotation. Its invocations read
//   WORKGROUP_SIZE consecutive vec4s a step and move on round the window, so each
//   workgroup sweeps a contiguous band that wraps: every line of the window is read while
//   loads × WORKGROUP_SIZE covers it. All workgroups read the same window, so each SM's
//   L1 holds its copy while the window fits, then the L2 serves.
// - hierarchy_shared (SHARED): every workgroup reads one chunk of WORKGROUP_SIZE
//   vec4<u32>s of one shared buffer per pass, a different chunk each pass. Workgroup g
//   reads chunk (g + pass × step) mod chunks: neighbouring workgroups (which share an SM)
//   read different chunks, and step (about 0.618 × chunks) keeps an SM from coming back
//   to a chunk it read lately, so its L1 seldom serves: the L2 does while it holds the
//   buffer, then DRAM.
#if L1_BYPASS
//
// hierarchy/shared_l1_bypass is this kernel with an L1 bypass in its CUDA twin
// (`__ldcg`). WGSL has no cache hint, so wgpu does not run it.
#endif

struct Params {
#if WINDOW
    vec4s: u32,
    loads: u32,
    // vec4s between neighbouring workgroups' starting points.
    rotation: u32,
#endif
#if SHARED
    chunks: u32,
    passes: u32,
    step: u32,
#endif
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
#if WINDOW
    var at = (group * params.rotation + lid) % params.vec4s;
    var acc = vec4<u32>();
    for (var load = 0u; load < params.loads; load++) {
        acc += src[at];
        // The window holds at least WORKGROUP_SIZE vec4s: one wrap at most, and no
        // division in the loop.
        at += WORKGROUP_SIZE;
        if at >= params.vec4s {
            at -= params.vec4s;
        }
    }
#endif
#if SHARED
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
#endif
    let sum = workgroup_sum(lid, acc.x + acc.y + acc.z + acc.w);
    if lid == 0u {
        sums[group] = sum;
    }
}
