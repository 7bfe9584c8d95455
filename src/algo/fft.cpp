// kiln::fft plans: sizes split into local-memory passes or Bluestein, host tables, the plan cache.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <complex>
#include <cstring>
#include <kiln/algo/algorithm_program.hpp>
#include <kiln/algo/fft_kernels.hpp>
#include <kiln/algo/fft_plan.hpp>
#include <kiln/algo/temporary_pool.hpp>
#include <kiln/algo/tuning.hpp>
#include <kiln/error.hpp>
#include <kiln/runtime/program.hpp>
#include <limits>
#include <map>
#include <mutex>
#include <numbers>
#include <optional>
#include <span>

namespace kiln::detail {
namespace {

using complex_double = std::complex<double>;
std::atomic<bool> force_wide_indices{false};

bool wide_indices_forced() {
    return force_wide_indices.load(std::memory_order_relaxed);
}
std::atomic<bool> force_length_kernels{false};
bool length_kernels_forced() {
    return force_length_kernels.load(std::memory_order_relaxed);
}
std::atomic<std::size_t> register_pass_limit{SIZE_MAX};
// The work-items per group a register pass's kernel takes: the backend's answer once built, or
// less under scoped_fft_register_pass_limit.
std::size_t register_pass_group_limit(const fft_step& step) {
    return std::min(step.program->kernel(step.kernel).max_work_group_size(),
                    register_pass_limit.load(std::memory_order_relaxed));
}
constexpr std::size_t work_group_size = 64;

// The element and index types in program cache keys: "float uint" ... "double ulong".
std::string key_types(bool double_precision, bool wide_index) {
    return std::string(double_precision ? "double" : "float") + (wide_index ? " ulong" : " uint");
}

// The radices whose product is n, or nothing if n has another prime factor.
std::optional<std::vector<std::size_t>> factor(std::size_t n) {
    std::vector<std::size_t> radices;
    for (std::size_t radix : fft_radices)
        while (n % radix == 0) {
            radices.push_back(radix);
            n /= radix;
        }
    if (n != 1) return std::nullopt;
    return radices;
}

// exp(i angle), with the angle given as a fraction of a full turn: numerator / denominator.
complex_double turn(double sign, std::size_t numerator, std::size_t denominator) {
    const double angle = sign * 2 * std::numbers::pi * double(numerator) / double(denominator);
    return {std::cos(angle), std::sin(angle)};
}

// A forward transform of a power-of-two length on the host, in double: Bluestein's chirp
// spectrum, so that its rounding does not add to the device's.
void host_fft(std::vector<complex_double>& x) {
    const std::size_t n = x.size();
    for (std::size_t i = 1, j = 0; i < n; ++i) {
        std::size_t bit = n >> 1;
        for (; j & bit; bit >>= 1) j ^= bit;
        j |= bit;
        if (i < j) std::swap(x[i], x[j]);
    }
    std::vector<complex_double> w;
    for (std::size_t length = 2; length <= n; length *= 2) {
        w.resize(length / 2);
        for (std::size_t k = 0; k < length / 2; ++k) w[k] = turn(-1, k, length);
        for (std::size_t start = 0; start < n; start += length)
            for (std::size_t k = 0; k < length / 2; ++k) {
                const complex_double a = x[start + k], b = x[start + k + length / 2] * w[k];
                x[start + k] = a + b;
                x[start + k + length / 2] = a - b;
            }
    }
}

// A stage maps its source (written fft_buffer::input) to its target (fft_buffer::output); the
// chain decides what they are.
using stage = std::vector<fft_step>;

// The prime factors of n, largest first (n's factors are all in fft_radices).
std::vector<std::size_t> primes_of(std::size_t n) {
    std::vector<std::size_t> primes;
    for (std::size_t p : {13, 11, 7, 5, 3, 2})
        for (; n % p == 0; n /= p) primes.push_back(p);
    return primes;
}

// Splits n into the fewest pass lengths of at most `longest`, as even as the greedy split gets
// them: each prime, largest first, goes to the length that is smallest so far.
std::vector<std::size_t> pass_lengths(std::size_t n, std::size_t longest) {
    const std::vector<std::size_t> primes = primes_of(n);
    for (std::size_t passes = 1;; ++passes) {
        std::vector<std::size_t> lengths(passes, 1);
        for (std::size_t p : primes) *std::min_element(lengths.begin(), lengths.end()) *= p;
        if (*std::max_element(lengths.begin(), lengths.end()) <= longest) {
            std::sort(lengths.begin(), lengths.end(), std::greater<>());
            return lengths;
        }
    }
}

// How the passes fit a device: local memory per group (bytes, and complex elements of the
// plan's precision), the elements a group takes when its lines are short, work-items per group
// (the policy's, and the device's most), and how many lines a group must take so that its loads
// across lines fill whole memory transactions.
struct pass_limits {
    std::size_t local_bytes, local_elements, group_elements, work_group_size, max_work_group_size,
        coalesced_lines;
    bool double_precision;
    bool radix_per_pass;          // one stage per pass, from one shared program (below)
    bool register_passes = true;  // lines longer than local memory may take fft_register_pass
};

pass_limits limits_for(const device& dev, bool double_precision) {
    const algorithm_policy policy = policy_for(algorithm::fft, dev);
    const device_properties& props = dev.properties();
    const std::size_t element_bytes = double_precision ? 16 : 8;
    // The policy counts complex floats (8 bytes). The device's limit is the hard one: on CUDA
    // the opt-in one, since passes take their local memory as an argument (dynamic shared
    // memory). Lines take 1/16 more for padding.
    const std::size_t bytes =
        std::max<std::size_t>(props.local_memory_bytes, props.shared_memory_per_block_bytes);
    const std::size_t elements = std::max<std::size_t>(
        std::min(policy.tile_size() * 8 / element_bytes, bytes * 15 / 16 / element_bytes), 16);
    const std::size_t max_group = std::max<std::size_t>(props.max_work_group_size, 1);
    const std::size_t group = std::clamp<std::size_t>(policy.work_group_size, 1, max_group);
    // Short lines: as many as give each of the policy's work-items one radix-16 butterfly.
    const std::size_t group_elements = std::min(group * fft_radices[0], elements);
    // PoCL takes about half a second to compile each local-memory pass kernel (barriers): on
    // CPUs, passes of one radix each without local memory (the caches serve any order) need
    // at most 36 small kernels per precision, where kernels per pass length would need one
    // for every length used. Tests can force the per-length kernels, laid out as on GPUs.
    const bool radix_per_pass = !dev.is_gpu() && !length_kernels_forced();
    // GPUs read global memory in 32-byte sectors; CPUs through caches, where any order serves.
    const std::size_t coalesced = radix_per_pass ? 1 : std::max<std::size_t>(32 / element_bytes, 1);
    return {bytes,     elements,  group_elements,   group,
            max_group, coalesced, double_precision, radix_per_pass};
}

// The kernel of a pass of `length` under `limits`.
fft_pass_kernel pass_kernel(std::size_t length, bool inverse, bool twiddled,
                            bool load_lines_fastest, bool store_lines_fastest,
                            const pass_limits& limits) {
    fft_pass_kernel kernel;
    kernel.length = length;
    kernel.radices = *factor(length);
    // Not fewer lines for small batches: one kernel per length serves every batch. Lines loaded
    // or stored across: at least enough to fill memory sectors. Within the local memory.
    kernel.lines_per_group = std::max<std::size_t>(limits.group_elements / length, 1);
    if (load_lines_fastest || store_lines_fastest)
        kernel.lines_per_group = std::max(kernel.lines_per_group, limits.coalesced_lines);
    while (kernel.lines_per_group > 1 &&
           fft_pass_local_bytes(kernel, limits.double_precision) > limits.local_bytes)
        --kernel.lines_per_group;
    // One butterfly of the largest radix per work-item and stage, in groups of the policy's
    // size; long lines take larger groups, with up to two radix-16 butterflies per item held in
    // registers across each stage's barrier. (One per item gave the H100's 16384-point pass
    // 1024 items of at most 64 registers each: 1250 GB/s.)
    const std::size_t elements = kernel.lines_per_group * length;
    const std::size_t largest = *std::max_element(kernel.radices.begin(), kernel.radices.end());
    const std::size_t most =
        std::min(std::max(limits.work_group_size, elements / 32), limits.max_work_group_size);
    kernel.work_group_size = std::clamp<std::size_t>(elements / largest, 1, most);
    kernel.inverse = inverse;
    kernel.twiddled = twiddled;
    kernel.load_lines_fastest = load_lines_fastest;
    kernel.store_lines_fastest = store_lines_fastest;
    return kernel;
}

class plan_builder {
  public:
    plan_builder(const fft_shape& shape, const pass_limits& limits)
        : shape_(shape), limits_(limits) {}

