// Matrix products C = A * B for row-major A (rows x inner), B (inner x cols), C (rows x cols).
// TILE comes from the build options (-DTILE=16), so host and kernel agree on it.

// One work-item per element of C, reading its row of A and column of B from global memory.
kernel void multiply_naive(global const float* a, global const float* b, global float* c,
                           uint rows, uint inner, uint cols) {
    size_t col = get_global_id(0), row = get_global_id(1);
    if (row >= rows || col >= cols) return;
    float sum = 0.0f;
    for (uint k = 0; k < inner; ++k) sum += a[row * inner + k] * b[k * cols + col];
    c[row * cols + col] = sum;
}

// The same product in TILE x TILE blocks: each work-group stages one block of A and one of B in
// local memory, so every element is read from global memory once per block instead of once
// per multiply. Work-items outside C still take part in loading and in the barriers.
kernel void multiply_tiled(global const float* a, global const float* b, global float* c,
                           uint rows, uint inner, uint cols) {
    local float a_tile[TILE][TILE];
    local float b_tile[TILE][TILE];
    size_t col = get_global_id(0), row = get_global_id(1);
    size_t local_col = get_local_id(0), local_row = get_local_id(1);
    float sum = 0.0f;
    for (uint start = 0; start < inner; start += TILE) {
        uint a_col = start + local_col, b_row = start + local_row;
        a_tile[local_row][local_col] = row < rows && a_col < inner ? a[row * inner + a_col] : 0.0f;
        b_tile[local_row][local_col] = b_row < inner && col < cols ? b[b_row * cols + col] : 0.0f;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < TILE; ++k) sum += a_tile[local_row][k] * b_tile[k][local_col];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (row < rows && col < cols) c[row * cols + col] = sum;
}
