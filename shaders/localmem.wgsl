// localmem/register_array, dynamic_index: a running mean over a window of W = 32, a private array.
//
// The mean runs along each of `series` interleaved series (element j of series t at j *
// series + t).
//
// The kernels made from this file (see `permutations`): localmem_register_array
// (REGISTER_ARRAY), the window indexed only by loop constants, which a compiler can keep
// in registers; localmem_dynamic_index (DYNAMIC_INDEX), the window's slot computed at
// run time as (j + n) % W, an index no compiler can resolve, so drivers may place the
// array in local memory.

struct Params {
    n: u32,
    series: u32,
}

@group(0) @binding(0)
var<uniform> params: Params;
@group(0) @binding(1)
var<storage, read> src: array<f32>;
@group(0) @binding(2)
var<storage, read_write> dst: array<f32>;

override WORKGROUP_SIZE: u32 = 256;
const W: u32 = 32;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let t = gid.x;
    let series = params.series;
    if t >= series {
        return;
    }
#if REGISTER_ARRAY
    let length = params.n / series;
#endif
#if DYNAMIC_INDEX
    let n = params.n;
    let length = n / series;
#endif
    // Zero: before a series' first W elements the missing ones count as 0.
    var window: array<f32, W>;
    var sum = 0.0;
#if REGISTER_ARRAY
    // Whole windows, slot j of each: once the inner loop is unrolled, every index is a
    // constant.
    for (var base = 0u; base < length; base += W) {
        for (var j = 0u; j < W; j++) {
            let at = (base + j) * series + t;
            let x = src[at];
            sum += x - window[j];
            window[j] = x;
            dst[at] = sum * (1.0 / f32(W));
        }
    }
#endif
#if DYNAMIC_INDEX
    for (var j = 0u; j < length; j++) {
        // A ring buffer rotated by n: the slot of step j holds the element of step
        // j - W, as in register_array, but the compiler cannot know which slot it is.
        let slot = (j + n) % W;
        let at = j * series + t;
        let x = src[at];
        sum += x - window[slot];
        window[slot] = x;
        dst[at] = sum * (1.0 / f32(W));
    }
#endif
}
