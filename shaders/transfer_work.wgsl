// transfer/overlap: dst[i] = ROUNDS rounds of an integer mix of src[i].
//
// It is the work done on each uploaded chunk.

@group(0) @binding(0)
var<storage, read> src: array<u32>;
@group(0) @binding(1)
var<storage, read_write> dst: array<u32>;

override WORKGROUP_SIZE: u32 = 256;
// Arithmetic per element, so that processing a chunk costs time of its own.
override ROUNDS: u32 = 8;

#import workgroup_index

// A chunk is bound as its own sub-range, so arrayLength is the chunk's length.
@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let i = workgroup_index(wid, nwg) * WORKGROUP_SIZE + lid;
    if i < arrayLength(&src) {
        var x = src[i];
        for (var round = 0u; round < ROUNDS; round++) {
            x = x * 747796405u + 2891336453u;
            x ^= x >> 13u;
        }
        dst[i] = x;
    }
}
