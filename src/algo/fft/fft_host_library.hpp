// SPDX-License-Identifier: Apache-2.0
// kiln::fft's host-library strategy on CPU devices: FFTW, loaded at run time (dlopen) so that
// kiln builds and runs without it, transforming the buffers where they lie in host memory, which
// a CPU device shares. On 2 cores FFTW on both threads took 0.23-0.37 of the kernels' time
// (docs/fft.md, "Strategies" and "Performance").
#pragma once

#include <cstddef>
#include <future>
#include <kiln/detail/algo/fft_plan.hpp>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace kiln::detail {

struct fftw_library;

/// How the plan that ran a call was made.
enum class fftw_plan_origin {
    measured,   // FFTW_MEASURE: from wisdom, or measured in the background since the first call
    estimated,  // FFTW_ESTIMATE, kept while the shape's first measuring runs
    once,       // FFTW_ESTIMATE on arrays less aligned than the kept plans', for that call alone
};

/// One shape's FFTW plans (out of place and in place, each made at its first use) on `threads`
/// threads. A shape FFTW has no wisdom for takes seconds to measure: its first calls run an
/// estimated plan while kiln's FFTW planner thread measures, and the measured plan takes over (and
/// its wisdom is saved) when done (docs/fft.md, "Strategies").
class fftw_transform {
  public:
    /// Null where FFTW and its threads library (Debian: libfftw3-single3 and -double3) cannot be
    /// loaded for the shape's precision, a size or the batch exceeds FFTW's int, or the planner
    /// thread cannot start.
    static std::unique_ptr<fftw_transform> make(const fft_shape& shape, unsigned threads);
    /// Does not wait for measuring in flight: it finishes on its own (its wisdom is saved) and
    /// is waited for when the program exits.
    ~fftw_transform();
    fftw_transform(const fftw_transform&) = delete;
    fftw_transform& operator=(const fftw_transform&) = delete;

    /// Transforms the shape's elements at `input` into `output`, which may be `input`, scaled
    /// by 1/N for inverse transforms. Thread-safe.
    fftw_plan_origin execute(void* input, void* output) const;
    /// Waits until the measuring that first calls started is done (tests).
    void wait_for_measuring() const;

  private:
    struct kept_plans;  // shared by the shape's transforms and the planner's measuring
    struct chosen_plan;
    fftw_transform(const fftw_library& library, const fft_shape& shape, unsigned threads);
    static std::shared_ptr<kept_plans> plans_of(const fft_shape& shape, unsigned threads);
    chosen_plan plan_for(void* input, void* output) const;
    /// Queues the measuring of the aligned plan, in place or not, on the planner thread.
    void start_measuring(bool in_place) const;

    const fftw_library& library_;
    fft_shape shape_;
    unsigned threads_;
    bool read_wisdom_;
    std::shared_ptr<kept_plans> kept_;
};

/// While one lives, transforms made plan as if FFTW had no wisdom for their shapes: lets tests run
/// the first calls' estimated plan and the measuring beside them on shapes planned before.
class scoped_fftw_wisdom_ignored {
  public:
    scoped_fftw_wisdom_ignored();
    ~scoped_fftw_wisdom_ignored();
    scoped_fftw_wisdom_ignored(const scoped_fftw_wisdom_ignored&) = delete;
    scoped_fftw_wisdom_ignored& operator=(const scoped_fftw_wisdom_ignored&) = delete;

  private:
    bool previous_;
};

/// The FFTW wisdom kept in kiln's cache directory for one precision (fftw-wisdom-float or
/// fftw-wisdom-double), which the first transform hands to FFTW. Read like a compile-cache entry:
/// nullopt unless it is a regular file (a link is not followed, a FIFO is not waited for) of at
/// most 16 MiB; FFTW itself checks the text.
std::optional<std::string> read_fftw_wisdom(bool double_precision);

}  // namespace kiln::detail
