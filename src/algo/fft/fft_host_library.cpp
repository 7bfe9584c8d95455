// SPDX-License-Identifier: Apache-2.0
// kiln::fft's host-library strategy: FFTW through dlopen (fft_host_library.hpp).
#include "fft_host_library.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <complex>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <future>
#include <kiln/error.hpp>
#include <kiln/runtime/cache.hpp>
#include <list>
#include <map>
#include <string>
#include <system_error>
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
    if (const std::optional<std::string> text = read_fftw_wisdom(api.double_precision);
        text && !text->empty())
        api.import_wisdom_from_string(text->c_str());  // FFTW checks it; bad is ignored
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

/// The thread that makes and destroys every plan of kiln's, one job at a time in the order given,
/// since FFTW's planner is not thread-safe. A call that needs a plan waits for its job; a plan let
/// go while the thread measures (seconds) is destroyed after that, and nobody waits for it.
class planner_thread {
  public:
    /// Work and the promise of its end. Unlike a packaged_task's, the promise's state does not
    /// hold the work, whose captures (a shape's plans, which keep the future) go with the job.
    struct job {
        std::function<void()> work;
        std::promise<void> done;

        void operator()() noexcept {
            try {
                work();
                done.set_value();
            } catch (...) {
                done.set_exception(std::current_exception());
            }
        }
    };

    planner_thread() : thread_([this] { serve(); }) {}

    /// Queues `work`; the future says when it is done and holds what it threw.
    std::future<void> run(std::function<void()> work) {
        std::list<job> queued;
        std::future<void> done = queued.emplace_back(job{std::move(work), {}}).done.get_future();
        post(queued);
        return done;
    }

    /// Queues the jobs of `prepared`, made beforehand so that a destructor can post them. Once
    /// the thread has stopped (at exit) they run on the caller's, the only one left planning.
    void post(std::list<job>& prepared) noexcept {
        {
            std::lock_guard lock(mutex_);
            if (serving_) {
                jobs_.splice(jobs_.end(), prepared);
                wake_.notify_one();
                return;
            }
        }
        for (job& stopped : prepared) stopped();
    }

    /// Returns when the jobs queued so far, and those they queue, are done and the thread is
    /// gone.
    void stop() noexcept {
        {
            std::lock_guard lock(mutex_);
            stopping_ = true;
        }
        wake_.notify_one();
        thread_.join();
    }

  private:
    void serve() {
        std::unique_lock lock(mutex_);
        for (;;) {
            wake_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
            if (jobs_.empty()) {
                serving_ = false;
                return;
            }
            std::list<job> next;
            next.splice(next.end(), jobs_, jobs_.begin());
            lock.unlock();
            next.front()();
            next.clear();  // what the job held may let plans go, which posts
            lock.lock();
        }
    }

    std::mutex mutex_;
    std::condition_variable wake_;
    std::list<job> jobs_;
    bool stopping_ = false;
    bool serving_ = true;
    std::thread thread_;  // last: it starts serving once the rest is made
};

/// Started by the first transform, after the libraries have read their wisdom (library_for). At
/// exit the thread finishes the measurings queued, whose wisdom the next process reads, and
/// stops. Never destroyed: plans of static objects may be let go later still.
planner_thread& planner() {
    static planner_thread* const thread = new planner_thread;
    static const struct stopper {
        ~stopper() { thread->stop(); }
    } stop_at_exit;
    return *thread;
}

/// An FFTW plan, destroyed on the planner thread when its last call is done.
class kept_plan {
  public:
    kept_plan(const fftw_library& api, void* plan) : plan_(plan) {
        destroy_.push_back({[&api, plan] { api.destroy_plan(plan); }, {}});
    }
    ~kept_plan() { planner().post(destroy_); }
    kept_plan(const kept_plan&) = delete;
    kept_plan& operator=(const kept_plan&) = delete;
    void* get() const { return plan_; }

  private:
    void* plan_;
    std::list<planner_thread::job> destroy_;
};

/// On the planner thread: `plan` (may be null) kept for the calls that run it.
std::shared_ptr<const kept_plan> keep(const fftw_library& api, void* plan) {
    if (!plan) return nullptr;
    try {
        return std::make_shared<const kept_plan>(api, plan);
    } catch (...) {
        api.destroy_plan(plan);
        throw;
    }
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
    // plan with FFTW themselves (kiln's own plans are made on its planner thread).
    void (*make_planner_thread_safe)() = nullptr;
    if (load(threads, (p + "make_planner_thread_safe").c_str(), make_planner_thread_safe))
        make_planner_thread_safe();
    import_wisdom(*api);  // before kiln's planner thread starts (fftw_transform::make)
    return api;
}

