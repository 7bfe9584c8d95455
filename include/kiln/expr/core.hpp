// SPDX-License-Identifier: Apache-2.0
// What every vector expression is made of: the node protocol, operands, scalars and checks.
//
// An expression is a tree of small value types (nodes). Each node can
//   - generate(generator&): declare the kernel parameters and helper definitions it needs and
//     return its per-element value as OpenCL C text. The text depends only on the node's type,
//     never on run-time values, so one kernel per expression type serves every call;
//   - collect(argument_list&): push its run-time arguments (buffers, scalars) in the same order
//     as generate() declared the parameters;
//   - check(operand_check&): report its size, where its data lives and which vectors it reads
//     (at other positions than the element computed, too), so that mismatches and targets read
//     elsewhere are caught, with a clear message, before anything is enqueued.
#pragma once
#pragma GCC visibility push(default)

#include <complex>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <kiln/detail/element_storage.hpp>
#include <kiln/detail/source_builder.hpp>
#include <kiln/error.hpp>
#include <kiln/runtime/buffer.hpp>
#include <kiln/runtime/program.hpp>
#include <kiln/runtime/queue.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace kiln {

/// Element types of kiln::vector: numbers, kiln vector types (float4...) and KILN_STRUCTs. The
/// storage types (half, bfloat16, float8_e4m3, float8_e5m2) take part in expressions as float.
template <class T>
concept vector_value = std::same_as<T, float> || std::same_as<T, double> ||
    detail::is_narrow_float_v<T> || std::same_as<T, std::int32_t> ||
    std::same_as<T, std::uint32_t> || std::same_as<T, std::int64_t> ||
    std::same_as<T, std::uint64_t> || std::same_as<T, std::complex<float>> ||
    std::same_as<T, std::complex<double>> || detail::is_vec_v<T> || detail::declared_struct<T>;

template <vector_value T>
class vector;

/// Host values that may appear in an expression; each becomes a kernel argument.
template <class T>
concept scalar_value = (std::is_arithmetic_v<T> && !std::same_as<T, long double>) ||
                       std::same_as<T, std::complex<float>> ||
                       std::same_as<T, std::complex<double>> || detail::is_vec_v<T>;

/// Every expression node derives from this empty class, so that argument-dependent lookup finds
/// kiln's operators and functions for nodes as it does for kiln::vector.
struct expression_tag {};

