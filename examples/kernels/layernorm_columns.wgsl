// The layer norm of layernorm.wgsl with its matrix stored column by column: element
// (row, i) at i * rows + row. Each invocation still walks its row three times, one
// load after another, but neighbouring lanes now read neighbouring words. Beside
// layernorm.wgsl it tells what the strided reads cost from what the walk's
// latency costs.

struct Shape {
    rows: u32,
    dim: u32,
    epsilon: f32,
}

@group(0) @binding(0)
var<uniform> shape: Shape;
@group(0) @binding(1)
var<storage, read> x: array<f32>;
@group(0) @binding(2)
var<storage, read> gamma: array<f32>;
@group(0) @binding(3)
var<storage, read_write> y: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let row = id.x;
    if row >= shape.rows {
        return;
    }
    var sum = 0.0;
    for (var i = 0u; i < shape.dim; i++) {
        sum += x[i * shape.rows + row];
    }
    let mean = sum / f32(shape.dim);
    var squares = 0.0;
    for (var i = 0u; i < shape.dim; i++) {
        let d = x[i * shape.rows + row] - mean;
        squares += d * d;
    }
    let scale = 1.0 / sqrt(squares / f32(shape.dim) + shape.epsilon);
    for (var i = 0u; i < shape.dim; i++) {
        let at = i * shape.rows + row;
        y[at] = (x[at] - mean) * scale * gamma[i];
    }
}