/// Never destroyed, like the libraries: a static object made before kiln's first transform lets
/// its plans go after the statics made since.
const fftw_library* library_for(bool double_precision) {
    static const fftw_library* const single = open_library(false).release();
    static const fftw_library* const twice = open_library(true).release();
    return double_precision ? twice : single;
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

std::atomic<bool> wisdom_ignored{false};

// On the planner thread; `flags` add to FFTW_PRESERVE_INPUT out of place.
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
/// transforms and by the planner's measuring of them: a transform made while its shape is measured
/// (kiln::fft's plans go with their last kiln::fft) runs the estimated plan, not waiting for
/// the planner.
struct fftw_transform::kept_plans {
    std::mutex mutex;
    std::shared_ptr<const kept_plan> plans[2];
    bool measured[2] = {false, false};
    std::shared_future<void> measuring[2];
};

struct fftw_transform::chosen_plan {
    std::shared_ptr<const kept_plan> plan;
    fftw_plan_origin origin;
};

std::unique_ptr<fftw_transform> fftw_transform::make(const fft_shape& shape, unsigned threads) {
    const fftw_library* library = library_for(shape.double_precision);
    if (!library || shape.batch > std::size_t(INT_MAX) ||
        shape.elements() / shape.batch > std::size_t(INT_MAX))
        return nullptr;
    try {
        planner();
    } catch (const std::system_error&) {  // no thread to plan on: the kernels serve
        return nullptr;
    }
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
        std::shared_ptr<const kept_plan> once;
        planner()
            .run([&] {
                once = keep(library_,
                            plan_shape(library_, shape_, threads_, input, output, fftw_estimate));
            })
            .get();
        return {std::move(once), fftw_plan_origin::once};
    }
    {
        std::lock_guard lock(kept_->mutex);
        if (kept_->plans[in_place])
            return {kept_->plans[in_place], kept_->measured[in_place]
                                                ? fftw_plan_origin::measured
                                                : fftw_plan_origin::estimated};
    }
    // The first call: the measured plan where FFTW has the wisdom for it, else an estimated one
    // at once (a 2^20-point measuring took 2 s on 2 cores) while the planner thread measures.
    std::shared_ptr<const kept_plan> made;
    bool measured = false;
    planner()
        .run([&] {
            const planning_arrays arrays(library_, shape_, in_place);
            void* plan = nullptr;
            if (read_wisdom_) {
                plan = plan_shape(library_, shape_, threads_, arrays.input(), arrays.output(),
                                  fftw_measure | fftw_wisdom_only);
                measured = plan != nullptr;
            }
            if (!plan)
                plan = plan_shape(library_, shape_, threads_, arrays.input(), arrays.output(),
                                  fftw_estimate);
            made = keep(library_, plan);
        })
        .get();
    chosen_plan chosen;
    bool measure = false;
    {
        std::lock_guard lock(kept_->mutex);
        if (!kept_->plans[in_place]) {  // else a call beside this one made it first
            kept_->plans[in_place] = std::move(made);
            kept_->measured[in_place] = measured;
            measure = !measured && kept_->plans[in_place];
        }
        chosen = {kept_->plans[in_place], kept_->measured[in_place] ? fftw_plan_origin::measured
                                                                    : fftw_plan_origin::estimated};
    }
    if (measure) start_measuring(in_place);
    return chosen;
}

void fftw_transform::start_measuring(bool in_place) const {
    auto work = [&library = library_, shape = shape_, threads = threads_, in_place, plans = kept_] {
        std::shared_ptr<const kept_plan> measured;
        {
            const planning_arrays arrays(library, shape, in_place);
            measured = keep(library, plan_shape(library, shape, threads, arrays.input(),
                                                arrays.output(), fftw_measure));
        }
        if (!measured) return;
        export_wisdom(library);
        std::lock_guard lock(plans->mutex);
        plans->plans[in_place].swap(measured);
        plans->measured[in_place] = true;
        // `measured` now holds the estimated plan, destroyed after the last call running it.
    };
    // What the measuring throws (no memory to measure in) is dropped: the estimated plan stays.
    try {
        std::shared_future<void> measuring = planner().run(std::move(work)).share();
        std::lock_guard lock(kept_->mutex);
        kept_->measuring[in_place] = std::move(measuring);
    } catch (const std::exception&) {
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
    library_.execute_dft(chosen.plan->get(), input, output);
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

// FFTW's wisdom is a few hundred bytes a shape: 16 MiB holds tens of thousands of shapes. A FIFO
// or a link to /dev/zero there once hung the first transform or ended the process (bad_alloc).
std::optional<std::string> read_fftw_wisdom(bool double_precision) {
    constexpr std::size_t max_wisdom_bytes = std::size_t(16) << 20;
    const std::filesystem::path file = wisdom_file(double_precision);
    if (file.empty()) return std::nullopt;
    own_file_read found = read_own_file(file.string(), max_wisdom_bytes);
    if (!found.file) return std::nullopt;
    return std::move(found.file->bytes);
}

}  // namespace kiln::detail
