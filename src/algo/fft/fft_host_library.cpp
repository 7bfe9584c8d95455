// kiln::fft's host-library strategy: FFTW through dlopen (fft_host_library.hpp).
#include "fft_host_library.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <complex>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <iterator>
#include <kiln/error.hpp>
#include <kiln/runtime/cache.hpp>
#include <map>
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
constexpr unsigned fftw_measure = 0, fftw_estimate = 1u << 6, fftw_preserve_input = 1u << 4,
                   fftw_wisdom_only = 1u << 21;
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

// FFTW's planner is not thread-safe: kiln makes and destroys every plan holding planner_lock.
std::mutex& planner_mutex() {
    static std::mutex mutex;
    return mutex;
}

// Plans let go while the planner was held (by a measuring that takes seconds): destroyed by the
// holder when it lets go, so that nothing waits for the measuring to destroy a plan.
std::mutex pending_mutex;
std::vector<std::pair<const fftw_library*, void*>> pending_plans;

void destroy_pending_plans() {
    std::vector<std::pair<const fftw_library*, void*>> plans;
    {
        std::lock_guard lock(pending_mutex);
        plans.swap(pending_plans);
    }
    for (const auto& [api, plan] : plans) api->destroy_plan(plan);
}

bool plans_pending() {
    std::lock_guard lock(pending_mutex);
    return !pending_plans.empty();
}

/// Holds the planner; destroys the plans let go meanwhile before it lets go, and any let go
/// while it did so.
class planner_lock {
  public:
    planner_lock() { planner_mutex().lock(); }
    explicit planner_lock(std::try_to_lock_t) : held_(planner_mutex().try_lock()) {}
    ~planner_lock() {
        while (held_) {
            destroy_pending_plans();
            planner_mutex().unlock();
            // A plan let go after the last look above, by a thread that found the planner held.
            held_ = plans_pending() && planner_mutex().try_lock();
        }
    }
    planner_lock(const planner_lock&) = delete;
    planner_lock& operator=(const planner_lock&) = delete;

  private:
    bool held_ = true;
};

/// `plan` (may be null) as a shared pointer that destroys it when its last call is done.
std::shared_ptr<void> kept(const fftw_library& api, void* plan) {
    if (!plan) return nullptr;
    return std::shared_ptr<void>(plan, [&api](void* unused) noexcept {
        try {
            std::lock_guard lock(pending_mutex);
            pending_plans.emplace_back(&api, unused);
        } catch (const std::bad_alloc&) {
            const planner_lock waiting;
            api.destroy_plan(unused);
            return;
        }
        const planner_lock try_now(std::try_to_lock);  // else its holder destroys it
    });
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
    const planner_lock lock;
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

/// Arrays of a shape to plan on, as aligned as kiln's: measuring overwrites the arrays it plans
/// on.
class planning_arrays {
  public:
    planning_arrays(const fftw_library& api, const fft_shape& shape, bool in_place)
        : api_(api), bytes_(shape.elements() * (shape.double_precision ? 16 : 8)) {
        input_ = api.allocate(bytes_);
        output_ = in_place ? input_ : api.allocate(bytes_);
        if (!input_ || !output_) {
            release();
            throw std::bad_alloc();
        }
    }
    ~planning_arrays() { release(); }
    planning_arrays(const planning_arrays&) = delete;
    planning_arrays& operator=(const planning_arrays&) = delete;
    void* input() const { return input_; }
    void* output() const { return output_; }

  private:
    void release() {
        if (output_ && output_ != input_) api_.release(output_);
        if (input_) api_.release(input_);
    }

    const fftw_library& api_;
    std::size_t bytes_;
    void* input_ = nullptr;
    void* output_ = nullptr;
};

/// The measuring threads in flight, process-wide, each with its end's future. A program that
/// exits waits for them, so that what they measured is kept as wisdom for the next process.
class measuring_threads {
  public:
    std::shared_future<void> start(std::function<void()> work) {
        std::promise<void> done;
        std::shared_future<void> finished = done.get_future().share();
        std::lock_guard lock(mutex_);
        std::erase_if(running_, [](running& r) {
            if (r.finished.wait_for(std::chrono::seconds(0)) != std::future_status::ready)
                return false;
            r.thread.join();
            return true;
        });
        running_.reserve(running_.size() + 1);
        running_.push_back({std::thread([work = std::move(work), done = std::move(done)]() mutable {
                                work();
                                done.set_value();
                            }),
                            finished});
        return finished;
    }
    ~measuring_threads() {
        for (running& r : running_) r.thread.join();
    }

  private:
    struct running {
        std::thread thread;
        std::shared_future<void> finished;
    };
    std::mutex mutex_;
    std::vector<running> running_;
};

measuring_threads& measuring() {
    static measuring_threads threads;
    return threads;
}

std::atomic<bool> wisdom_ignored{false};

// Plans are made holding planner_lock; `flags` add to FFTW_PRESERVE_INPUT out of place.
void* plan_shape(const fftw_library& api, const fft_shape& shape, unsigned threads, void* input,
                 void* output, unsigned flags) {
    std::vector<int> n(shape.sizes.begin(), shape.sizes.end());
    const int batch = static_cast<int>(shape.batch);
    const int distance = static_cast<int>(shape.elements() / shape.batch);
    api.plan_with_nthreads(static_cast<int>(threads));
    void* plan = api.plan_many_dft(static_cast<int>(n.size()), n.data(), batch, input, nullptr, 1,
                                   distance, output, nullptr, 1, distance,
                                   shape.inverse ? fftw_backward : fftw_forward,
                                   flags | (input == output ? 0 : fftw_preserve_input));
    api.plan_with_nthreads(1);  // FFTW's default again, for the program's own plans
    return plan;
}

}  // namespace