namespace detail {

/// One device's share of a vector: elements [begin, begin + size) live on `queue`'s device.
struct part_extent {
    kiln::queue queue;
    std::size_t begin = 0;
    std::size_t size = 0;
};
using layout = std::vector<part_extent>;

/// Keys under which shared parts of an expression (tagged terminals, temporaries) are declared
/// once per kernel.
enum class shared_kind : std::uint64_t { tag = 1, temporary = 2 };
constexpr std::uint64_t shared_key(shared_kind kind, int id) {
    return (static_cast<std::uint64_t>(kind) << 32) | static_cast<std::uint32_t>(id);
}

/// What one statement of a fused group (kiln::fused, kiln/expr/fused.hpp) is generated with:
/// a prefix that keeps its names apart from the other statements', the vector each of its
/// parameters stands for (in the order they are declared and collected; null for the others),
/// and the registers in which earlier statements of the group left the elements they stored,
/// by the vector stored. A vector is named by an address of its own, the same in all three.
/// copy_if's kernels, which read two expressions, are generated with one of no prefix and no
/// registers: their vectors are what they share (src/expr/vectors_passed_once.hpp).
struct fused_context {
    std::string prefix{};
    std::span<const void* const> parameter_vectors{};
    std::span<const std::pair<const void*, std::string>> registers{};
    /// The kernel's parameters so far, by the vector each stands for: a vector met again is no
    /// new parameter but another name for the first (source_builder::parameter_alias), and the
    /// launch passes each vector once.
    std::vector<std::pair<const void*, std::string>>* declared = nullptr;
};

/// The state of generating one kernel from an expression.
///
/// A kernel body may also be generated lane by lane, for work-items that handle several
/// consecutive elements with one wide (16-byte) load per vector: each lane is one more pass over
/// the same expression with its own generator, whose parameters were already declared by the
/// first, element-by-element pass (the names match because every pass walks the tree in the
/// same order), and whose vectors read from the wide loads.
///
/// Or in vector form, for chunked loops on CPU devices: one more pass, after the element-by-element
/// one, in which every value is an OpenCL C vector of `width` consecutive elements from idx on
/// (vload, broadcast scalars, vector maths). Only nodes with a vector form (has_vector_form) take
/// part; one may still decline at generation time (a user body that would mean something else
/// over vectors), and the statement then keeps its element loop alone.
/// How a kernel's passes write what the device could compute in more than one way, so that an
/// element's bits depend on its operands alone: not on whether it fell in a vector step, a
/// 16-byte step or the element loop, nor on whether its statement ran alone or in a fused group
/// (kiln::fused promises the eager bits). element_rules_for sets them per device.
struct element_rules {
    /// Bytes of the chunked loop's vector form (launch_policy::vector_bytes), 0 for none: maths
    /// built-ins of the element loop are then called in their vector form too, with the argument
    /// in every lane, since PoCL's scalar built-ins round otherwise than its vector ones (exp,
    /// atan and others: 1 ulp), which are the same whatever the other lanes hold.
    std::size_t vector_bytes = 0;
    /// Multiplies, adds and subtracts of float and double written as the rounded operations or
    /// the fused multiply-add they stand for (OpenCL C's FP_CONTRACT ON: a product contracts
    /// into the sum or difference it is an operand of), for compilers that otherwise contract
    /// as they see fit: NVRTC (--fmad=true) leaves some pairs to ptxas, which joins them or not
    /// by where they land among other instructions.
    bool explicit_contraction = false;
    /// Whether a product may contract into the sum it feeds at all; not in reproducible mode
    /// (kiln::determinism::reproducible), where every device rounds every product.
    bool contraction = true;
};

struct launch_policy;
struct target_features;
/// The element rules of kernels generated under `policy` for `target` (src/expr/launch.cpp),
/// in reproducible mode where `reproducible`: no contraction, explicit or left to the compiler.
element_rules element_rules_for(const launch_policy& policy, const target_features& target,
                                bool reproducible = false);

/// Lanes of an OpenCL C vector of `element_bytes` elements filling at most `vector_bytes`
/// (2, 4, 8 or 16), 0 where there is no room for two.
constexpr unsigned vector_lanes_for(std::size_t vector_bytes, std::size_t element_bytes) {
    unsigned lanes = 1;
    while (lanes < 16 && lanes * 2 * element_bytes <= vector_bytes) lanes *= 2;
    return lanes > 1 ? lanes : 0;
}

class generator {
  public:
    explicit generator(source_builder& builder) : source(builder) {}
    generator(source_builder& builder, unsigned lane, unsigned lanes)
        : source(builder), lane_(lane), lanes_(lanes) {}
    struct vector_pass {
        unsigned width;
    };
    generator(source_builder& builder, vector_pass pass)
        : source(builder), vector_width_(pass.width) {}
    generator(source_builder& builder, const fused_context& fused)
        : source(builder), fused_(&fused) {}

    source_builder& source;

    /// A fresh parameter name: p0, p1...
    std::string new_name() {
        std::string name = local_name("p");
        name += std::to_string(next_++);
        return name;
    }
    /// `base` as a name of this statement's own: itself, or prefixed in a fused group, whose
    /// statements share one kernel (tags and temporaries of equal ids in two statements).
    std::string local_name(std::string_view base) const {
        return fused_ ? fused_->prefix + std::string(base) : std::string(base);
    }
    /// Declares `type name` as a kernel parameter (lane and vector passes declare nothing).
    void parameter(const std::string& type, const std::string& name) {
        if (lane_ || vector_width_) return;
        if (fused_) {
            const std::size_t k = parameter_names_.size();
            parameter_names_.push_back(name);
            if (const void* vector =
                    k < fused_->parameter_vectors.size() ? fused_->parameter_vectors[k] : nullptr;
                vector && fused_->declared) {
                for (const auto& [known, first] : *fused_->declared)
                    if (known == vector) return source.parameter_alias(type, name, first);
                fused_->declared->emplace_back(vector, name);
            }
        }
        source.parameter(type + " " + name);
    }
    /// In a fused group: the register holding the element that an earlier statement stored to
    /// the vector of parameter `name`, which the statement reads at its own index instead.
    std::optional<std::string> forwarded(const std::string& name) const {
        if (!fused_) return std::nullopt;
        for (std::size_t k = 0; k < parameter_names_.size(); ++k) {
            if (parameter_names_[k] != name) continue;
            if (k >= fused_->parameter_vectors.size() || !fused_->parameter_vectors[k]) break;
            for (const auto& [vector, register_name] : fused_->registers)
                if (vector == fused_->parameter_vectors[k]) return register_name;
            break;
        }
        return std::nullopt;
    }
    /// A statement each element runs before the values that refer to it (temporaries).
    void statement(std::string text) { statements_.push_back(std::move(text)); }
    const std::vector<std::string>& statements() const noexcept { return statements_; }
    /// The condition under which the element stores to the target just generated (a
    /// permutation's index inside its vector); the statement takes it with take_store_guard().
    void store_guard(std::string condition) { store_guard_ = std::move(condition); }
    std::string take_store_guard() { return std::exchange(store_guard_, {}); }
    /// True the first time `key` is met in this kernel (in this lane).
    bool first_use(std::uint64_t key) {
        for (auto seen : seen_)
            if (seen == key) return false;
        seen_.push_back(key);
        return true;
    }

