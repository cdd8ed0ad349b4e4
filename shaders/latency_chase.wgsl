// latency/chase: one invocation follows `steps` dependent loads i = next[i] around a random cycle.
//
// The cycle is of line-sized slots; the invocation then writes where it stopped and the
// wrapping sum of the indices it visited.
//
// Every load's address is the value of the one before, so only one is ever in flight:
// the time per step is the latency of the level that holds the footprint (L1, L2,
// DRAM, with TLB misses on the largest). A dispatch resumes where the previous one
// stopped (out[0]), so that successive dispatches walk the whole cycle rather than the
// same first `steps` slots over and over; out[0] holding no index (the poison the
// output is created with) starts the chase at slot 0.

struct Params {
    steps: u32,
    // Words of `next`: an out[0] at or past it is not an index.
    words: u32,
}

@group(0) @binding(0)
var<uniform> params: Params;
@group(0) @binding(1)
var<storage, read> next: array<u32>;
@group(0) @binding(2)
var<storage, read_write> out: array<u32>;

// One invocation chases: a second would put its loads in flight beside the first's.
override WORKGROUP_SIZE: u32 = 1;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32) {
    if lid != 0u {
        return;
    }
    var i = out[0];
    if i >= params.words {
        i = 0u;
    }
    var sum = 0u;
    for (var step = 0u; step < params.steps; step++) {
        i = next[i];
        sum += i;
    }
    out[0] = i;
    out[1] = sum;
}
