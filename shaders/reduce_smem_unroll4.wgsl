// reduce/smem_unroll4: one partial sum per workgroup: a grid-stride loop of vec4 loads, four in flight per invocation, then a barrier-separated tree in workgroup memory.
//
// The CUDA original's barrier-free `volatile` last warp is a data race in WGSL (see
// reduce_smem.wgsl): every step of the tree ends in workgroupBarrier().

struct Params {
    vec4s: u32,
}

@group(0) @binding(0)
var<uniform> params: Params;
@group(0) @binding(1)
var<storage, read> src: array<vec4<i32>>;
@group(0) @binding(2)
var<storage, read_write> partials: array<i32>;

override WORKGROUP_SIZE: u32 = 256;

var<workgroup> tile: array<i32, WORKGROUP_SIZE>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let stride = nwg.x * WORKGROUP_SIZE;
    var i = wid.x * WORKGROUP_SIZE + lid;
    var acc = vec4<i32>();
    // Four independent loads per step keep four vec4s in flight per invocation.
    for (; i + 3u * stride < params.vec4s; i += 4u * stride) {
        acc += (src[i] + src[i + stride]) + (src[i + 2u * stride] + src[i + 3u * stride]);
    }
    for (; i < params.vec4s; i += stride) {
        acc += src[i];
    }
    tile[lid] = acc.x + acc.y + acc.z + acc.w;
    workgroupBarrier();
    for (var half = WORKGROUP_SIZE / 2u; half > 0u; half /= 2u) {
        if lid < half {
            tile[lid] += tile[lid + half];
        }
        workgroupBarrier();
    }
    if lid == 0u {
        partials[wid.x] = tile[0];
    }
}
