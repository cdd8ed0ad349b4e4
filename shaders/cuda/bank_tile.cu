// bank/row_col and its tile variants: an unsigned tile in shared memory, read `r` times.
//
// The tile has ROWS rows of 32 words, each row followed by PAD unused words; it is
// written once by rows or columns, then read by rows or columns (the texts'
// setRowReadRow, setColReadCol, setRowReadCol, their Dyn, Pad and rectangular forms).
//
// A static tile `tile[ROWS][COLUMNS + PAD]` (PAD from the kernel's key), or with
// OVERRIDE an `extern __shared__` one sized at launch (the texts' dynamic shared
// memory, PAD from the case) and indexed by row * (COLUMNS + PAD) + column.

struct Params {
    // Reads per thread.
    unsigned r;
    // 31: read k XORs every lane's column with `k & shift_mask`, which permutes the
    // banks and keeps the ways. From constant memory, so that the compiler cannot prove
    // the shifts repeat and hoist reads out of the loop.
    unsigned shift_mask;
};

__constant__ Params params;

#define COLUMNS 32
static_assert(BLOCK_X == COLUMNS && BLOCK_Y == ROWS, "one thread per tile element");

#if OVERRIDE
#define TILE(row, column) tile[(row) * (COLUMNS + PAD) + (column)]
#else
#define TILE(row, column) tile[row][column]
#endif

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
bank_tile(const unsigned* __restrict__ src, unsigned* __restrict__ dst) {
#if OVERRIDE
    extern __shared__ unsigned tile[];
#else
    __shared__ unsigned tile[ROWS][COLUMNS + PAD];
#endif
    // Element i in row-major order, or in column-major order (the transposed walk,
    // which puts a warp's lanes in one column, or two of a 16-row tile).
    unsigned i = threadIdx.y * COLUMNS + threadIdx.x;
    unsigned g = blockIdx.x * COLUMNS * ROWS + i;
    unsigned write_row = WRITE_COLUMNS ? i % ROWS : i / COLUMNS;
    unsigned write_column = WRITE_COLUMNS ? i / ROWS : i % COLUMNS;
    TILE(write_row, write_column) = src[g];
    __syncthreads();
    unsigned row = READ_COLUMNS ? i % ROWS : i / COLUMNS;
    unsigned column = READ_COLUMNS ? i / ROWS : i % COLUMNS;
    unsigned r = params.r;
    unsigned shift_mask = params.shift_mask;
    unsigned acc = 0;
    RUNTIME_LOOP
    for (unsigned k = 0; k < r; k++) {
        // The same XOR for every lane permutes the banks: the ways stay the pattern's.
        acc = acc * MIX + TILE(row, column ^ (k & shift_mask));
    }
    dst[g] = acc;
}
