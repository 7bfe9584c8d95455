// kiln::fft's host-library strategy: FFTW through dlopen (fft_host_library.hpp).
#include "fft_host_library.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <climits>
#include <complex>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <kiln/error.hpp>
#include <kiln/runtime/cache.hpp>
#include <string>
#include <thread>
#include <vector>

#include "runtime/atomic_file.hpp"

namespace kiln::detail {

/// The FFTW entry points kiln calls, of one precision (fftwf_* or fftw_*); FFTW's C interface,
/// stable since FFTW 3.0, with plans and arrays as untyped pointers.
struct fftw_library {
    using plan_many_dft_fn = void* (*)(int, const int*, int, void*, const int*, int, int, void*,
                                       const int*, int, int, int, unsigned);
    plan_many_dft_fn plan_many_dft = nullptr;
    void (*execute_dft)(void*, void*, void*) = nullptr;
    void (*destroy_plan)(void*) = nullptr;
    void* (*allocate)(std::size_t) = nullptr;
    void (*release)(void*) = nullptr;
    int (*alignment_of)(void*) = nullptr;
    int (*init_threads)() = nullptr;
    void (*plan_with_nthreads)(int) = nullptr;
    int (*import_wisdom_from_string)(const char*) = nullptr;
    char* (*export_wisdom_to_string)() = nullptr;
    bool double_precision = false;
};

namespace {

// FFTW's constants (fftw3.h).
constexpr int fftw_forward = -1, fftw_backward = 1;
constexpr unsigned fftw_measure = 0, fftw_estimate = 1u << 6, fftw_preserve_input = 1u << 4;
// FFTW's plans of a shape, measured once on a machine (seconds for millions of points), are kept
// as its "wisdom" in kiln's cache directory and read by later processes.
std::filesystem::path wisdom_file(bool double_precision) {
    const std::filesystem::path dir = program_cache::directory();
    return dir.empty() ? dir
                       : dir / (double_precision ? "fftw-wisdom-double" : "fftw-wisdom-float");
}

void import_wisdom(const fftw_library& api) {
    const std::filesystem::path file = wisdom_file(api.double_precision);
    if (file.empty()) return;
    std::ifstream in(file, std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!text.empty())
        api.import_wisdom_from_string(text.c_str());  // FFTW checks it; bad is ignored
}

void export_wisdom(const fftw_library& api) {
    const std::filesystem::path file = wisdom_file(api.double_precision);
    if (file.empty()) return;
    const std::unique_ptr<char, void (*)(void*)> text(api.export_wisdom_to_string(), std::free);
    if (!text) return;
    try {
        std::filesystem::create_directories(file.parent_path());
        replace_own_file(file.string(), text.get(), std::strlen(text.get()));
    } catch (const std::exception&) {  // a cache that cannot be written costs the next planning
    }
}

// FFTW's planner is not thread-safe: every plan is made and destroyed under this lock.
std::mutex& planner_mutex() {
    static std::mutex mutex;
    return mutex;
}

template <class F>
bool load(void* library, const char* name, F& function) {
    function = reinterpret_cast<F>(dlsym(library, name));
    return function != nullptr;
}

std::unique_ptr<fftw_library> open_library(bool double_precision) {
    const char* main_name = double_precision ? "libfftw3.so.3" : "libfftw3f.so.3";
    const char* threads_name =
        double_precision ? "libfftw3_threads.so.3" : "libfftw3f_threads.so.3";
    // Never closed: plans may be destroyed at exit.
    void* main = dlopen(main_name, RTLD_NOW | RTLD_LOCAL);
    void* threads = main ? dlopen(threads_name, RTLD_NOW | RTLD_LOCAL) : nullptr;
    if (!threads) return nullptr;
    const std::string p = double_precision ? "fftw_" : "fftwf_";
    auto api = std::make_unique<fftw_library>();
    api->double_precision = double_precision;
    const bool found =
        load(main, (p + "plan_many_dft").c_str(), api->plan_many_dft) &&
        load(main, (p + "execute_dft").c_str(), api->execute_dft) &&
        load(main, (p + "destroy_plan").c_str(), api->destroy_plan) &&
        load(main, (p + "malloc").c_str(), api->allocate) &&
        load(main, (p + "free").c_str(), api->release) &&
        load(main, (p + "alignment_of").c_str(), api->alignment_of) &&
        load(main, (p + "import_wisdom_from_string").c_str(), api->import_wisdom_from_string) &&
        load(main, (p + "export_wisdom_to_string").c_str(), api->export_wisdom_to_string) &&
        load(threads, (p + "init_threads").c_str(), api->init_threads) &&
        load(threads, (p + "plan_with_nthreads").c_str(), api->plan_with_nthreads);
    if (!found || api->init_threads() == 0) return nullptr;
    // FFTW 3.3.5 and later: planning becomes safe beside other threads of the program that
    // plan with FFTW themselves (kiln's own plans are made under planner_mutex).
    void (*make_planner_thread_safe)() = nullptr;
    if (load(threads, (p + "make_planner_thread_safe").c_str(), make_planner_thread_safe))
        make_planner_thread_safe();
    std::lock_guard lock(planner_mutex());
    import_wisdom(*api);
    return api;
}

const fftw_library* library_for(bool double_precision) {
    static const std::unique_ptr<fftw_library> single = open_library(false);
    static const std::unique_ptr<fftw_library> twice = open_library(true);
    return double_precision ? twice.get() : single.get();
}

/// Multiplies `count` complex values at `data` by `factor` on `threads` threads.
template <class T>
void scale(void* data, std::size_t count, T factor, unsigned threads) {
    auto* values = static_cast<std::complex<T>*>(data);
    const std::size_t share = (count + threads - 1) / threads;
    std::vector<std::jthread> workers;
    for (unsigned t = 0; t < threads; ++t) {
        const std::size_t begin = std::min(count, t * share), end = std::min(count, begin + share);
        workers.emplace_back([=] {
            for (std::size_t i = begin; i < end; ++i) values[i] *= factor;
        });
    }
}

}  // namespace

std::unique_ptr<fftw_transform> fftw_transform::make(const fft_shape& shape, unsigned threads) {
    const fftw_library* library = library_for(shape.double_precision);
    if (!library || shape.batch > std::size_t(INT_MAX) ||
        shape.elements() / shape.batch > std::size_t(INT_MAX))
        return nullptr;
    // A thread per 32768 elements at most: planning a small transform for all of the GPU
    // machine's 16 threads beside PoCL's took minutes (the tests' shapes: 147 s against 6 s on
    // 2), for transforms that a thread does in microseconds.
    const std::size_t useful = std::max<std::size_t>(1, shape.elements() / 32768);
    return std::unique_ptr<fftw_transform>(new fftw_transform(
        *library, shape,
        static_cast<unsigned>(std::min<std::size_t>(useful, std::max(threads, 1u)))));
}

fftw_transform::fftw_transform(const fftw_library& library, const fft_shape& shape,
                               unsigned threads)
    : library_(library), shape_(shape), threads_(threads) {}

fftw_transform::~fftw_transform() {
    std::lock_guard lock(planner_mutex());
    for (void* plan : {out_of_place_, in_place_})
        if (plan) library_.destroy_plan(plan);
}

std::pair<void*, bool> fftw_transform::plan_for(void* input, void* output) const {
    const bool in_place = input == output;
    std::lock_guard lock(mutex_);
    void*& plan = in_place ? in_place_ : out_of_place_;
    const bool aligned = library_.alignment_of(input) == 0 && library_.alignment_of(output) == 0;
    if (plan && aligned) return {plan, false};

    std::vector<int> n(shape_.sizes.begin(), shape_.sizes.end());
    const int batch = static_cast<int>(shape_.batch);
    const int distance = static_cast<int>(shape_.elements() / shape_.batch);
    const int sign = shape_.inverse ? fftw_backward : fftw_forward;
    std::lock_guard planning(planner_mutex());
    library_.plan_with_nthreads(static_cast<int>(threads_));
    const auto make = [&](void* in, void* out, unsigned flags) {
        return library_.plan_many_dft(static_cast<int>(n.size()), n.data(), batch, in, nullptr, 1,
                                      distance, out, nullptr, 1, distance, sign,
                                      flags | (in == out ? 0 : fftw_preserve_input));
    };
    if (!aligned) {
        // Planned on the arrays themselves, which estimating leaves untouched; used once.
        void* once = make(input, output, fftw_estimate);
        library_.plan_with_nthreads(1);
        return {once, true};
    }
    // Measuring overwrites the arrays it plans on: arrays of its own, as aligned as kiln's.
    const std::size_t bytes = shape_.elements() * (shape_.double_precision ? 16 : 8);
    void* a = library_.allocate(bytes);
    void* b = in_place ? a : library_.allocate(bytes);
    plan = make(a, b, fftw_measure);
    if (b != a) library_.release(b);
    library_.release(a);
    library_.plan_with_nthreads(1);  // FFTW's default again, for the program's own plans
    export_wisdom(library_);
    return {plan, false};
}

void fftw_transform::execute(void* input, void* output) const {
    const auto [plan, once] = plan_for(input, output);
    if (!plan)
        throw error("fftw_plan_many_dft", 0, "KILN_FFT_HOST_LIBRARY",
                    "FFTW made no plan for this shape");
    library_.execute_dft(plan, input, output);
    if (once) {
        std::lock_guard lock(planner_mutex());
        library_.destroy_plan(plan);
    }
    if (shape_.inverse) {
        const std::size_t count = shape_.elements();
        const double factor = double(shape_.batch) / double(count);
        if (shape_.double_precision)
            scale<double>(output, count, factor, threads_);
        else
            scale<float>(output, count, static_cast<float>(factor), threads_);
    }
}

}  // namespace kiln::detail
