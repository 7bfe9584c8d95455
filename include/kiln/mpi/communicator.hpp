// SPDX-License-Identifier: Apache-2.0
// kiln::mpi's process layer: MPI's lifetime, communicators, errors, and failures agreed by all.
#pragma once
#pragma GCC visibility push(default)

#include <mpi.h>

#include <cstddef>
#include <functional>
#include <kiln/detail/handle.hpp>
#include <kiln/error.hpp>
#include <kiln/runtime/device.hpp>
#include <memory>
#include <string>
#include <string_view>

namespace kiln::mpi {

namespace detail {

/// Throws kiln::error naming the MPI call, the error class (MPI_ERR_...) and MPI's message
/// unless rc is MPI_SUCCESS.
void check(int rc, const char* call);

struct communicator_traits {
    using value_type = MPI_Comm;
    static MPI_Comm null() noexcept { return MPI_COMM_NULL; }
    static void release(MPI_Comm comm) noexcept;
};
using communicator_handle = kiln::detail::handle<communicator_traits>;

struct datatype_traits {
    using value_type = MPI_Datatype;
    static MPI_Datatype null() noexcept { return MPI_DATATYPE_NULL; }
    static void release(MPI_Datatype type) noexcept { MPI_Type_free(&type); }
};
struct operation_traits {
    using value_type = MPI_Op;
    static MPI_Op null() noexcept { return MPI_OP_NULL; }
    static void release(MPI_Op op) noexcept { MPI_Op_free(&op); }
};

/// One element of `element_bytes` bytes as a committed MPI type, so that counts stay in
/// elements (MPI's counts are int) and no element is ever split.
kiln::detail::handle<datatype_traits> element_type(std::size_t element_bytes);

}  // namespace detail

/// Thrown on every rank by communicator::agree when local work failed on some rank: names the
/// lowest rank that failed and carries that rank's message.
class rank_failure : public kiln::error {
  public:
    /// `message` is the failed rank's what(), which this one's what() quotes.
    rank_failure(int failed_rank, const std::string& message);
    /// The lowest rank whose local work threw.
    int failed_rank() const noexcept { return failed_rank_; }
    /// The failed rank's own what().
    const std::string& rank_message() const noexcept { return rank_message_; }

  private:
    int failed_rank_;
    std::string rank_message_;
};

/// MPI for the life of the object: MPI_Init_thread (funneled: kiln's calls come from the thread
/// that made this) in the constructor, MPI_Finalize in the destructor. Make one, first, in main.
class environment {
  public:
    /// Initialises MPI with main's arguments, which MPI may change.
    environment(int& argc, char**& argv);
    environment(const environment&) = delete;
    environment& operator=(const environment&) = delete;
    ~environment();

    /// True when the MPI library says it can send from and receive into CUDA device memory
    /// (Open MPI's MPIX_Query_cuda_support); kiln::mpi stages through the host otherwise.
    static bool cuda_aware() noexcept;
};

/// A communicator of its own (a duplicate of the one given, MPI_COMM_WORLD by default), so that
/// kiln's messages never match the application's. Errors on it come back to kiln as exceptions
/// instead of aborting. Copies share the duplicate, which is freed when the last one goes.
class communicator {
  public:
    communicator() : communicator(MPI_COMM_WORLD) {}  ///< a duplicate of MPI_COMM_WORLD
    /// Collective over `comm`: a duplicate of it.
    explicit communicator(MPI_Comm comm);

    /// The duplicate, for MPI calls of one's own that should not meet the application's.
    MPI_Comm get() const noexcept { return comm_->get(); }
    int rank() const noexcept { return rank_; }  ///< this process's rank
    int size() const noexcept { return size_; }  ///< the number of ranks
    /// This process among those on the same node (MPI_Comm_split_type MPI_COMM_TYPE_SHARED),
    /// which is what picks its device.
    int node_rank() const noexcept { return node_rank_; }
    /// The number of this communicator's processes on this node.
    int node_size() const noexcept { return node_size_; }

    /// Collective: runs `local_work` on this rank, then every rank learns whether it threw on
    /// any rank. If it did, every rank throws rank_failure with the lowest failed rank's
    /// message, so that no rank goes on to wait in a collective for one that stopped. The local
    /// work must not itself communicate: a rank that failed before a collective in it would
    /// leave the others waiting there.
    void agree(const std::function<void()>& local_work) const;

    /// Ends every process of the communicator with `status` (MPI_Abort): the way out for an
    /// error that not every rank can learn of.
    [[noreturn]] void abort(int status) const noexcept;

  private:
    std::shared_ptr<const detail::communicator_handle> comm_;
    int rank_ = 0, size_ = 1, node_rank_ = 0, node_size_ = 1;
};

/// The device for this rank: among the devices `spec` matches (KILN_DEVICE syntax; empty means
/// $KILN_DEVICE if set, else the GPUs of kiln::default_device()'s backend, else that device), the
/// one at the node-local rank, modulo their count, so that one rank per GPU gets a GPU each.
kiln::device local_device(const communicator& comm, std::string_view spec = {});

}  // namespace kiln::mpi
#pragma GCC visibility pop
