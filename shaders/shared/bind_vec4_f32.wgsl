// The bindings of a vec4<f32> kernel: its own Params struct as a uniform, then its input src and its output dst.
@group(0) @binding(0)
var<uniform> params: Params;
@group(0) @binding(1)
var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(2)
var<storage, read_write> dst: array<vec4<f32>>;
