// SPDX-License-Identifier: Apache-2.0
// What kiln::fft, rfft and irfft return: a term of vector expressions (`u = ifft(K * fft(rhs))`).
//
// plan(input) does not run the transform. Assigned to a vector (`y = plan(expression)`), the term
// transforms straight into it; inside a larger expression (`y = 2 * fft(x) + z`) it is a node
// whose value is the transform, computed into one temporary (a block of the temporary pool)
// when the statement launches, after every operand has been checked.
#pragma once
#pragma GCC visibility push(default)

#include <algorithm>
#include <cstddef>
#include <kiln/detail/algo/fft_plan.hpp>
#include <kiln/detail/temporary_pool.hpp>
#include <kiln/error.hpp>
#include <kiln/vector.hpp>
#include <memory>
#include <optional>
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>

namespace kiln::detail {

/// Throws invalid_argument_error unless `v` has `size` elements, all on `dev`.
template <class V>
void check_fft_operand(const vector<V>& v, std::size_t size, const device& dev, const char* role) {
    if (v.size() != size)
        throw invalid_argument_error("kiln::fft",
                                     std::string(role) + " has " + std::to_string(v.size()) +
                                         " elements, the plan expects " + std::to_string(size));
    if (v.part_count() != 1 || !(v.queue().device() == dev))
        throw invalid_argument_error(
            "kiln::fft", std::string(role) + " is not on the plan's device " + dev.name());
}

/// Throws invalid_argument_error unless the input expression has `size` elements, all on q's
/// device. Enqueues nothing.
template <class Node>
void check_fft_input(const Node& input, std::size_t size, const queue& q) {
    operand_check check("kiln::fft input");
    input.check(check);
    check.sized(size, "the FFT plan's input");
    check.single_device(q, "the FFT plan");
}

/// The first pass's view of an input expression: its text, converted to Complex, and its
/// arguments. Collecting the arguments runs the FFT terms inside the expression.
template <class Complex, class Node>
fft_input_expression fft_input_of(const Node& input) {
    fft_input_expression result;
    result.key = typeid(Node).name();
    result.write = [input](source_builder& b) {
        generator g(b);
        std::string value = convert_value<Complex, typename Node::value_type>(b, input.generate(g));
        return fft_input_text{g.statements(), std::move(value)};
    };
    argument_list args(0, 0);
    input.collect(args);
    result.arguments = std::move(args).take();
    return result;
}

/// Whether kernel arguments include `storage`'s memory (a first pass that read the memory it
/// writes would race with itself).
inline bool reads_memory(const std::vector<kernel_argument>& arguments,
                         const buffer_storage& storage) {
    return std::any_of(arguments.begin(), arguments.end(), [&](const kernel_argument& a) {
        return a.memory && a.memory == storage.shared_memory();
    });
}

/// Where a term's value lives while the statement reading it runs: a pool block, or a vector
/// where the plan cannot write a block (irfft, or an unfused input). The block goes back to the
/// pool after everything enqueued so far, the statement's kernels included.
template <class T>
struct fft_result {
    temporary_lease block;
    vector<T> values;
    std::optional<queue> block_queue;

    fft_result() = default;
    fft_result(const fft_result&) = delete;
    fft_result& operator=(const fft_result&) = delete;
    ~fft_result() { release(); }
    void release() noexcept {
        if (block.empty() || !block_queue) return;
        try {
            block.release_after(*block_queue, block_queue->marker());
        } catch (...) {
            // Without a marker the block goes back as it is: only a later user of another
            // queue could see it before the statement ran, and the marker itself failed.
        }
        block = temporary_lease();
    }
    /// A block of `count` values of T on q, replacing what was held.
    const buffer_storage& acquire(const queue& q, std::size_t count) {
        release();
        values = vector<T>();
        block = temporary_pool::acquire(q, count * sizeof(T));
        block_queue = q;
        return block.bytes().storage();
    }
    /// A new vector of `count` values of T on q, replacing what was held.
    vector<T>& fresh(const queue& q, std::size_t count) {
        release();
        values = vector<T>(q, count);
        return values;
    }
    void pass(argument_list& args) const {
        if (block.empty())
            args.buffer(values.part(0));
        else
            args.buffer(block.bytes());
    }
};

/// plan(input) for a kiln::fft, rfft or irfft plan: see the top of this file. Plan provides
/// input_size(), output_size(), plan_queue(), assign(input, plain, target) and
/// evaluate(input, plain, result); `plain` is the input vector when the input is one.
template <class Plan, class Node>
class [[nodiscard]] fft_term : public expression_tag {
  public:
    using value_type = typename Plan::output_type;
    using input_vector = vector<typename Plan::input_type>;

    fft_term(const Plan& plan, Node input, const input_vector* plain = nullptr)
        : plan_(&plan),
          input_(std::move(input)),
          plain_(plain),
          result_(std::make_shared<fft_result<value_type>>()) {
        check_fft_input(input_, plan_->input_size(), plan_->plan_queue());
    }

    // As a node of a larger expression: the transform computed when the statement launches.
    std::string generate(generator& g) const {
        const std::string name = g.new_name();
        g.parameter("global const " + opencl_type_name<value_type>() + "*", name);
        return name + "[idx]";
    }
    void collect(argument_list& args) const {
        plan_->evaluate(input_, plain_, *result_);
        result_->pass(args);
    }
    void check(operand_check& c) const {
        check_fft_input(input_, plan_->input_size(), plan_->plan_queue());
        c.single_device(plan_->plan_queue(), "an FFT's result");
        c.sized(plan_->output_size(), "an FFT's result");
    }

    // As a whole statement, `target = plan(input)`: the transform written into target (a
    // default-constructed target gets a vector on the plan's queue first).
    void assign_to(vector<value_type>& target) const {
        check_fft_input(input_, plan_->input_size(), plan_->plan_queue());
        if (target.part_count() == 0)
            target = vector<value_type>(plan_->plan_queue(), plan_->output_size());
        check_fft_operand(target, plan_->output_size(), plan_->plan_queue().device(), "the target");
        plan_->assign(input_, plain_, target);
    }
    /// `vector<...> y = plan(x)`: the transform in a new vector on the plan's queue.
    operator vector<value_type>() const {
        vector<value_type> result;
        assign_to(result);
        return result;
    }

  private:
    const Plan* plan_;
    Node input_;
    const input_vector* plain_;
    std::shared_ptr<fft_result<value_type>> result_;  // shared by the copies in a statement
};

}  // namespace kiln::detail
#pragma GCC visibility pop
