// kiln::fft's host-library strategy on CPU devices: FFTW, loaded at run time (dlopen) so that
// kiln builds and runs without it, transforming the buffers where they lie in host memory, which
// a CPU device shares. On 2 cores FFTW on both threads took 0.23-0.37 of the kernels' time
// (docs/fft.md, "Strategies" and "Performance").
#pragma once

#include <cstddef>
#include <kiln/detail/algo/fft_plan.hpp>
#include <memory>
#include <mutex>
#include <utility>

namespace kiln::detail {

struct fftw_library;

/// One shape's FFTW plans (out of place and in place, each made at its first use) on `threads`
/// threads.
class fftw_transform {
  public:
    /// Null where FFTW and its threads library (Debian: libfftw3-single3 and -double3) cannot be
    /// loaded for the shape's precision, or a size or the batch exceeds FFTW's int.
    static std::unique_ptr<fftw_transform> make(const fft_shape& shape, unsigned threads);
    ~fftw_transform();
    fftw_transform(const fftw_transform&) = delete;
    fftw_transform& operator=(const fftw_transform&) = delete;

    /// Transforms the shape's elements at `input` into `output`, which may be `input`, scaled
    /// by 1/N for inverse transforms. Thread-safe.
    void execute(void* input, void* output) const;

  private:
    fftw_transform(const fftw_library& library, const fft_shape& shape, unsigned threads);
    /// The plan for these arrays, and whether it is made for this call alone (arrays less
    /// aligned than the kept plans'), to be destroyed after it.
    std::pair<void*, bool> plan_for(void* input, void* output) const;

    const fftw_library& library_;
    fft_shape shape_;
    unsigned threads_;
    mutable std::mutex mutex_;
    mutable void* out_of_place_ = nullptr;
    mutable void* in_place_ = nullptr;
};

}  // namespace kiln::detail
