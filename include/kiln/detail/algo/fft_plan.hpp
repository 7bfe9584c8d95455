// SPDX-License-Identifier: Apache-2.0
// The device side of kiln::fft: a plan's kernel launches, tables and scratch, for any precision.
//
// A plan is a list of steps (kernel launches and copies) over symbolic buffers: the input, the
// output, two scratch buffers for the Stockham ping-pong, and two for Bluestein's convolutions.
// The steps, the twiddle and chirp tables (computed on the host in double, uploaded once) and
// the program are fixed when the plan is made; running it only binds buffers and launches.
#pragma once
#pragma GCC visibility push(default)

#include <cstddef>
#include <cstdint>
#include <kiln/detail/algo/fft_kernels.hpp>
#include <kiln/detail/algo/fft_tuning.hpp>
#include <kiln/runtime/buffer.hpp>
#include <kiln/runtime/device.hpp>
#include <kiln/runtime/event.hpp>
#include <kiln/runtime/program.hpp>
#include <kiln/runtime/queue.hpp>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::detail {

class algorithm_program;

/// What a plan transforms: 1 to 3 sizes (row-major: the last one is contiguous), a batch of such
/// arrays one after another, the direction, and the precision.
struct fft_shape {
    std::vector<std::size_t> sizes;
    std::size_t batch = 1;
    bool inverse = false;
    bool double_precision = false;
    std::size_t elements() const;  // sizes' product times batch
};

/// The buffers a step reads and writes.
enum class fft_buffer : std::uint8_t { input, output, scratch0, scratch1, work0, work1 };

/// A step that does two passes in one pipelined kernel (fft_pipeline_kernel): the second pass's
/// integer parameters and scale (the step's own are the first pass's) and the number of chunks.
struct fft_pipeline_step {
    fft_pipeline_kernel kernel;
    std::vector<std::uint64_t> second_values;
    double second_scale = 1;
    std::size_t chunks = 0;
    /// The ring's elements: slots x chunk_lines lines of n.
    std::size_t ring_elements() const;
    /// The kernel's counters (uint) for a first pass of `lines` lines.
    std::size_t counters(std::size_t lines) const;
};

/// One kernel launch (or a copy, when kernel is empty) of a plan: an element-wise kernel of the
/// shared program, or a pass kernel (`pass`) of its own program, one group per
/// pass->lines_per_group of `work_items` lines.
struct fft_step {
    std::string kernel;
    fft_buffer source{}, target{};
    std::size_t work_items = 0;
    std::vector<std::uint64_t> values;  // the kernel's integer parameters, in order
    double scale = 1;
    std::optional<fft_pass_kernel> pass = std::nullopt;
    const algorithm_program* program = nullptr;                // the pass kernel's, once built
    std::optional<fft_pipeline_step> pipeline = std::nullopt;  // when kernel is a pipeline's
};

/// `steps` with each pair of passes that make whole contiguous lines (a line's first and last
/// pass, one after the other) replaced by one fft_pipeline_kernel step under `policy`, where
/// it applies: several chunks of chunk_bytes of lines (element_bytes: the complex size).
std::vector<fft_step> fft_pipelined(const std::vector<fft_step>& steps,
                                    const fft_pipeline_policy& policy, std::size_t element_bytes);

/// While one lives, plans made use 64-bit element indices, as plans of more than 2^32 elements
/// do: lets tests run that path on small data.
class scoped_wide_fft_indices {
  public:
    scoped_wide_fft_indices();
    ~scoped_wide_fft_indices();
    scoped_wide_fft_indices(const scoped_wide_fft_indices&) = delete;
    scoped_wide_fft_indices& operator=(const scoped_wide_fft_indices&) = delete;

  private:
    bool previous_;
};

