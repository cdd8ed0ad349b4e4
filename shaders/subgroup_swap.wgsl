// subgroup/swap: each lane holds 4 values and swaps one with a partner lane's in every round.
//
// In round r, lane l with bit m = 2^(r mod log2(subgroup size)) clear exchanges its
// element `first` with element `second` of lane l ^ m.
//
// The CUDA text's swap (shfl_xor of one element between two local swaps) selects the
// lower lane of each pair with `laneIdx / mask + 1 == 1`, true only for lanes below
// the mask; the lower lane of a pair is the one whose mask bit is clear.

struct Params {
    rounds: u32,
    first: u32,
    second: u32,
}

@group(0) @binding(0)
var<uniform> params: Params;
@group(0) @binding(1)
var<storage, read> src: array<vec4<u32>>;
// Four values per invocation, then the subgroup size of each workgroup.
@group(0) @binding(2)
var<storage, read_write> dst: array<u32>;

override WORKGROUP_SIZE: u32 = 256;

#import next_offset

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
    @builtin(subgroup_size) subgroup_size: u32,
    @builtin(subgroup_invocation_id) lane: u32,
) {
    let i = wid.x * WORKGROUP_SIZE + lid;
    let loaded = src[i];
    var value = array<u32, 4>(loaded.x, loaded.y, loaded.z, loaded.w);
    var offset = 1u;
    for (var round = 0u; round < params.rounds; round++) {
        let lower = (lane & offset) == 0u;
        // The lower lane moves its `first` into the exchanged slot and back after it.
        if lower {
            let kept = value[params.first];
            value[params.first] = value[params.second];
            value[params.second] = kept;
        }
        value[params.second] = subgroupShuffleXor(value[params.second], offset);
        if lower {
            let kept = value[params.first];
            value[params.first] = value[params.second];
            value[params.second] = kept;
        }
        offset = next_offset(offset, subgroup_size);
    }
    for (var k = 0u; k < 4u; k++) {
        dst[4u * i + k] = value[k];
    }
    // The result depends on the subgroup size, which the driver may choose.
    if lid == 0u {
        dst[4u * nwg.x * WORKGROUP_SIZE + wid.x] = subgroup_size;
    }
}