    // Stockham passes through local memory for a length whose factors all have radix stages,
    // each pass a stage: from source to target, or (ping_pong) alternately from source to
    // target and back. A contiguous length that fits a group's local memory takes one pass;
    // others take the fewest passes whose lengths let a group take enough lines to coalesce.
    void add_passes(std::vector<stage>& stages, std::size_t n, std::size_t stride,
                    std::size_t lines, bool inverse, double last_scale, fft_buffer first_source,
                    fft_buffer first_target, bool ping_pong) {
        const double sign = inverse ? 1 : -1;
        const bool one_pass = stride == 1 && n <= limits_.local_elements;
        const std::optional<fft_pass_kernel> in_registers =
            stride == 1 && !limits_.radix_per_pass && limits_.register_passes
                ? fft_register_pass(n, inverse, limits_.double_precision, limits_.local_elements,
                                    limits_.max_work_group_size)
                : std::nullopt;
        const std::vector<std::size_t> lengths =
            limits_.radix_per_pass ? *factor(n)
            : one_pass || in_registers
                ? std::vector<std::size_t>{n}
                : pass_lengths(n, std::max<std::size_t>(
                                      limits_.local_elements / limits_.coalesced_lines, 16));
        std::size_t done = 1;
        fft_buffer source = first_source, target = first_target;
        for (std::size_t p = 0; p < lengths.size(); ++p) {
            const std::size_t length = lengths[p];
            const std::size_t offset = table.size();
            for (std::size_t x = 0; x < length; ++x) table.push_back(turn(sign, x, length));
            if (done > 1) {
                for (std::size_t x = 0; x < length; ++x)
                    table.push_back(turn(sign, x, done * length));
                for (std::size_t y = 0; y < done; ++y)
                    table.push_back(turn(sign, y * length, done * length));
            }
            const std::size_t pass_lines = lines * (n / length);
            // A group's lines neighbour each other in memory unless each is a whole contiguous
            // array (load) or is written as one (store: the first pass of a contiguous length).
            // CPUs read through caches, where the order does not matter: one kernel for both.
            const bool coalescing = limits_.coalesced_lines > 1;
            fft_pass_kernel kernel =
                in_registers ? *in_registers
                             : pass_kernel(length, inverse, done > 1,
                                           coalescing && !(stride == 1 && length == n),
                                           coalescing && !(stride == 1 && done == 1), limits_);
            if (limits_.radix_per_pass) {
                kernel.direct = true;
                kernel.lines_per_group = kernel.work_group_size = limits_.work_group_size;
            }
            fft_step step{kernel.name(),
                          source,
                          target,
                          pass_lines,
                          {n, n / length, done, stride, offset},
                          p + 1 == lengths.size() ? last_scale : 1.0,
                          kernel,
                          nullptr};
            stages.push_back({step});
            done *= length;
            if (ping_pong) std::swap(source, target);
        }
    }