/// While one lives, plans made take every register pass's kernel (fft_register_pass) to run at
/// most `work_items` work-items per group, as NVIDIA's OpenCL reported for its 16384-point kernel
/// (256 of 512): lets tests run the fallback to passes through local memory anywhere.
class scoped_fft_register_pass_limit {
  public:
    explicit scoped_fft_register_pass_limit(std::size_t work_items);
    ~scoped_fft_register_pass_limit();
    scoped_fft_register_pass_limit(const scoped_fft_register_pass_limit&) = delete;
    scoped_fft_register_pass_limit& operator=(const scoped_fft_register_pass_limit&) = delete;

  private:
    std::size_t previous_;
};

/// While one lives, plans made on CPU devices use the per-length pass kernels that GPUs use
/// (several radix stages per pass in local memory, lines loaded and stored in the GPUs' order)
/// instead of one radix per pass: lets tests
/// run that path on every device.
class scoped_fft_length_kernels {
  public:
    scoped_fft_length_kernels();
    ~scoped_fft_length_kernels();
    scoped_fft_length_kernels(const scoped_fft_length_kernels&) = delete;
    scoped_fft_length_kernels& operator=(const scoped_fft_length_kernels&) = delete;

  private:
    bool previous_;
};

/// How a plan transforms: kiln's kernels, or a host library on the buffers' host memory (FFTW,
/// on CPU devices where it is installed; src/algo/fft/fft_host_library.hpp). `automatic` takes the
/// host library wherever it can run, unless KILN_FFT_STRATEGY says `kernels`.
enum class fft_strategy { automatic, kernels, host_library };

/// While one lives, plans made use `strategy` (tests force each): host_library wherever it can
/// run, kernels elsewhere.
class scoped_fft_strategy {
  public:
    explicit scoped_fft_strategy(fft_strategy strategy);
    ~scoped_fft_strategy();
    scoped_fft_strategy(const scoped_fft_strategy&) = delete;
    scoped_fft_strategy& operator=(const scoped_fft_strategy&) = delete;

  private:
    fft_strategy previous_;
};

class fftw_transform;

/// A plan's input given as a vector expression, read inside the first pass: its kernel text,
/// under `key` (the expression's type, which decides the text), and its kernel arguments in the
/// order the text declares them.
struct fft_input_expression {
    std::string key;
    fft_input_writer write;
    std::vector<kernel_argument> arguments;
};

/// What a plan is made from on its device: the plan cache's key. `policy` is plan_fft's under
/// the overrides in force, the rest the scoped_fft_* classes' and the strategy in force.
struct fft_plan_key {
    fft_shape shape;
    fft_policy policy;
    bool wide_indices = false;
    bool length_kernels = false;
    std::size_t register_pass_limit = SIZE_MAX;
    fft_strategy strategy = fft_strategy::automatic;
    std::string key() const;
};

class fft_plan {
  public:
    /// The plan for `shape` on q's device, shared by every kiln::fft made for the same shape on
    /// that device while one of them lives (tables are uploaded once, kernels built once per
    /// device and precision). Throws invalid_argument_error for zero or too many sizes, and for
    /// a shape whose buffers the device cannot allocate (before any table is computed).
    static std::shared_ptr<const fft_plan> make(const queue& q, const fft_shape& shape,
                                                const char* call);

    /// Transforms `input` into `output` (they may be the same memory) on q.
    event run(const queue& q, const buffer_storage& input, const buffer_storage& output) const;
    /// Whether the first step can read an input expression: a radix pass or Bluestein's chirp
    /// multiplication, not sizes that are all 1 (a copy, no kernel).
    bool fuses_input() const noexcept;
    /// Transforms the expression into `output` (out of place), evaluating it inside the first
    /// step, whose kernel is built once per step and expression type. Needs fuses_input().
    event run(const queue& q, const fft_input_expression& input,
              const buffer_storage& output) const;

