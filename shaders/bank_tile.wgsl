// bank/row_col and its tile variants: a u32 tile in workgroup memory, read `r` times.
//
// The tile has ROWS rows of 32 words, each row followed by PAD unused words; it is
// written once by rows or columns, then read by rows or columns.
//
// The kernels made from this file (see `permutations`):
// - bank_row_col (row_col, row_row, col_col, rect_row_row, rect_row_col): a static
//   tile, unpadded (PAD = 0);
// - bank_row_col_pad (row_col_pad): a static 32 x 32 tile padded by one word per row,
//   which puts the words of a column in 32 different banks;
// - bank_rect_row_col_pad (rect_row_col_pad): a static 32-wide x 16-high tile padded
//   by two words per row, which spreads the transposed walk over all 32 banks;
// - bank_row_col_override (row_col_override, row_col_override_pad), OVERRIDE: a 1-D
//   tile sized by override constants (WGSL's dynamic shared memory), indexed by
//   computed row * (COLUMNS + PAD) + column.

struct Params {
    // Reads per invocation.
    r: u32,
    // 31: read k shifts every lane's column by `k & shift_mask`. From the uniform, so
    // that the compiler cannot prove the shifts repeat and hoist reads out of the loop.
    shift_mask: u32,
}

@group(0) @binding(0)
var<uniform> params: Params;
@group(0) @binding(1)
var<storage, read> src: array<u32>;
@group(0) @binding(2)
var<storage, read_write> dst: array<u32>;

// A tile of ROWS x COLUMNS words, each row followed by PAD unused words; one
// invocation per element, so a 32-lane subgroup walks 32 consecutive elements.
const COLUMNS: u32 = 32;
#if OVERRIDE
override PAD: u32 = 0;
#else
// A const: the inner length of a 2-D array must be a const-expression.
const PAD: u32 = ${PAD};
#endif
override ROWS: u32 = 32;
override WRITE_COLUMNS: bool = false;
override READ_COLUMNS: bool = true;
// Folds the reads into the result in order: odd, so the result depends on every read.
override MIX: u32 = 0x01000193;

#if OVERRIDE
var<workgroup> tile: array<u32, ROWS * (COLUMNS + PAD)>;
#else
var<workgroup> tile: array<array<u32, COLUMNS + PAD>, ROWS>;
#endif

// The (row, column) of element i in row-major order, or in column-major order (the
// transposed walk, which puts a subgroup's lanes in one column, or two of a 16-row tile).
fn element(i: u32, by_columns: bool) -> vec2<u32> {
    if by_columns {
        return vec2(i % ROWS, i / ROWS);
    }
    return vec2(i / COLUMNS, i % COLUMNS);
}

@compute @workgroup_size(COLUMNS, ROWS)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(local_invocation_index) i: u32,
) {
    let g = wid.x * COLUMNS * ROWS + i;
    let w = element(i, WRITE_COLUMNS);
#if OVERRIDE
    tile[w.x * (COLUMNS + PAD) + w.y] = src[g];
#else
    tile[w.x][w.y] = src[g];
#endif
    workgroupBarrier();
    let e = element(i, READ_COLUMNS);
    let r = params.r;
    let shift_mask = params.shift_mask;
    var acc = 0u;
    for (var k = 0u; k < r; k++) {
        // The same XOR for every lane permutes the banks: the ways stay the pattern's.
#if OVERRIDE
        acc = acc * MIX + tile[e.x * (COLUMNS + PAD) + (e.y ^ (k & shift_mask))];
#else
        acc = acc * MIX + tile[e.x][e.y ^ (k & shift_mask)];
#endif
    }
    dst[g] = acc;
}