    /// The lane being generated, if this is a lane pass.
    std::optional<unsigned> lane() const noexcept { return lane_; }
    /// A vector parameter read or written through wide accesses of `lanes` elements of type
    /// `element_type`.
    struct wide_access {
        std::string name, wide_type;
    };
    /// In a lane pass: this lane's component of the wide load (or store) of vector `name`.
    std::string wide_element(const std::string& name, const std::string& element_type, bool store) {
        auto& accesses = store ? wide_stores_ : wide_loads_;
        bool known = false;
        for (const auto& a : accesses) known = known || a.name == name;
        if (!known) accesses.push_back({name, element_type + std::to_string(lanes_)});
        const std::string component = lanes_ <= 4
                                          ? std::string(1, "xyzw"[*lane_])
                                          : "s" + std::string(1, "0123456789abcdef"[*lane_]);
        return name + (store ? "_out." : "_in.") + component;
    }
    const std::vector<wide_access>& wide_loads() const noexcept { return wide_loads_; }
    const std::vector<wide_access>& wide_stores() const noexcept { return wide_stores_; }
    /// In a lane pass: the elements per step.
    unsigned lanes() const noexcept { return lanes_; }

    /// Stencils as constants of the kernel (launch_policy::stencil_windows), set by the statement
    /// for all its passes.
    void set_stencil_windows(bool on) noexcept { stencil_windows_ = on; }
    bool stencil_windows() const noexcept { return stencil_windows_; }
    /// A node reads neighbours of its element (a 1-D stencil): without stencil_windows the
    /// statement keeps its element loop.
    void note_neighbour_reads() noexcept { neighbour_reads_ = true; }
    bool neighbour_reads() const noexcept { return neighbour_reads_; }
    /// A statement each work-item runs once before its loop (values kept in registers).
    void prologue(std::string text) { prologue_.push_back(std::move(text)); }
    const std::vector<std::string>& prologue() const noexcept { return prologue_; }
    /// In lane pass 0: a statement each step runs once before its lanes (a stencil's window), in
    /// which kiln_j is the step.
    void step_statement(std::string text) { step_statements_.push_back(std::move(text)); }
    const std::vector<std::string>& step_statements() const noexcept { return step_statements_; }

    /// The element rules this pass follows (a vector pass's built-ins are vectors already).
    void follow(const element_rules& rules) noexcept { rules_ = rules; }
    /// Lanes in which an element pass calls a maths built-in of `element_bytes` arguments (its
    /// vector form, every lane the same), 0 for a scalar call.
    unsigned builtin_lanes(std::size_t element_bytes) const noexcept {
        return vector_width_ ? 0 : vector_lanes_for(rules_.vector_bytes, element_bytes);
    }
    bool explicit_contraction() const noexcept { return rules_.explicit_contraction; }

