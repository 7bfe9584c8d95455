// SPDX-License-Identifier: Apache-2.0
// Which guarantee kiln's floating-point results carry: the same bits on every call
// (run_to_run, the default), or the same bits on every device, backend, device count and MPI
// rank count (reproducible). docs/reproducibility.md says what each covers and costs.
#pragma once
#pragma GCC visibility push(default)

#include <optional>

namespace kiln {

/// How far a floating-point result's bits are fixed.
enum class determinism {
    /// The same bits on every call with the same device, build and tuning: the order of
    /// additions is fixed by tile sizes and thread counts, never by timing.
    run_to_run,
    /// The same bits on every device, backend, split over devices and MPI rank count, for the
    /// operations docs/reproducibility.md lists: sums are exact up to a fixed grid, then
    /// rounded once.
    reproducible,
};

/// This thread's mode: that of the innermost live scoped_determinism, otherwise the
/// environment's KILN_DETERMINISM (run_to_run or reproducible; read once; another value throws
/// invalid_argument_error), otherwise run_to_run.
determinism current_determinism();

/// Sets this thread's mode until the guard ends, then restores the one before:
/// `kiln::scoped_determinism guard(kiln::determinism::reproducible);`
class scoped_determinism {
  public:
    /// Puts this thread in `mode`.
    explicit scoped_determinism(determinism mode);
    /// Gives this thread back the mode it had before.
    ~scoped_determinism();
    scoped_determinism(const scoped_determinism&) = delete;             ///< one guard, one scope
    scoped_determinism& operator=(const scoped_determinism&) = delete;  ///< one guard, one scope

  private:
    std::optional<determinism> previous_;
};

}  // namespace kiln
#pragma GCC visibility pop