    // Bluestein's algorithm for a length n with a prime factor without a pass: a convolution
    // with the chirp exp(-sign i pi k^2 / n), done by power-of-two transforms of m >= 2n - 1.
    stage bluestein(std::size_t n, std::size_t stride, std::size_t lines, double scale) {
        std::size_t m = 1;
        while (m < 2 * n - 1) m *= 2;
        work_elements = std::max(work_elements, lines * m);
        const double sign = shape_.inverse ? 1 : -1;
        // k^2 mod 2n, exactly, so that the angle keeps its precision for large k.
        std::vector<complex_double> chirp(n);
        for (std::size_t k = 0, square = 0; k < n; ++k) {
            chirp[k] = turn(sign, square, 2 * n);
            square = (square + 2 * k + 1) % (2 * n);
        }
        const std::size_t chirp_offset = table.size();
        table.insert(table.end(), chirp.begin(), chirp.end());
        std::vector<complex_double> kernel(m);
        for (std::size_t k = 0; k < n; ++k) {
            kernel[k] = std::conj(chirp[k]);
            if (k > 0) kernel[m - k] = std::conj(chirp[k]);
        }
        host_fft(kernel);
        const std::size_t spectrum_offset = table.size();
        for (const complex_double& z : kernel) table.push_back(z / double(m));

        std::vector<stage> passes;
        stage steps;
        steps.push_back({fft_chirp_in_kernel,
                         fft_buffer::input,
                         fft_buffer::work0,
                         lines * m,
                         {n, m, stride, chirp_offset, 0},
                         1.0});
        add_passes(passes, m, 1, lines, false, 1.0, fft_buffer::work0, fft_buffer::work1, true);
        const std::size_t pass_count = passes.size();
        const fft_buffer spectrum = pass_count % 2 ? fft_buffer::work1 : fft_buffer::work0;
        const fft_buffer other =
            spectrum == fft_buffer::work0 ? fft_buffer::work1 : fft_buffer::work0;
        passes.push_back({{fft_pointwise_kernel,
                           spectrum,
                           spectrum,
                           lines * m,
                           {m, spectrum_offset, 0, 0, 0},
                           1.0}});
        add_passes(passes, m, 1, lines, true, 1.0, spectrum, other, true);
        const fft_buffer result = pass_count % 2 ? other : spectrum;
        for (const stage& pass : passes) steps.insert(steps.end(), pass.begin(), pass.end());
        steps.push_back({fft_chirp_out_kernel,
                         result,
                         fft_buffer::output,
                         lines * n,
                         {n, m, stride, chirp_offset, 0},
                         scale});
        return steps;
    }