    /// In a vector pass: the elements per value.
    std::optional<unsigned> vector_width() const noexcept { return vector_width_; }
    /// The type of a value in this pass: `element_type`, or its vector in a vector pass.
    std::string value_type(const std::string& element_type) const {
        return vector_width_ ? element_type + std::to_string(*vector_width_) : element_type;
    }
    /// In a vector pass: elements whose index i has first <= i < end (long expressions) are the
    /// only ones the vector form computes as the element loop does (a stencil's interior); the
    /// others take the element loop.
    void vector_bounds(std::string first, std::string end) {
        vector_firsts_.push_back(std::move(first));
        vector_ends_.push_back(std::move(end));
    }
    const std::vector<std::string>& vector_firsts() const noexcept { return vector_firsts_; }
    const std::vector<std::string>& vector_ends() const noexcept { return vector_ends_; }
    /// In a vector pass: this statement has no vector form after all.
    void decline_vector_form() noexcept { vector_declined_ = true; }
    bool vector_declined() const noexcept { return vector_declined_; }
    /// In a vector pass: a condition (OpenCL C, true or false) without which the step's elements
    /// go through the element loop instead. Maths built-ins need finite lanes: PoCL 3.1's sin,
    /// cos, tan (float) and pow (double) over a vector holding an infinity or a NaN return wrong
    /// values in its other lanes too (0.015 off for sin; tests/expr/vector_form_test.cpp).
    void vector_condition(std::string condition) {
        vector_conditions_.push_back(std::move(condition));
    }
    const std::vector<std::string>& vector_conditions() const noexcept {
        return vector_conditions_;
    }
    /// In a vector pass: `value` (of `element_type` lanes) as a name of its own, computed before
    /// the step's values, whose lanes must all be finite for the step to take the vector form.
    std::string finite_operand(const std::string& element_type, const std::string& value) {
        const std::string name = "kiln_operand" + std::to_string(vector_conditions_.size());
        statement("const " + value_type(element_type) + " " + name + " = " + value + ";");
        vector_condition("all(isfinite(" + name + "))");
        return name;
    }

  private:
    unsigned next_ = 0;
    std::vector<std::string> statements_;
    std::string store_guard_;
    std::vector<std::uint64_t> seen_;
    std::optional<unsigned> lane_;
    unsigned lanes_ = 1;
    std::vector<wide_access> wide_loads_, wide_stores_;
    bool stencil_windows_ = false, neighbour_reads_ = false;
    std::vector<std::string> prologue_, step_statements_;
    std::optional<unsigned> vector_width_;
    std::vector<std::string> vector_firsts_, vector_ends_, vector_conditions_;
    bool vector_declined_ = false;
    element_rules rules_;
    const fused_context* fused_ = nullptr;
    std::vector<std::string> parameter_names_;
};

/// Whether a node can be evaluated over several consecutive elements at once as OpenCL C
/// vectors (generator's vector pass): nodes say so in a static member `vector_form`; those
/// without one cannot (gathers, random numbers, reductions, user functions...). Floating-point
/// values only, of one type throughout: OpenCL C converts no vector type to another implicitly,
/// and floating-point lanes compute as the element loop does.
template <class T>
concept vector_form_value = std::same_as<T, float> || std::same_as<T, double>;
template <class Node>
constexpr bool has_vector_form() {
    if constexpr (requires { Node::vector_form; })
        return Node::vector_form;
    else
        return false;
}
/// Every node has a vector form, of value type T.
template <class T, class... Nodes>
constexpr bool vector_forms_of() {
    return vector_form_value<T> &&
           ((has_vector_form<Nodes>() && std::same_as<typename Nodes::value_type, T>)&&...);
}

/// Whether a node can be evaluated lane by lane from wide loads, and the element size of its
/// vectors: 0 when it cannot (gathers, raw pointers, complex vectors), any_width when it reads no
/// vector at all. Nodes say so in a static member `contiguous_width`; those without one cannot.
inline constexpr std::size_t any_width = ~std::size_t{0};
constexpr std::size_t combine_widths(std::size_t a, std::size_t b) {
    if (a == 0 || b == 0) return 0;
    if (a == any_width) return b;
    if (b == any_width) return a;
    return a == b ? a : 0;
}
template <class Node>
constexpr std::size_t width_of() {
    if constexpr (requires { Node::contiguous_width; })
        return Node::contiguous_width;
    else
        return 0;
}
template <class... Nodes>
constexpr std::size_t combined_width() {
    std::size_t width = any_width;
    ((width = combine_widths(width, width_of<Nodes>())), ...);
    return width;
}

/// The device form of a host scalar: bool travels as int.
template <class T>
using device_scalar_t = std::conditional_t<std::is_same_v<T, bool>, std::int32_t, T>;

/// Gives an empty list of arguments (vectors) the storage of a list that a launch on this thread
/// finished with (recycle_argument_list, recycle_vector_list), or room for `capacity`: statements
/// run again and again (a time stepper's) allocate no lists after their first runs. Lists of
/// arguments are larger than the allocations a heap serves fastest (a kernel_argument is 112
/// bytes; a Lorenz step's fused launch takes 47).
void reuse_argument_list(std::vector<kernel_argument>& arguments, std::size_t capacity);
void reuse_vector_list(std::vector<const void*>& vectors, std::size_t capacity);
/// Keeps the storage of a list for reuse on this thread; what it held is released now.
void recycle_argument_list(std::vector<kernel_argument>&& arguments) noexcept;
void recycle_vector_list(std::vector<const void*>&& vectors) noexcept;

/// The run-time arguments of one launch on one part of the data.
class argument_list {
  public:
    /// `capacity`: how many arguments the launch takes, where the caller knows (its kernel's
    /// parameters), so that collecting them allocates once.
    argument_list(std::size_t part, std::size_t part_begin,
                  std::size_t capacity = typical_arguments)
        : part_(part), part_begin_(part_begin) {
        reuse_argument_list(args_, capacity);
    }
    /// For a statement of a fused group: also records which vector each argument is.
    struct identify_vectors {};
    argument_list(std::size_t part, std::size_t part_begin, identify_vectors)
        : part_(part), part_begin_(part_begin), identifying_(true) {
        reuse_argument_list(args_, typical_held_arguments);
        reuse_vector_list(vectors_, typical_held_arguments);
    }
    /// Lists not taken go back for reuse.
    ~argument_list() {
        recycle_argument_list(std::move(args_));
        recycle_vector_list(std::move(vectors_));
    }
    argument_list(const argument_list&) = delete;
    argument_list& operator=(const argument_list&) = delete;

