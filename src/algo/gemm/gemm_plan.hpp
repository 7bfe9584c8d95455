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
    gemm_simt_tiles simt;  ///< where strategy is simt
    gemm_cpu_tiles cpu;    ///< where strategy is cpu_tiles
    const gemm_tuning_row* row = nullptr;
};

/// What the plan needs to know beyond the device.
struct gemm_plan_input {
    gemm_element element = gemm_element::f32;  ///< every operand's, for now
    /// OpenBLAS loads, and the problem fits its int arguments.
    bool host_blas = false;
    /// A test's or KILN_GEMM_STRATEGY's choice (automatic: none); one the device cannot run
    /// throws invalid_argument_error.
    gemm_strategy forced = gemm_strategy::automatic;
    /// A test's SIMT tiles (scoped_gemm_simt_tiles), taken as they are, where not null.
    const gemm_simt_tiles* simt_tiles = nullptr;
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

/// Whether a device of `props` can run `strategy` (with OpenBLAS loaded where `host_blas`).
bool gemm_strategy_runs_on(gemm_strategy strategy, const device_properties& props, bool host_blas);

}  // namespace kiln::detail