    std::vector<complex_double> table;
    std::size_t work_elements = 0;

  private:
    const fft_shape& shape_;
    pass_limits limits_;
};

// The steps of the stages one after another, from the input to the output through the
// scratch buffers. Radix passes cannot read and write the same memory, so a single stage run
// in place goes through scratch and a copy.
std::vector<fft_step> chain(const std::vector<stage>& stages, bool in_place) {
    std::vector<fft_step> steps;
    if (stages.empty()) {
        if (!in_place) steps.push_back({"", fft_buffer::input, fft_buffer::output, 0, {}, 1.0});
        return steps;
    }
    fft_buffer current = fft_buffer::input;
    for (std::size_t i = 0; i < stages.size(); ++i) {
        const bool last = i + 1 == stages.size();
        const bool through_scratch = last && in_place && current == fft_buffer::input;
        const fft_buffer target = last && !through_scratch          ? fft_buffer::output
                                  : current == fft_buffer::scratch0 ? fft_buffer::scratch1
                                                                    : fft_buffer::scratch0;
        for (fft_step step : stages[i]) {
            if (step.source == fft_buffer::input) step.source = current;
            if (step.target == fft_buffer::output) step.target = target;
            steps.push_back(std::move(step));
        }
        current = target;
        if (through_scratch) steps.push_back({"", current, fft_buffer::output, 0, {}, 1.0});
    }
    return steps;
}

std::string describe(const fft_shape& shape) {
    std::string text = shape.double_precision ? "double" : "float";
    for (std::size_t n : shape.sizes) text.append(" ").append(std::to_string(n));
    text.append(" x").append(std::to_string(shape.batch));
    return text.append(shape.inverse ? " inverse" : " forward");
}

}  // namespace

kernel_argument fft_buffer_argument(const buffer_storage& storage) {
    kernel_argument arg;
    arg.what = kernel_argument::kind::buffer;
    arg.memory = storage.shared_memory();
    arg.buffer_device = storage.device();
    arg.buffer_mode = storage.mode();
    arg.size = storage.bytes();
    return arg;
}

scoped_wide_fft_indices::scoped_wide_fft_indices() : previous_(force_wide_indices.exchange(true)) {}
scoped_wide_fft_indices::~scoped_wide_fft_indices() {
    force_wide_indices.store(previous_);
}

scoped_fft_register_pass_limit::scoped_fft_register_pass_limit(std::size_t work_items)
    : previous_(register_pass_limit.exchange(work_items)) {}
scoped_fft_register_pass_limit::~scoped_fft_register_pass_limit() {
    register_pass_limit.store(previous_);
}

scoped_fft_length_kernels::scoped_fft_length_kernels()
    : previous_(force_length_kernels.exchange(true)) {}
scoped_fft_length_kernels::~scoped_fft_length_kernels() {
    force_length_kernels.store(previous_);
}

std::size_t fft_shape::elements() const {
    std::size_t total = batch;
    for (std::size_t n : sizes) total *= n;
    return total;
}

fft_plan::fft_plan(const queue& q, fft_shape shape)
    : shape_(std::move(shape)), element_bytes_(shape_.double_precision ? 16 : 8) {
    // Plans the steps under `limits` and builds their programs; returns the host tables.
    const auto plan = [&](const pass_limits& limits) {
        plan_builder builder(shape_, limits);
        std::vector<stage> stages;
        const std::size_t elements = shape_.elements();
        std::size_t stride = 1;
        for (std::size_t d = shape_.sizes.size(); d-- > 0;) {
            const std::size_t n = shape_.sizes[d];
            const std::size_t lines = elements / n;
            const double scale = shape_.inverse ? 1.0 / double(n) : 1.0;
            if (n > 1) {
                if (factor(n))
                    builder.add_passes(stages, n, stride, lines, shape_.inverse, scale,
                                       fft_buffer::input, fft_buffer::output, false);
                else
                    stages.push_back(builder.bluestein(n, stride, lines, scale));
            }
            stride *= n;
        }
        const fft_pipeline_policy pipeline = fft_pipeline_policy_for(q.device());
        out_of_place_ = fft_pipelined(chain(stages, false), pipeline, element_bytes_);
        in_place_ = fft_pipelined(chain(stages, true), pipeline, element_bytes_);
        work_elements_ = builder.work_elements;

        wide_index_ =
            wide_indices_forced() || std::max({elements, work_elements_, builder.table.size()}) >
                                         std::size_t{0xffffffff} - work_group_size;
        program_ = &algorithm_program_for(
            q.device(), "fft " + key_types(shape_.double_precision, wide_index_),
            fft_kernel_names(),
            [&] { return fft_program_source(shape_.double_precision, wide_index_); });
        const std::string types = key_types(shape_.double_precision, wide_index_);
        for (std::vector<fft_step>* steps : {&out_of_place_, &in_place_})
            for (fft_step& step : *steps)
                if (step.pipeline)
                    step.program = &algorithm_program_for(
                        q.device(), "fft pipeline " + types + " " + step.kernel, {step.kernel},
                        [&] {
                            return fft_pipeline_source(step.pipeline->kernel,
                                                       shape_.double_precision, wide_index_);
                        });
                else if (step.pass)
                    step.program = &algorithm_program_for(
                        q.device(), "fft pass " + types + " " + step.kernel, {step.kernel}, [&] {
                            return fft_pass_source({*step.pass}, shape_.double_precision,
                                                   wide_index_);
                        });
        return std::move(builder.table);
    };
    pass_limits limits = limits_for(q.device(), shape_.double_precision);
    std::vector<complex_double> table = plan(limits);
    // A register pass's group must start whole: where the built kernel takes fewer work-items
    // than its group (NVIDIA's OpenCL said 256 of 512, docs/fft.md), the line takes the passes
    // through local memory instead.
    const bool register_passes_fit =
        std::all_of(out_of_place_.begin(), out_of_place_.end(), [](const fft_step& step) {
            return !step.pass || step.pass->exchange_rounds == 0 ||
                   register_pass_group_limit(step) >= step.pass->work_group_size;
        });
    if (!register_passes_fit) {
        limits.register_passes = false;
        table = plan(limits);
    }

    std::vector<std::byte> bytes(std::max<std::size_t>(table.size(), 1) * element_bytes_);
    for (std::size_t i = 0; i < table.size(); ++i) {
        const complex_double z = table[i];
        if (shape_.double_precision) {
            std::memcpy(bytes.data() + i * 16, &z, 16);
        } else {
            const std::complex<float> f(float(z.real()), float(z.imag()));
            std::memcpy(bytes.data() + i * 8, &f, 8);
        }
    }
    tables_ = buffer<std::byte>(q, bytes.size());
    tables_.write(q, std::span<const std::byte>(bytes));
}

event fft_plan::run(const queue& q, const buffer_storage& input,
                    const buffer_storage& output) const {
    const bool in_place = input.memory() == output.memory();
    return run_steps(q, in_place ? in_place_ : out_of_place_, &input, nullptr, output);
}

bool fft_plan::fuses_input() const noexcept {
    if (out_of_place_.empty()) return false;
    const fft_step& first = out_of_place_.front();
    return first.pass || first.pipeline || first.kernel == fft_chirp_in_kernel;
}

event fft_plan::run(const queue& q, const fft_input_expression& input,
                    const buffer_storage& output) const {
    if (!fuses_input())
        throw invalid_argument_error("kiln::fft",
                                     "this plan's first step cannot read an expression");
    return run_steps(q, out_of_place_, nullptr, &input, output);
}

// Steps reading fft_buffer::input read `input`, or, in its place, `expression` (only the first
// step of an out-of-place chain reads the input).
event fft_plan::run_steps(const queue& q, const std::vector<fft_step>& steps,
                          const buffer_storage* input, const fft_input_expression* expression,
                          const buffer_storage& output) const {
    const std::size_t bytes = shape_.elements() * element_bytes_;
    const auto uses = [&](fft_buffer b) {
        for (const fft_step& s : steps)
            if (s.source == b || s.target == b) return true;
        return false;
    };
    temporary_lease scratch[2], work[2];
    for (int i = 0; i < 2; ++i) {
        if (uses(fft_buffer(int(fft_buffer::scratch0) + i)))
            scratch[i] = temporary_pool::acquire(q, bytes);
        if (uses(fft_buffer(int(fft_buffer::work0) + i)))
            work[i] = temporary_pool::acquire(q, work_elements_ * element_bytes_);
    }
    const auto storage = [&](fft_buffer b) -> const buffer_storage& {
        switch (b) {
            case fft_buffer::input:
                return *input;
            case fft_buffer::output:
                return output;
            case fft_buffer::scratch0:
                return scratch[0].bytes().storage();
            case fft_buffer::scratch1:
                return scratch[1].bytes().storage();
            case fft_buffer::work0:
                return work[0].bytes().storage();
            default:
                return work[1].bytes().storage();
        }
    };
    event done;
    for (const fft_step& step : steps) {
        if (step.kernel.empty()) {
            done = storage(step.source).copy_bytes(q, 0, storage(step.target), 0, bytes, done);
            continue;
        }
        if (expression && step.source == fft_buffer::input) {
            // A radix pass, or Bluestein's chirp multiplication (fuses_input).
            const algorithm_program& program = algorithm_program_for(
                q.device(),
                "fft pass " + key_types(shape_.double_precision, wide_index_) + " " + step.kernel +
                    " input " + expression->key,
                {step.kernel}, [&] {
                    return step.pipeline
                               ? fft_pipeline_source(step.pipeline->kernel, shape_.double_precision,
                                                     wide_index_, &expression->write)
                           : step.pass ? fft_pass_source({*step.pass}, shape_.double_precision,
                                                         wide_index_, &expression->write)
                                       : fft_chirp_in_source(shape_.double_precision, wide_index_,
                                                             expression->write);
                });
            done = step.pipeline ? launch_pipeline(q, step, expression->arguments,
                                                   storage(step.target), done, program)
                                 : launch(q, step, expression->arguments, storage(step.target),
                                          done, program);
            continue;
        }
        done = step.pipeline ? launch_pipeline(q, step, {fft_buffer_argument(storage(step.source))},
                                               storage(step.target), done, *step.program)
                             : launch(q, step, storage(step.source), storage(step.target), done);
    }
    for (temporary_lease* lease : {&scratch[0], &scratch[1], &work[0], &work[1]})
        if (!lease->empty()) lease->release_after(q, done);
    return done;
}

event fft_plan::launch(const queue& q, const fft_step& step, const buffer_storage& source,
                       const buffer_storage& target, const event& after) const {
    return launch(q, step, {fft_buffer_argument(source)}, target, after,
                  step.program ? *step.program : *program_);
}

event fft_plan::launch(const queue& q, const fft_step& step, std::vector<kernel_argument> inputs,
                       const buffer_storage& target, const event& after,
                       const algorithm_program& program) const {
    std::vector<kernel_argument> args = std::move(inputs);
    args.push_back(fft_buffer_argument(target));
    args.push_back(fft_buffer_argument(tables_.storage()));
    const auto index = [&](std::uint64_t value) {
        args.push_back(wide_index_ ? make_argument(value)
                                   : make_argument(static_cast<std::uint32_t>(value)));
    };
    index(step.work_items);
    for (std::size_t i = 0; i < 5; ++i) index(i < step.values.size() ? step.values[i] : 0);
    args.push_back(shape_.double_precision ? make_argument(step.scale)
                                           : make_argument(static_cast<float>(step.scale)));
    if (step.pass)
        if (const std::size_t bytes = fft_pass_local_bytes(*step.pass, shape_.double_precision)) {
            kernel_argument local;
            local.what = kernel_argument::kind::local;
            local.size = bytes;
            args.push_back(local);
        }
    const std::size_t group = step.pass ? step.pass->work_group_size : work_group_size;
    const std::size_t per_group = step.pass ? step.pass->lines_per_group : work_group_size;
    const std::size_t global = (step.work_items + per_group - 1) / per_group * group;
    return program.kernel(step.kernel).bind(std::move(args)).launch(q, global, group, {}, after);
}

// The sizes of a real transform's arrays: d x c x n, n contiguous, half = n / 2 + 1.
struct real_layout {
    std::size_t n, half, c, d;
    explicit real_layout(const fft_shape& shape)
        : n(shape.sizes.back()),
          half(n / 2 + 1),
          c(shape.sizes.size() >= 2 ? shape.sizes[shape.sizes.size() - 2] : 1),
          d(shape.sizes.size() == 3 ? shape.sizes[0] : 1) {}
};

event fft_plan::keep_half(const queue& q, const buffer_storage& full, const buffer_storage& half,
                          const event& after) const {
    const real_layout l(shape_);
    const std::size_t lines = shape_.elements() / l.n;
    return launch(q, {fft_half_kernel, {}, {}, lines * l.half, {l.n, l.half}, 1.0}, full, half,
                  after);
}

event fft_plan::expand_half(const queue& q, const buffer_storage& half,
                            const buffer_storage& full) const {
    const real_layout l(shape_);
    return launch(q, {fft_expand_kernel, {}, {}, shape_.elements(), {l.n, l.half, l.c, l.d}, 1.0},
                  half, full, {});
}

event fft_plan::expand_half(const queue& q, const fft_input_expression& half,
                            const buffer_storage& full) const {
    const real_layout l(shape_);
    const algorithm_program& program = algorithm_program_for(
        q.device(),
        "fft expand " + key_types(shape_.double_precision, wide_index_) + " input " + half.key,
        {fft_expand_kernel},
        [&] { return fft_expand_source(shape_.double_precision, wide_index_, half.write); });
    return launch(q, {fft_expand_kernel, {}, {}, shape_.elements(), {l.n, l.half, l.c, l.d}, 1.0},
                  half.arguments, full, {}, program);
}

std::shared_ptr<const fft_plan> fft_plan::make(const queue& q, const fft_shape& shape,
                                               const char* call) {
    if (shape.sizes.empty() || shape.sizes.size() > 3)
        throw invalid_argument_error(
            call, "an FFT has 1, 2 or 3 sizes, not " + std::to_string(shape.sizes.size()));
    std::size_t total = shape.batch;
    for (std::size_t n : shape.sizes) {
        if (n == 0 || total == 0)
            throw invalid_argument_error(
                call, "FFT sizes and batch must not be zero (" + describe(shape) + ")");
        if (total > std::numeric_limits<std::size_t>::max() / n)
            throw invalid_argument_error(call, "FFT too large: " + describe(shape));
        total *= n;
    }
    if (shape.double_precision && !q.device().properties().double_precision)
        throw invalid_argument_error(call,
                                     "the device has no double precision: " + q.device().name());

    const fft_pipeline_policy pipeline = fft_pipeline_policy_for(q.device());
    static std::mutex mutex;
    static std::map<std::pair<const device_impl*, std::string>, std::weak_ptr<const fft_plan>>
        plans;
    const auto key = std::make_pair(
        &q.device().impl(),
        describe(shape) + (wide_indices_forced() ? " wide" : "") +
            (length_kernels_forced() ? " lengths" : "") + " register groups " +
            std::to_string(register_pass_limit.load()) + " pipeline " +
            std::to_string(pipeline.chunk_bytes) + "x" + std::to_string(pipeline.slots) + "x" +
            std::to_string(pipeline.lag) + (pipeline.streaming ? " streaming" : "") +
            (pipeline.fine ? " fine" : ""));
    std::lock_guard lock(mutex);
    if (auto found = plans.find(key); found != plans.end())
        if (auto plan = found->second.lock()) return plan;
    auto plan = std::make_shared<const fft_plan>(q, shape);
    std::erase_if(plans, [](const auto& entry) { return entry.second.expired(); });
    plans[key] = plan;
    return plan;
}

}  // namespace kiln::detail
