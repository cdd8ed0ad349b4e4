// y = a * x + y over n floats: one element per invocation, DRAM-bound at large n.
// The grid may be 2-D (more workgroups than a dimension holds): invocation (x, y)
// takes element y * (workgroups in x * WG) + x.

override WG: u32 = 256u;

struct Params {
    a: f32,
    n: u32,
}

@group(0) @binding(0)
var<uniform> params: Params;
@group(0) @binding(1)
var<storage, read> x: array<f32>;
@group(0) @binding(2)
var<storage, read_write> y: array<f32>;

@compute @workgroup_size(WG)
fn main(
    @builtin(global_invocation_id) id: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let i = id.y * (groups.x * WG) + id.x;
    if i < params.n {
        y[i] = params.a * x[i] + y[i];
    }
}
