// SPDX-License-Identifier: Apache-2.0
// kiln::mpi::vector: one vector over the ranks of a communicator, a part per rank, with
// reductions over all parts and 1-D stencils whose halos come from the neighbouring ranks.
//
//     kiln::mpi::environment mpi(argc, argv);
//     kiln::mpi::communicator comm;
//     kiln::queue q(kiln::mpi::local_device(comm));
//     kiln::mpi::vector<float> x(comm, q, local_size), y(comm, q, local_size);
//     y.local() = 2 * x.local() + 1;                  // element-wise: on this rank's part
//     float total = kiln::mpi::sum(comm, y.local());  // every rank gets the global sum
#pragma once
#pragma GCC visibility push(default)

#include <cstddef>
#include <cstring>
#include <kiln/mpi/communicator.hpp>
#include <kiln/mpi/exchange.hpp>
#include <kiln/stencil.hpp>
#include <kiln/vector.hpp>
#include <span>
#include <type_traits>
#include <vector>

namespace kiln::mpi {

/// A vector whose elements are split over the ranks of a communicator in rank order: each rank
/// holds its block as a kiln::vector on its own device (which may itself be split over several
/// devices of the rank). Blocks may differ in size and be empty. Element-wise expressions are
/// written on the parts (`y.local() = a * x.local()`): vectors built with the same counts line
/// up element for element.
template <vector_value T>
class vector {
  public:
    /// Collective: this rank's part gets `local_size` uninitialised elements on q.
    vector(const communicator& comm, const kiln::queue& q, std::size_t local_size)
        : comm_(comm), distribution_(comm, local_size), local_(q, local_size) {}
    /// This rank's block of `d` (which every rank passes alike), uninitialised; no
    /// communication.
    vector(const communicator& comm, const kiln::queue& q, kiln::mpi::distribution d)
        : comm_(comm),
          distribution_(one_block_per_rank(comm, std::move(d))),
          local_(q, distribution_.count(comm.rank())) {}

    /// The communicator whose ranks hold the parts.
    const communicator& comm() const noexcept { return comm_; }
    /// Which elements each rank holds.
    const kiln::mpi::distribution& distribution() const noexcept { return distribution_; }
    /// The global size: every rank's elements.
    std::size_t size() const noexcept { return distribution_.size(); }
    /// The global index of this rank's first element.
    std::size_t local_begin() const { return distribution_.begin(comm_.rank()); }

    ///@{
    /// This rank's part, an ordinary kiln::vector for expressions and algorithms.
    kiln::vector<T>& local() noexcept { return local_; }
    const kiln::vector<T>& local() const noexcept { return local_; }
    ///@}

    /// Collective: rank `root`'s `host` (size() elements there, ignored elsewhere) into the
    /// parts, staged through host memory.
    void scatter(std::span<const T> host, int root = 0) {
        std::vector<T> mine(local_.size());
        kiln::mpi::scatter<T>(comm_, distribution_, host, mine, root);
        if (!mine.empty()) local_.write(mine);
    }
    /// Collective: every part, in rank order, to rank `root` (size() elements there, none
    /// elsewhere).
    std::vector<T> gather(int root = 0) const {
        const std::vector<T> mine = local_.read();
        std::vector<T> all(comm_.rank() == root ? size() : 0);
        kiln::mpi::gather<T>(comm_, distribution_, mine, all, root);
        return all;
    }

  private:
    static kiln::mpi::distribution one_block_per_rank(const communicator& comm,
                                                      kiln::mpi::distribution d) {
        if (d.ranks() != comm.size())
            throw kiln::invalid_argument_error("kiln::mpi::vector",
                                               "the distribution's blocks are not one per rank");
        return d;
    }

