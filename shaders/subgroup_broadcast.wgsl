// subgroup/broadcast: `rounds` rounds of v = subgroupBroadcast(v, SOURCE_LANE) + rotl1(v): every lane takes the source lane's value.

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
// A const: subgroupBroadcast takes its lane as a const-expression. Lane 3 exists in
// every subgroup (WebGPU's smallest has 4 lanes).
const SOURCE_LANE: u32 = 3;

#import rotl1

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
    @builtin(subgroup_size) subgroup_size: u32,
) {
    let i = wid.x * WORKGROUP_SIZE + lid;
    var v = src[i];
    // The lane's own term, rotated so that high bits feed low ones, keeps the lanes'
    // values apart: the result depends on the source lane of every round.
    for (var round = 0u; round < params.rounds; round++) {
        v = subgroupBroadcast(v, SOURCE_LANE) + rotl1(v);
    }
    dst[i] = v;
    // The result depends on the subgroup size, which the driver may choose.
    if lid == 0u {
        dst[nwg.x * WORKGROUP_SIZE + wid.x] = subgroup_size;
    }
}