/// A shape's plans on a number of threads, out of place [0] and in place [1], shared by its
/// transforms and by the threads measuring them: a transform made while its shape is measured
/// (kiln::fft's plans go with their last kiln::fft) runs the estimated plan, not waiting for
/// the planner.
struct fftw_transform::kept_plans {
    std::mutex mutex;
    std::shared_ptr<void> plans[2];
    bool measured[2] = {false, false};
    std::shared_future<void> measuring[2];
};

struct fftw_transform::chosen_plan {
    std::shared_ptr<void> plan;
    fftw_plan_origin origin;
};

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
    : library_(library),
      shape_(shape),
      threads_(threads),
      read_wisdom_(!wisdom_ignored.load()),
      kept_(read_wisdom_ ? plans_of(shape, threads) : std::make_shared<kept_plans>()) {}

std::shared_ptr<fftw_transform::kept_plans> fftw_transform::plans_of(const fft_shape& shape,
                                                                     unsigned threads) {
    std::string key = std::to_string(threads) + (shape.double_precision ? " double" : " float") +
                      (shape.inverse ? " inverse" : " forward") + " batch " +
                      std::to_string(shape.batch);
    for (std::size_t n : shape.sizes) key += " " + std::to_string(n);
    static std::mutex mutex;
    static std::map<std::string, std::weak_ptr<kept_plans>> shapes;
    std::lock_guard lock(mutex);
    if (std::shared_ptr<kept_plans> found = shapes[key].lock()) return found;
    std::erase_if(shapes, [](const auto& entry) { return entry.second.expired(); });
    auto made = std::make_shared<kept_plans>();
    shapes[key] = made;
    return made;
}

fftw_transform::~fftw_transform() = default;