    /// Which part of a multi-device layout this launch covers, and its first element's index.
    std::size_t part() const noexcept { return part_; }
    std::size_t part_begin() const noexcept { return part_begin_; }

    template <class T>
    void scalar(const T& value) {
        set_argument(next(), static_cast<device_scalar_t<T>>(value));
    }
    template <class T, access A>
    void buffer(const kiln::buffer<T, A>& memory) {
        set_argument(next(), memory);
    }
    template <class T>
    void local(std::size_t count) {
        set_argument(next(), kiln::local<T>(count));
    }
    /// Mirrors generator::first_use, so that shared parts pass their arguments once.
    bool first_use(std::uint64_t key) {
        for (auto seen : seen_)
            if (seen == key) return false;
        seen_.push_back(key);
        return true;
    }
    /// The argument just pushed is vector `vector` (its layout's address) read or written at
    /// the element's own index; what fused groups forward from register to register.
    void vector_identity(const void* vector) {
        if (identifying_) vectors_.back() = vector;
    }
    /// The vector of each argument (null for the others), when identifying; taken from the list.
    std::vector<const void*> take_argument_vectors() { return std::move(vectors_); }
    std::vector<kernel_argument> take() && { return std::move(args_); }
    /// The arguments collected, for a launch that takes them as they are.
    std::span<const kernel_argument> arguments() const noexcept { return args_; }
    /// The same, for a launch that changes them first (packed_arguments::pass).
    std::vector<kernel_argument>& arguments_to_change() noexcept { return args_; }

  private:
    /// Room for the arguments of nearly every launch, so that collecting them allocates once
    /// instead of growing the list argument by argument; a statement held by a fused group,
    /// whose kernel is not known yet, has room for the most of a Lorenz RK4 step's (its final
    /// update of a multivector<double, 3>: 29).
    static constexpr std::size_t typical_arguments = 12, typical_held_arguments = 32;

    std::size_t part_, part_begin_;
    std::vector<kernel_argument> args_;
    std::vector<std::uint64_t> seen_;
    bool identifying_ = false;
    /// When identifying, per argument: the vector it reads or writes at the element's index, or
    /// null.
    std::vector<const void*> vectors_;

    /// A new argument at the end of the list (and its place among the vectors).
    kernel_argument& next() {
        if (identifying_) vectors_.push_back(nullptr);
        return args_.emplace_back();
    }
};

/// Collects what the operands of one statement say about their sizes, devices and vectors, and
/// rejects disagreements, and targets read at other positions, with invalid_argument_error.
class operand_check {
  public:
    /// `call` names the statement in error messages. A literal (what assignments pass) is kept
    /// as it is, so that a statement that passes its checks makes no string of it.
    explicit operand_check(const char* call) : literal_call_(call) {
        reuse_vector_list(vectors_, typical_vectors);
    }
    explicit operand_check(std::string call) : call_(std::move(call)) {
        reuse_vector_list(vectors_, typical_vectors);
    }
    ~operand_check() { recycle_vector_list(std::move(vectors_)); }
    operand_check(const operand_check&) = default;
    operand_check& operator=(const operand_check&) = default;

