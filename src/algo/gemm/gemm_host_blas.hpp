// SPDX-License-Identifier: Apache-2.0
// The GEMM module's host-library strategy on CPU devices: OpenBLAS, loaded at run time (dlopen)
// so that kiln builds and runs without it, multiplying the buffers where they lie in host memory,
// which a CPU device shares (as kiln::fft's FFTW strategy does).
#pragma once

#include <kiln/detail/algo/gemm_problem.hpp>
#include <kiln/runtime/event.hpp>
#include <kiln/runtime/queue.hpp>

namespace kiln::detail {

/// Whether OpenBLAS's CBLAS interface (Debian: libopenblas0) loads in this process.
bool host_blas_available();
/// Whether OpenBLAS can run `problem` (its sizes, leading dimensions and batch offsets fit its
/// int arguments).
bool host_blas_fits(const gemm_problem& problem);
/// Runs a checked problem through cblas_sgemm or cblas_dgemm, once per batch entry, on as many
/// OpenBLAS threads as q's device has compute units; synchronous: returns once C is written
/// (after q's earlier work), with a marker on q.
event run_host_blas_gemm(const queue& q, const gemm_problem& problem);

}  // namespace kiln::detail
