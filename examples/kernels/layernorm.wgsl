// Layer normalisation of R rows of D floats, one invocation per row: each invocation
// walks its row three times (mean, variance, output), so neighbouring lanes read
// words D apart and each load waits on few others: latency-bound at small sizes
// (docs/kernel.md, "On an H100", says what bounds it at 2^17 rows).

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
    let base = row * shape.dim;
    var sum = 0.0;
    for (var i = 0u; i < shape.dim; i++) {
        sum += x[base + i];
    }
    let mean = sum / f32(shape.dim);
    var squares = 0.0;
    for (var i = 0u; i < shape.dim; i++) {
        let d = x[base + i] - mean;
        squares += d * d;
    }
    let scale = 1.0 / sqrt(squares / f32(shape.dim) + shape.epsilon);
    for (var i = 0u; i < shape.dim; i++) {
        y[base + i] = (x[base + i] - mean) * scale * gamma[i];
    }
}
