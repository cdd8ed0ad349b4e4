// reduce/subgroup_add: one partial sum per workgroup: reduce/smem_unroll4's grid-stride vec4 loads, then subgroupAdd within each subgroup and once more over the subgroups' sums.

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

// One sum per subgroup; sized for the smallest subgroups there could be.
var<workgroup> subgroup_sums: array<i32, WORKGROUP_SIZE>;

// Correct for any subgroup size: each subgroup writes its own slot, and the first
// subgroup adds as many slots as there are subgroups, `subgroup_size` at a time.
@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
    @builtin(subgroup_size) subgroup_size: u32,
    @builtin(subgroup_id) subgroup: u32,
    @builtin(num_subgroups) subgroups: u32,
    @builtin(subgroup_invocation_id) lane: u32,
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
    let sum = subgroupAdd(acc.x + acc.y + acc.z + acc.w);
    if lane == 0u {
        subgroup_sums[subgroup] = sum;
    }
    workgroupBarrier();
    if subgroup == 0u {
        var part = 0;
        for (var s = lane; s < subgroups; s += subgroup_size) {
            part += subgroup_sums[s];
        }
        let total = subgroupAdd(part);
        if lane == 0u {
            partials[wid.x] = total;
        }
    }
}
