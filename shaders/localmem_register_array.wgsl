// localmem/register_array: running mean over a window of W = 32 along each of `series` interleaved series (element j of series t at j * series + t); the window is a private array indexed only by loop constants, which a compiler can keep in registers.

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
    let length = params.n / series;
    // Zero: before a series' first W elements the missing ones count as 0.
    var window: array<f32, W>;
    var sum = 0.0;
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
}
