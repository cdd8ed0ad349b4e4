// hierarchy/window: every workgroup re-reads one window of `vec4s` vec4<u32>s, `loads` loads per invocation from its own rotation, and writes the wrapping sum of what it read.
//
// The workgroup's invocations read WORKGROUP_SIZE consecutive vec4s a step and move on
// round the window, so each workgroup sweeps a contiguous band that wraps: every line
// of the window is read while loads × WORKGROUP_SIZE covers it. All workgroups read the
// same window, so each SM's L1 holds its copy while the window fits, then the L2 serves.

struct Params {
    vec4s: u32,
    loads: u32,
    // vec4s between neighbouring workgroups' starting points.
    rotation: u32,
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
    let sum = workgroup_sum(lid, acc.x + acc.y + acc.z + acc.w);
    if lid == 0u {
        sums[group] = sum;
    }
}
