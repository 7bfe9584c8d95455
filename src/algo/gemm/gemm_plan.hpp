// The GEMM module's plan: from a device's properties, the problem's element types and what the
// process has (OpenBLAS), the whole strategy and its tiles. Pure: it reads nothing but its
// arguments, so a test writes the properties by hand.
#pragma once

#include <kiln/detail/algo/gemm_problem.hpp>
#include <kiln/runtime/device.hpp>
#include <optional>

#include "gemm_tuning.hpp"

namespace kiln::detail {

struct gemm_plan {
    gemm_strategy strategy = gemm_strategy::simt;
    gemm_simt_tiles simt;      ///< where strategy is simt
    gemm_cpu_tiles cpu;        ///< where strategy is cpu_tiles
    gemm_tensor_tiles tensor;  ///< where strategy is tensor_cores
    const gemm_tuning_row* row = nullptr;
};

/// What the plan needs to know beyond the device.
struct gemm_plan_input {
    gemm_element element = gemm_element::f32;  ///< C's
    /// OpenBLAS loads, and the problem fits its int arguments.
    bool host_blas = false;
    /// A test's or KILN_GEMM_STRATEGY's choice (automatic: none); one the device cannot run
    /// throws invalid_argument_error.
    gemm_strategy forced = gemm_strategy::automatic;
    /// A test's SIMT tiles (scoped_gemm_simt_tiles), taken as they are, where not null.
    const gemm_simt_tiles* simt_tiles = nullptr;
    /// A's and B's: C's, or f16 or bf16 with a float C.
    gemm_element inputs = gemm_element::f32;
    /// The operands' rows, offsets and batch strides let the tensor-core kernel copy them to
    /// local memory by 16 bytes (tensor_core_layout_fits).
    bool tensor_core_layout = false;
    /// C's rows and columns (each batch entry's); 0: not known, the row's tiles as they are.
    std::size_t rows = 0, columns = 0;
};

gemm_plan plan_gemm(const device_properties& props, const gemm_plan_input& input);

/// Test-only: while alive, the SIMT strategy takes `tiles` on every device (for float and double),
/// so that tests run every row's tiles, vector loads included, on the devices they have.
class scoped_gemm_simt_tiles {
  public:
    explicit scoped_gemm_simt_tiles(gemm_simt_tiles tiles);
    ~scoped_gemm_simt_tiles();
    scoped_gemm_simt_tiles(const scoped_gemm_simt_tiles&) = delete;
    scoped_gemm_simt_tiles& operator=(const scoped_gemm_simt_tiles&) = delete;

  private:
    std::optional<gemm_simt_tiles> previous_;
};
/// The tiles scoped_gemm_simt_tiles set, if one lives.
std::optional<gemm_simt_tiles> gemm_simt_tiles_in_force();

/// Whether the device has NVIDIA tensor cores that mma.sync m16n8k16 with bf16 reaches (compute
/// capability 8.0 and later), through CUDA or NVIDIA's OpenCL.
bool has_nvidia_tensor_cores(const device_properties& props);

/// Whether a device of `props` can run `strategy` (with OpenBLAS loaded where `host_blas`).
/// Strategies that do not take a problem's types run it with the SIMT strategy (the tensor cores
/// float and double inputs, the CPU strategies 16-bit ones), so that forcing one is always valid
/// where it runs.
bool gemm_strategy_runs_on(gemm_strategy strategy, const device_properties& props, bool host_blas);

}  // namespace kiln::detail
