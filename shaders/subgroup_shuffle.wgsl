// subgroup/broadcast, shuffle_up, shuffle_down, shuffle_xor: `rounds` rounds of op(v) + rotl1(v).
//
// op is a subgroupBroadcast from SOURCE_LANE or a subgroupShuffle{Up,Down,Xor} by d =
// 2^(round mod log2(subgroup size)).
//
// The kernels made from this file (see `permutations`): subgroup_broadcast (BROADCAST),
// where every lane takes the source lane's value; subgroup_shuffle_up (UP), where lanes
// below d, whose source does not exist, keep their own value; subgroup_shuffle_down
// (DOWN), where lanes whose source lane + d does not exist keep their own value;
// subgroup_shuffle_xor (XOR), butterfly rounds with mask d.

struct Params {
    rounds: u32,
}

@group(0) @binding(0)
var<uniform> params: Params;
@group(0) @binding(1)
var<storage, read> src: array<u32>;
// One value per invocation, then the subgroup size of each workgroup.
@group(0) @binding(2)
var<storage, read_write> dst: array<u32>;

override WORKGROUP_SIZE: u32 = 256;
#if BROADCAST
// A const: subgroupBroadcast takes its lane as a const-expression. Lane 3 exists in
// every subgroup (WebGPU's smallest has 4 lanes).
const SOURCE_LANE: u32 = 3;
#else
#import next_offset
#endif

// v rotated left by one bit: a lane's own term that feeds its high bits into low ones.
fn rotl1(v: u32) -> u32 {
    return (v << 1u) | (v >> 31u);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
    @builtin(subgroup_size) subgroup_size: u32,
#if !BROADCAST
#if !XOR
    @builtin(subgroup_invocation_id) lane: u32,
#endif
#endif
) {
    let i = wid.x * WORKGROUP_SIZE + lid;
    var v = src[i];
#if !BROADCAST
    var offset = 1u;
#endif
    // The lane's own term, rotated so that high bits feed low ones, keeps the lanes'
    // values apart: the result depends on the source lane of every round.
    for (var round = 0u; round < params.rounds; round++) {
#if BROADCAST
        v = subgroupBroadcast(v, SOURCE_LANE) + rotl1(v);
#endif
#if UP
        // The shuffle's result is indeterminate where lane - offset is not a lane.
        let shifted = subgroupShuffleUp(v, offset);
        v = select(v, shifted, lane >= offset) + rotl1(v);
#endif
#if DOWN
        // The shuffle's result is indeterminate where lane + offset is not a lane.
        let shifted = subgroupShuffleDown(v, offset);
        v = select(v, shifted, lane + offset < subgroup_size) + rotl1(v);
#endif
#if XOR
        v = subgroupShuffleXor(v, offset) + rotl1(v);
#endif
#if !BROADCAST
        offset = next_offset(offset, subgroup_size);
#endif
    }
    dst[i] = v;
    // The result depends on the subgroup size, which the driver may choose.
    if lid == 0u {
        dst[nwg.x * WORKGROUP_SIZE + wid.x] = subgroup_size;
    }
}
