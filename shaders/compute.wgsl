// compute/*: x = a * x + b, FMAS times per element of one loaded vec4, stored back.
//
// The four elements are four independent chains; `a` and `b` come from the uniform, so
// no compiler can fold the chain. The kernels made from this file (see `permutations`):
// - compute_f32 (F32): fma on f32 (a = -1, b = 3: x and 3 - x alternate, exactly);
// - compute_f16 (F16): the same on a vec4<f16> (a and b packed as two halves each);
// - compute_int (INT): a wrapping u32 multiply-add.
#if F16
enable f16;
#endif

struct Params {
    n: u32,
    // The bits of the multiplier and the addend, as the element type reads them.
    a: u32,
    b: u32,
}

@group(0) @binding(0)
var<uniform> params: Params;
#if F16
@group(0) @binding(1)
var<storage, read> src: array<vec4<f16>>;
@group(0) @binding(2)
var<storage, read_write> dst: array<vec4<f16>>;
#else
@group(0) @binding(1)
var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(2)
var<storage, read_write> dst: array<vec4<u32>>;
#endif

override WORKGROUP_SIZE: u32 = 256;
// Multiply-adds per element.
override FMAS: u32 = 1;

#import workgroup_index

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let i = workgroup_index(wid, nwg) * WORKGROUP_SIZE + lid;
    if i >= params.n {
        return;
    }
#if F32
    let a = vec4(bitcast<f32>(params.a));
    let b = vec4(bitcast<f32>(params.b));
    var x = bitcast<vec4<f32>>(src[i]);
    for (var k = 0u; k < FMAS; k++) {
        x = fma(x, a, b);
    }
    dst[i] = bitcast<vec4<u32>>(x);
#endif
#if F16
    // naga has no bitcast from u32 to vec2<f16>: the halves go through f32, exactly.
    let a = vec4<f16>(vec4(unpack2x16float(params.a), unpack2x16float(params.a)));
    let b = vec4<f16>(vec4(unpack2x16float(params.b), unpack2x16float(params.b)));
    var x = src[i];
    for (var k = 0u; k < FMAS; k++) {
        x = fma(x, a, b);
    }
    dst[i] = x;
#endif
#if INT
    let a = vec4(params.a);
    let b = vec4(params.b);
    var x = src[i];
    for (var k = 0u; k < FMAS; k++) {
        x = x * a + b;
    }
    dst[i] = x;
#endif
}
