// out = transpose(in) for an R x C matrix of floats, one element per invocation: rows
// read coalesced, columns written with a stride of R floats (a sector per lane).

struct Shape {
    rows: u32,
    cols: u32,
}

@group(0) @binding(0)
var<uniform> shape: Shape;
@group(0) @binding(1)
var<storage, read> input: array<f32>;
@group(0) @binding(2)
var<storage, read_write> output: array<f32>;

@compute @workgroup_size(32, 8)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let col = id.x;
    let row = id.y;
    if row < shape.rows && col < shape.cols {
        output[col * shape.rows + row] = input[row * shape.cols + col];
    }
}
