// subgroup/shuffle_up: `rounds` rounds of v = subgroupShuffleUp(v, d) + rotl1(v), d = 2^(round mod log2(subgroup size)); lanes below d, whose source does not exist, keep their own value.

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

fn rotl1(v: u32) -> u32 {
    return (v << 1u) | (v >> 31u);
}

// Offsets 1, 2, 4, .., size / 2, then 1 again: 2^(round mod log2(size)) without a
// division in the loop.
fn next_offset(offset: u32, subgroup_size: u32) -> u32 {
    return select(offset << 1u, 1u, offset << 1u == subgroup_size);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
    @builtin(subgroup_size) subgroup_size: u32,
    @builtin(subgroup_invocation_id) lane: u32,
) {
    let i = wid.x * WORKGROUP_SIZE + lid;
    var v = src[i];
    var offset = 1u;
    // The lane's own term, rotated so that high bits feed low ones, keeps the lanes'
    // values apart: the result depends on the source lane of every round.
    for (var round = 0u; round < params.rounds; round++) {
        // The shuffle's result is indeterminate where lane - offset is not a lane.
        let shifted = subgroupShuffleUp(v, offset);
        v = select(v, shifted, lane >= offset) + rotl1(v);
        offset = next_offset(offset, subgroup_size);
    }
    dst[i] = v;
    // The result depends on the subgroup size, which the driver may choose.
    if lid == 0u {
        dst[nwg.x * WORKGROUP_SIZE + wid.x] = subgroup_size;
    }
}