    /// A vector read or written element by element: the size and the split over devices must
    /// agree with every other such operand. `parts` is the vector's own layout (vector::layout()),
    /// which also identifies the vector for the aliasing checks below.
    void elementwise(const layout& parts, std::size_t size);
    /// A size without data of its own (element_index with a size, views).
    void sized(std::size_t size, std::string_view what);
    /// A vector read or written at computed positions (raw pointers, permutations, slices), by
    /// its own layout: only on a single device, the one the rest of the statement runs on.
    /// `mirrored`: every element at another position than its own but the middle one
    /// (kiln::reverse), so that a statement that also writes or reads the vector elsewhere
    /// races whatever its index.
    void gathered(const layout& parts, std::string_view what, bool mirrored = false);
    /// Data of `what` on q's device alone (an FFT's result, an inlined product's rows), which
    /// the rest of the statement must share.
    void single_device(const kiln::queue& q, std::string_view what);
    /// The statement runs on this queue (reductions of expressions with no vector in them).
    void on_queue(const kiln::queue& q);

    /// Whether `vector` (its layout) is among the vectors checked so far, read elsewhere included.
    bool involves(const layout& vector) const;
    /// `vector` is read at positions other than the element being computed (a stencil's
    /// neighbours, by `what`); the second form says so of every vector `operand` checked (a
    /// product's operand, read at the columns of each row).
    void read_elsewhere(const layout& vector, std::string_view what);
    void read_elsewhere(const operand_check& operand, std::string_view what);
    /// Run-time values that the statement's kernel text depends on (a stencil's width and
    /// centre), to tell its kernels apart in the cache (kernel_cache::get).
    void kernel_variant(std::string_view part) {
        variant_ += part;
        variant_ += ';';
    }
    const std::string& kernel_variant() const noexcept { return variant_; }
    /// Whether every vector of the statement is read and written at the element's own index
    /// alone, on the element-wise operands' split, and its kernel text depends on types alone:
    /// what a statement needs to join a fused group (kiln::fused).
    bool elementwise_only() const noexcept {
        return elementwise_ && !single_queue_ && read_elsewhere_.empty() && variant_.empty();
    }
    /// `vector` is written by the statement, whose reads are all checked: refused if it is read
    /// elsewhere, or read and written where one of the two is mirrored, since work-items would
    /// read elements that others have already overwritten.
    void written(const layout& vector) const;
    /// One target of a statement: its vector's layout and the member it stores ("" for the whole
    /// element, ".x" or ".mass" for kiln::component and fields).
    struct written_target {
        const layout* vector;
        std::string member;
    };
    /// The targets of one statement (tie): refused if two write one vector (the same member, or
    /// a whole element), whose stores to one element would leave either value.
    void written_once(std::initializer_list<written_target> targets) const;

    /// Where the statement runs: the element-wise operands' split, or one part on the device of
    /// the gathered data or given queue. Throws if the size or the device is unknown. The
    /// reference lives as long as this check and the vectors it saw.
    const layout& launch_layout() const;
    /// The queue of the statement's first part or single device, known even when it has no
    /// elements (for results that do not depend on them, e.g. reductions of empty lines).
    std::optional<kiln::queue> first_queue() const;

  private:
    [[noreturn]] void fail(const std::string& why) const;
    void check_device(const kiln::device& dev, std::string_view what) const;

    struct elsewhere_read {
        const layout* vector;
        std::string what;
    };
    /// Room for the vectors of nearly every statement, checked without growing the list: one
    /// entry per vector operand (an RK4 update of a multivector<double, 3> has 18), since
    /// finding a vector met before would cost more than the room.
    static constexpr std::size_t typical_vectors = 24;