    communicator comm_;
    kiln::mpi::distribution distribution_;
    kiln::vector<T> local_;
};

namespace detail {

/// Combines one reducer state per rank in rank order through MPI_Allreduce, with the reducer's
/// own host combine as a non-commutative MPI operation: every rank gets the same bits, and a
/// floating-point sum does not depend on the order in which messages arrive.
template <class Traits>
typename Traits::state allreduce_states(const communicator& comm,
                                        const typename Traits::state& local) {
    using state = typename Traits::state;
    static_assert(std::is_trivially_copyable_v<state>);
    // MPI gives `in` from lower ranks than `inout` for a non-commutative operation.
    MPI_User_function* combine = [](void* in, void* inout, int* length, MPI_Datatype*) {
        for (int i = 0; i < *length; ++i) {
            state a, b;
            std::memcpy(&a, static_cast<const char*>(in) + i * sizeof(state), sizeof(state));
            std::memcpy(&b, static_cast<char*>(inout) + i * sizeof(state), sizeof(state));
            const state combined = Traits::combine(a, b);
            std::memcpy(static_cast<char*>(inout) + i * sizeof(state), &combined, sizeof(state));
        }
    };
    MPI_Op raw_operation = MPI_OP_NULL;
    check(MPI_Op_create(combine, 0, &raw_operation), "MPI_Op_create");
    const kiln::detail::handle<operation_traits> operation(raw_operation);
    const auto type = element_type(sizeof(state));
    state result = local;
    check(MPI_Allreduce(&local, &result, 1, type.get(), operation.get(), comm.get()),
          "MPI_Allreduce");
    return result;
}

template <class Reducer, class E>
auto reduce_across_ranks(const communicator& comm, const E& local_expression) {
    using traits = typename Reducer::template on<expression_value_t<E>>;
    const auto local = kiln::detail::start_reduction<Reducer>(std::nullopt, local_expression,
                                                              "kiln::mpi::reduce", true)
                           .get_state();
    return traits::finish(allreduce_states<traits>(comm, local));
}

}  // namespace detail

/// Collective: reduces an expression over this rank's parts on every rank, and every rank gets
/// the result for all of them. Each rank's partial state (before the reducer's finish, so a
/// Kahan sum keeps its compensation) is combined in rank order through MPI_Allreduce.
/// In reproducible mode (kiln::scoped_determinism) floating-point sums, minima and maxima run
/// their reproducible forms, as kiln::reduce does: the same bits for any number of ranks.
template <class Reducer, vector_expression E>
requires reducer_for<Reducer, expression_value_t<E>>
auto reduce(const communicator& comm, const E& local_expression) {
    return kiln::detail::run_in_current_mode<Reducer, expression_value_t<E>>(
        [&]<class R>() { return detail::reduce_across_ranks<R>(comm, local_expression); });
}

// clang-format off
///@{
/// Collective: kiln's reductions (kiln::sum, kiln::minimum...) of every rank's local expression,
/// each rank's state combined across the ranks; every rank gets the result.
template <vector_expression E> requires reducer_for<reducers::sum, expression_value_t<E>>
auto sum(const communicator& comm, const E& e) { return reduce<reducers::sum>(comm, e); }
template <vector_expression E> requires reducer_for<reducers::kahan_sum, expression_value_t<E>>
auto kahan_sum(const communicator& comm, const E& e) { return reduce<reducers::kahan_sum>(comm, e); }
template <vector_expression E> requires reducer_for<reducers::minimum, expression_value_t<E>>
auto minimum(const communicator& comm, const E& e) { return reduce<reducers::minimum>(comm, e); }
template <vector_expression E> requires reducer_for<reducers::maximum, expression_value_t<E>>
auto maximum(const communicator& comm, const E& e) { return reduce<reducers::maximum>(comm, e); }
template <vector_expression E> requires reducer_for<reducers::minmax, expression_value_t<E>>
auto minmax(const communicator& comm, const E& e) { return reduce<reducers::minmax>(comm, e); }
template <vector_expression E> requires reducer_for<reducers::count, expression_value_t<E>>
auto count(const communicator& comm, const E& e) { return reduce<reducers::count>(comm, e); }
template <vector_expression E> requires reducer_for<reducers::any_of, expression_value_t<E>>
bool any(const communicator& comm, const E& e) { return reduce<reducers::any_of>(comm, e); }
template <vector_expression E> requires reducer_for<reducers::all_of, expression_value_t<E>>
bool all(const communicator& comm, const E& e) { return reduce<reducers::all_of>(comm, e); }
///@}
// clang-format on

namespace detail {

/// s applied on the device to [head | block[first, first + count) | tail], where head and tail
/// come from host memory.
template <stencil_value T>
kiln::vector<T> stencil_of_pieces(const kiln::stencil<T>& s, const kiln::queue& q,
                                  std::span<const T> head, const kiln::vector<T>& block,
                                  std::size_t first, std::size_t count, std::span<const T> tail) {
    kiln::vector<T> pieces(q, head.size() + count + tail.size());
    if (!head.empty()) pieces.part(0).write(q, 0, head);
    if (count > 0) block.part(0).copy_to(q, first, pieces.part(0), head.size(), count);
    if (!tail.empty()) pieces.part(0).write(q, head.size() + count, tail);
    kiln::vector<T> result(q, pieces.size());
    result = pieces * s;
    return result;
}

}  // namespace detail

/// Collective: y = x * s over the whole distributed range, clamped at its global ends as
/// kiln::stencil is on one device. The elements s reaches across a rank boundary (center()
/// before, width() - center() - 1 after, from as many ranks as own them) arrive through one
/// range_exchange, staged through host memory, while the device computes the elements whose
/// window lies within the rank's own block; the few at the block's ends follow. x and y must
/// share one distribution, and each rank's stencil must be on its part's queue.
template <stencil_value T>
void apply(const kiln::stencil<T>& s, const vector<T>& x, vector<T>& y) {
    if (!(x.distribution() == y.distribution()))
        throw kiln::invalid_argument_error("kiln::mpi::apply",
                                           "x and y are distributed differently");
    if (x.local().part_count() != 1 || y.local().part_count() != 1)
        throw kiln::invalid_argument_error("kiln::mpi::apply",
                                           "a stencil's parts must each be on one device");
    const std::size_t reach_before = s.center(), reach_after = s.width() - s.center() - 1;
    const range_exchange exchange =
        range_exchange::halo(x.comm(), x.distribution(), reach_before, reach_after);
    const kiln::vector<T>& mine = x.local();
    const std::size_t count = mine.size();
    const kiln::queue& q = mine.queue();
    // Only what other ranks want leaves the device: at most the block's two ends.
    std::vector<T> owned(count);
    for (const element_range& sent : exchange.sent_ranges())
        mine.part(0).read(q, sent.first, std::span<T>(owned).subspan(sent.first, sent.size()));
    // The block's interior needs no halo: on the device while the halo travels (its ends come
    // out clamped at the block and are redone below). Not in place: the kernel reads x.
    const bool overlap = count > reach_before + reach_after && &x != &y;
    if (overlap) y.local() = mine * s;
    std::vector<T> widened(exchange.wanted().size());
    exchange.run<T>(owned, widened);
    if (count == 0) return;
    const std::size_t before = x.local_begin() - exchange.wanted().first;
    const std::span<const T> head = std::span<const T>(widened).first(before);
    const std::span<const T> tail = std::span<const T>(widened).subspan(before + count);
    const kiln::buffer<T>& target = y.local().part(0);
    if (!overlap) {
        const auto whole = detail::stencil_of_pieces(s, q, head, mine, 0, count, tail);
        whole.part(0).copy_to(q, before, target, 0, count);
        return;
    }
    const std::size_t window = reach_before + reach_after;
    if (reach_before > 0) {
        const auto front = detail::stencil_of_pieces(s, q, head, mine, 0, window, {});
        front.part(0).copy_to(q, before, target, 0, reach_before);
    }
    if (reach_after > 0) {
        const auto back = detail::stencil_of_pieces(s, q, {}, mine, count - window, window, tail);
        back.part(0).copy_to(q, reach_before, target, count - reach_after, reach_after);
    }
}

}  // namespace kiln::mpi
#pragma GCC visibility pop