fftw_transform::chosen_plan fftw_transform::plan_for(void* input, void* output) const {
    const bool in_place = input == output;
    if (library_.alignment_of(input) != 0 || library_.alignment_of(output) != 0) {
        // Planned on the arrays themselves, which estimating leaves untouched.
        void* once;
        {
            const planner_lock planning;
            once = plan_shape(library_, shape_, threads_, input, output, fftw_estimate);
        }
        return {kept(library_, once), fftw_plan_origin::once};
    }
    {
        std::lock_guard lock(kept_->mutex);
        if (kept_->plans[in_place])
            return {kept_->plans[in_place], kept_->measured[in_place]
                                                ? fftw_plan_origin::measured
                                                : fftw_plan_origin::estimated};
    }
    // The first call: the measured plan where FFTW has the wisdom for it, else an estimated one
    // at once (a 2^20-point measuring took 2 s on 2 cores) while a thread measures.
    void* plan = nullptr;
    bool measured = false;
    {
        const planning_arrays arrays(library_, shape_, in_place);
        const planner_lock planning;
        if (read_wisdom_) {
            plan = plan_shape(library_, shape_, threads_, arrays.input(), arrays.output(),
                              fftw_measure | fftw_wisdom_only);
            measured = plan != nullptr;
        }
        if (!plan)
            plan = plan_shape(library_, shape_, threads_, arrays.input(), arrays.output(),
                              fftw_estimate);
    }
    std::shared_ptr<void> made = kept(library_, plan);
    std::lock_guard lock(kept_->mutex);
    if (!kept_->plans[in_place]) {  // else a call beside this one made it first
        kept_->plans[in_place] = std::move(made);
        kept_->measured[in_place] = measured;
        if (!measured && kept_->plans[in_place]) start_measuring(in_place);
    }
    return {kept_->plans[in_place],
            kept_->measured[in_place] ? fftw_plan_origin::measured : fftw_plan_origin::estimated};
}

void fftw_transform::start_measuring(bool in_place) const {
    auto work = [&library = library_, shape = shape_, threads = threads_, in_place, plans = kept_] {
        try {
            void* plan;
            {
                const planning_arrays arrays(library, shape, in_place);
                const planner_lock planning;
                plan = plan_shape(library, shape, threads, arrays.input(), arrays.output(),
                                  fftw_measure);
                if (plan) export_wisdom(library);
            }
            std::shared_ptr<void> measured = kept(library, plan);
            if (!measured) return;
            {
                std::lock_guard lock(plans->mutex);
                plans->plans[in_place].swap(measured);
                plans->measured[in_place] = true;
            }
            // `measured` now holds the estimated plan, destroyed after the last call running it.
        } catch (const std::exception&) {  // no memory to measure in: the estimated plan stays
        }
    };
    try {
        kept_->measuring[in_place] = measuring().start(std::move(work));
    } catch (const std::exception&) {  // no thread (or memory): the estimated plan stays
    }
}

void fftw_transform::wait_for_measuring() const {
    std::shared_future<void> measuring[2];
    {
        std::lock_guard lock(kept_->mutex);
        std::copy(std::begin(kept_->measuring), std::end(kept_->measuring), measuring);
    }
    for (const std::shared_future<void>& done : measuring)
        if (done.valid()) done.wait();
}

fftw_plan_origin fftw_transform::execute(void* input, void* output) const {
    const chosen_plan chosen = plan_for(input, output);
    if (!chosen.plan)
        throw error("fftw_plan_many_dft", 0, "KILN_FFT_HOST_LIBRARY",
                    "FFTW made no plan for this shape");
    library_.execute_dft(chosen.plan.get(), input, output);
    if (shape_.inverse) {
        const std::size_t count = shape_.elements();
        const double factor = double(shape_.batch) / double(count);
        if (shape_.double_precision)
            scale<double>(output, count, factor, threads_);
        else
            scale<float>(output, count, static_cast<float>(factor), threads_);
    }
    return chosen.origin;
}

scoped_fftw_wisdom_ignored::scoped_fftw_wisdom_ignored()
    : previous_(wisdom_ignored.exchange(true)) {}
scoped_fftw_wisdom_ignored::~scoped_fftw_wisdom_ignored() {
    wisdom_ignored.store(previous_);
}

}  // namespace kiln::detail