    const char* literal_call_ = nullptr;
    std::string call_, variant_;
    /// launch_layout() when it is no vector's own: no elements, or one part on a given queue.
    mutable layout made_layout_;
    std::optional<std::size_t> size_;
    /// The layout of each vector operand, by address.
    std::vector<const void*> vectors_;
    std::vector<elsewhere_read> read_elsewhere_;
    /// The vectors seen through mirrored views (gathered), and by which.
    std::vector<elsewhere_read> mirrored_;
    const layout* elementwise_ = nullptr;
    std::optional<kiln::queue> single_queue_;
    std::string single_queue_source_;
    std::optional<kiln::queue> empty_operand_queue_;
};

/// The node protocol described at the top of this file.
template <class E>
concept expression_node = std::derived_from<E, expression_tag> && std::copy_constructible<E> &&
    requires(const E& e, generator& g, argument_list& a, operand_check& c) {
    typename E::value_type;
    { e.generate(g) } -> std::same_as<std::string>;
    e.collect(a);
    e.check(c);
};

/// How a non-node operand (kiln::vector) becomes a node; specialised next to the type.
template <class X>
struct terminal_for;

template <class X>
concept has_terminal = requires(const X& x) {
    { terminal_for<X>::make(x) } -> expression_node;
};

template <class X>
concept node_like = expression_node<X> || has_terminal<X>;

/// A host value passed to the kernel as an argument, so that changing it does not recompile.
template <class T>
class scalar_terminal : public expression_tag {
  public:
    using value_type = T;
    static constexpr std::size_t contiguous_width = any_width;
    static constexpr bool vector_form = vector_form_value<T>;
    explicit scalar_terminal(const T& value) : value_(value) {}

    std::string generate(generator& g) const {
        auto name = g.new_name();
        declare(g, name);
        return value_of(g, name);
    }
    void collect(argument_list& args) const { pass(args); }
    void check(operand_check&) const {}

    // The protocol of terminals that kiln::tag can share.
    void declare(generator& g, const std::string& name) const {
        g.parameter(opencl_type_name<T>(), name);
    }
    // Broadcast in vector form: built-ins such as pow take no scalar beside a vector.
    std::string value_of(generator& g, const std::string& name) const {
        if (!g.vector_width()) return name;
        return "((" + g.value_type(opencl_type_name<T>()) + ")(" + name + "))";
    }
    void pass(argument_list& args) const { args.scalar(value_); }

