// reduce/smem_unroll4, subgroup_add, subgroup_shuffle: one partial sum per workgroup of vec4 loads.
//
// A grid-stride loop of vec4 loads, four in flight per invocation, then a sum over the
// workgroup.
//
// The kernels made from this file (see `permutations`):
// - reduce_smem_unroll4 (SMEM): a barrier-separated tree in workgroup memory. The CUDA
//   original's barrier-free `volatile` last warp is a data race in WGSL (see
//   reduce_smem.wgsl): every step of the tree ends in workgroupBarrier().
// - reduce_subgroup_add (ADD): subgroupAdd within each subgroup and once more over the
//   subgroups' sums;
// - reduce_subgroup_shuffle (SHUFFLE): a subgroupShuffleXor butterfly within each
//   subgroup and once more over the subgroups' sums.

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

#if SMEM
var<workgroup> tile: array<i32, WORKGROUP_SIZE>;
#else
// One sum per subgroup; sized for the smallest subgroups there could be.
var<workgroup> subgroup_sums: array<i32, WORKGROUP_SIZE>;
#endif
#if SHUFFLE

// After log2(width) exchanges with lane ^ mask every lane holds the sum of its
// subgroup's `width` lanes. A subgroup larger than the workgroup holds only the
// workgroup's lanes, so the butterfly never reads a lane that does not exist.
fn butterfly(value: i32, width: u32) -> i32 {
    var sum = value;
    for (var mask = width / 2u; mask > 0u; mask /= 2u) {
        sum += subgroupShuffleXor(sum, mask);
    }
    return sum;
}
#endif

#if !SMEM
// Correct for any subgroup size: each subgroup writes its own slot, and the first
// subgroup adds as many slots as there are subgroups, `subgroup_size` at a time.
#endif
@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
#if !SMEM
    @builtin(subgroup_size) subgroup_size: u32,
    @builtin(subgroup_id) subgroup: u32,
    @builtin(num_subgroups) subgroups: u32,
    @builtin(subgroup_invocation_id) lane: u32,
#endif
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
#if SMEM
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
#else
#if ADD
    let sum = subgroupAdd(acc.x + acc.y + acc.z + acc.w);
#endif
#if SHUFFLE
    let width = min(subgroup_size, WORKGROUP_SIZE);
    let sum = butterfly(acc.x + acc.y + acc.z + acc.w, width);
#endif
    if lane == 0u {
        subgroup_sums[subgroup] = sum;
    }
    workgroupBarrier();
    if subgroup == 0u {
        var part = 0;
        for (var s = lane; s < subgroups; s += subgroup_size) {
            part += subgroup_sums[s];
        }
#if ADD
        let total = subgroupAdd(part);
#endif
#if SHUFFLE
        let total = butterfly(part, width);
#endif
        if lane == 0u {
            partials[wid.x] = total;
        }
    }
#endif
}