    /// Real transforms, after the forward one: the first n/2 + 1 of every n elements along
    /// the last size (the rest are their conjugates when the input was real).
    event keep_half(const queue& q, const buffer_storage& full, const buffer_storage& half,
                    const event& after) const;
    /// Real transforms, before the inverse one: the full spectrum of real data from its half.
    event expand_half(const queue& q, const buffer_storage& half, const buffer_storage& full) const;
    /// The same from a half spectrum given as an expression, read by the expansion kernel (built
    /// once per expression type).
    event expand_half(const queue& q, const fft_input_expression& half,
                      const buffer_storage& full) const;

    const fft_shape& shape() const noexcept { return shape_; }
    /// The out-of-place steps, for tests of how a shape was planned.
    const std::vector<fft_step>& steps() const noexcept { return out_of_place_; }
    /// The queues whose pipeline counters the plan holds, for tests that they go with their
    /// queue (let go at the next pipeline launch).
    std::size_t counter_queues() const;

    /// Whether this plan runs on the host library rather than kiln's kernels.
    bool on_host_library() const noexcept { return host_library_ != nullptr; }
    /// On the host library, waits for the measured plans that the first calls started (their
    /// calls run an estimated plan meanwhile): what a benchmark should time.
    void wait_for_host_measuring() const;

    /// The plan of `key` (its shape, policy, index width and strategy) on q's device.
    fft_plan(const queue& q, const fft_plan_key& key);
    ~fft_plan();

  private:
    event run_steps(const queue& q, const std::vector<fft_step>& steps, const buffer_storage* input,
                    const fft_input_expression* expression, const buffer_storage& output) const;
    event launch(const queue& q, const fft_step& step, const buffer_storage& source,
                 const buffer_storage& target, const event& after) const;
    /// The launch of `step` from `program`, `args` holding its input (`in`, or an expression's
    /// arguments).
    event launch(const queue& q, const fft_step& step, kernel_binding args,
                 const buffer_storage& target, const event& after,
                 const algorithm_program& program) const;
    /// Binds what every step kernel takes after its input: the target, the tables, the step's
    /// work-items and `values` (a..e) as element indices, and its scale.
    void bind_step(kernel_binding& args, const fft_step& step, const buffer_storage& target,
                   std::span<const std::uint64_t> values) const;
    /// Binds an element index as the kernels take it (32 or 64 bits), and a real in their
    /// precision.
    void bind_index(kernel_binding& args, std::string_view slot, std::uint64_t value) const;
    void bind_real(kernel_binding& args, std::string_view slot, double value) const;
    /// The program of the element-wise kernels (fft_kernel_names): the plan's, or, on the host
    /// library, built at its first use.
    const algorithm_program& element_program(const device& dev) const;
    /// The launch of a pipeline step (fft_pipeline_step), with its ring and zeroed counters.
    event launch_pipeline(const queue& q, const fft_step& step, kernel_binding args,
                          const buffer_storage& target, const event& after,
                          const algorithm_program& program) const;

    fft_shape shape_;
    std::size_t element_bytes_;
    bool wide_index_ = false;               // 64-bit element indices in the kernels
    std::size_t step_work_group_size_ = 0;  // of the steps that are not passes (plan_fft)
    const algorithm_program* program_ = nullptr;
    buffer<std::byte> tables_;
    std::size_t work_elements_ = 0;  // per Bluestein work buffer
    std::vector<fft_step> out_of_place_, in_place_;
    std::unique_ptr<fftw_transform> host_library_;  // set when the plan runs on it
    // Pipeline steps' counters, per live queue: zero between launches (the kernel's last group
    // resets them), so that a launch needs no fill before it. Launches with one set take turns:
    // in queue order, or, on an out-of-order queue, each after the one before (`last`).
    // A queue's set goes with the queue (at the next launch on any queue), and a later queue
    // at the same address gets a new one.
    struct queue_counters {
        std::weak_ptr<const queue_impl> queue;
        buffer<std::uint32_t> counters;
        event last;
    };
    mutable std::mutex counters_mutex_;
    mutable std::map<const void*, queue_counters> counters_;
};

}  // namespace kiln::detail
#pragma GCC visibility pop