  private:
    T value_;
};

template <class X>
auto as_node(const X& x) {
    if constexpr (expression_node<X>) {
        return x;
    } else if constexpr (has_terminal<X>) {
        return terminal_for<X>::make(x);
    } else {
        static_assert(scalar_value<X>, "not a vector expression, vector or scalar");
        return scalar_terminal<X>(x);
    }
}

template <class X>
using node_t = decltype(as_node(std::declval<const X&>()));

/// The value type of an operand: of its node, or the scalar's own type.
template <class X>
struct operand_value {
    using type = X;
};
template <class X>
requires node_like<X>
struct operand_value<X> {
    using type = typename node_t<X>::value_type;
};
template <class X>
using operand_value_t = typename operand_value<X>::type;

template <class T>
struct real_of {
    using type = T;
};
template <class T>
struct real_of<std::complex<T>> {
    using type = T;
};
template <class T>
using real_of_t = typename real_of<T>::type;

/// A host scalar next to an expression of value type V takes V's type (2.0 * x stays float when
/// x is float; x + 1 stays ulong when x is ulong), except that a floating-point scalar next to an
/// integer expression keeps its type, as in C++ (i * 0.5 is double).
template <class S, class V>
struct adopted_scalar {
    using type = S;
};
template <class S, class V>
requires std::is_arithmetic_v<S> &&
    (!std::is_same_v<S, bool>)&&(is_complex_v<V> || std::is_floating_point_v<V> ||
                                 (std::is_integral_v<V> && std::is_integral_v<S> &&
                                  !std::is_same_v<V, bool>)) struct adopted_scalar<S, V> {
    using type = V;
};

/// Beside a vector type, a host scalar takes its component type: v * 2 multiplies a float4 by
/// 2.0f, as OpenCL C widens a scalar of the component type.
template <class S, class V>
requires std::is_arithmetic_v<S> && is_vec_v<V>
struct adopted_scalar<S, V> {
    using type = typename V::value_type;
};

/// The node of `x` placed beside an operand of type Other: scalars adopt Other's value type.
template <class Other, class X>
auto as_node_beside(const X& x) {
    if constexpr (node_like<X>) {
        return as_node(x);
    } else {
        using S = typename adopted_scalar<X, operand_value_t<Other>>::type;
        return scalar_terminal<S>(static_cast<S>(x));
    }
}

/// The value type of operand X once placed beside Other (scalars adopt Other's type).
template <class X, class Other>
using beside_value_t =
    typename decltype(as_node_beside<Other>(std::declval<const X&>()))::value_type;

// --- complex numbers ---------------------------------------------------------------------------

/// Defines the complex helpers for float2 or double2 (components: real, imaginary). Functions
/// rather than vector operators, because float2 * float2 is component-wise in OpenCL C and
/// undefined in CUDA.
template <class Real>
void define_complex_helpers(source_builder& source) {
    const std::string r = opencl_type_name<Real>();
    const std::string c = r + "2";
    const std::string s = "_" + r;
    source.define(
        "complex" + s,
        c + " kiln_cmake" + s + "(" + r + " re, " + r + " im) { " + c +
            " z; z.x = re; z.y = im; return z; }\n" + c + " kiln_cadd" + s + "(" + c + " a, " + c +
            " b) { return kiln_cmake" + s + "(a.x + b.x, a.y + b.y); }\n" + c + " kiln_csub" + s +
            "(" + c + " a, " + c + " b) { return kiln_cmake" + s + "(a.x - b.x, a.y - b.y); }\n" +
            c + " kiln_cmul" + s + "(" + c + " a, " + c + " b) { return kiln_cmake" + s +
            "(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }\n" + c + " kiln_cdiv" + s + "(" + c +
            " a, " + c + " b) {\n    const " + r +
            " d = b.x * b.x + b.y * b.y;\n    return kiln_cmake" + s +
            "((a.x * b.x + a.y * b.y) / d, (a.y * b.x - a.x * b.y) / d);\n}\n" + c + " kiln_cneg" +
            s + "(" + c + " a) { return kiln_cmake" + s + "(-a.x, -a.y); }\n" + c + " kiln_conj" +
            s + "(" + c + " a) { return kiln_cmake" + s + "(a.x, -a.y); }\n" + r + " kiln_cabs" +
            s + "(" + c + " a) { return hypot(a.x, a.y); }\n" + r + " kiln_carg" + s + "(" + c +
            " a) { return atan2(a.y, a.x); }\n");
}

/// The name of complex helper `operation` (cadd, cmul...) for complex type C, defining it.
template <class C>
std::string complex_helper(source_builder& source, std::string_view operation) {
    using Real = typename C::value_type;
    define_complex_helpers<Real>(source);
    return "kiln_" + std::string(operation) + "_" + opencl_type_name<Real>();
}

template <class T>
concept real_number = std::is_arithmetic_v<T>;
template <class T>
concept number = real_number<T> || is_complex_v<T>;

/// Whether a value of type From may be stored as To: any real to real or complex, and complex
/// to complex. Complex to real needs an explicit real(), imag() or abs(). Vector types and
/// structs are stored only as themselves.
template <class To, class From>
concept storable_as = (number<To> && number<From> && (!is_complex_v<From> || is_complex_v<To>)) ||
                      (std::same_as<To, From> && (is_vec_v<To> || declared_struct<To>));

/// OpenCL C text converting `value` (of type From) to To.
template <class To, class From>
requires storable_as<To, From> std::string convert_value(source_builder& source,
                                                         const std::string& value) {
    if constexpr (std::is_same_v<To, From>) {
        return value;
    } else if constexpr (is_complex_v<To>) {
        using R = typename To::value_type;
        const std::string make = complex_helper<To>(source, "cmake");
        const std::string cast = "(" + opencl_type_name<R>() + ")";
        if constexpr (is_complex_v<From>)
            return make + "(" + cast + "(" + value + ").x, " + cast + "(" + value + ").y)";
        else
            return make + "(" + cast + "(" + value + "), 0)";
    } else {
        return "((" + opencl_type_name<To>() + ")(" + value + "))";
    }
}

}  // namespace detail

/// Anything that can stand in an expression besides host scalars: vectors, views, expressions.
template <class E>
concept vector_expression = detail::node_like<std::remove_cvref_t<E>>;

/// One operand of an operator or function: an expression or a host scalar.
template <class X>
concept expression_operand = vector_expression<X> || scalar_value<std::remove_cvref_t<X>>;

/// The value type of an expression's elements.
template <vector_expression E>
using expression_value_t = typename detail::node_t<std::remove_cvref_t<E>>::value_type;

}  // namespace kiln
#pragma GCC visibility pop
