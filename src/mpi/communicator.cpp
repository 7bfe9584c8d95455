// SPDX-License-Identifier: Apache-2.0
// MPI's lifetime, communicator duplicates, MPI errors as kiln::error, and agreed failures.
#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <exception>
#include <kiln/mpi/communicator.hpp>
#include <string>
#include <vector>

namespace kiln::mpi {
namespace detail {
namespace {

const char* error_class_name(int error_class) {
    switch (error_class) {
        case MPI_ERR_BUFFER:
            return "MPI_ERR_BUFFER";
        case MPI_ERR_COUNT:
            return "MPI_ERR_COUNT";
        case MPI_ERR_TYPE:
            return "MPI_ERR_TYPE";
        case MPI_ERR_TAG:
            return "MPI_ERR_TAG";
        case MPI_ERR_COMM:
            return "MPI_ERR_COMM";
        case MPI_ERR_RANK:
            return "MPI_ERR_RANK";
        case MPI_ERR_REQUEST:
            return "MPI_ERR_REQUEST";
        case MPI_ERR_ROOT:
            return "MPI_ERR_ROOT";
        case MPI_ERR_GROUP:
            return "MPI_ERR_GROUP";
        case MPI_ERR_OP:
            return "MPI_ERR_OP";
        case MPI_ERR_TOPOLOGY:
            return "MPI_ERR_TOPOLOGY";
        case MPI_ERR_DIMS:
            return "MPI_ERR_DIMS";
        case MPI_ERR_ARG:
            return "MPI_ERR_ARG";
        case MPI_ERR_UNKNOWN:
            return "MPI_ERR_UNKNOWN";
        case MPI_ERR_TRUNCATE:
            return "MPI_ERR_TRUNCATE";
        case MPI_ERR_OTHER:
            return "MPI_ERR_OTHER";
        case MPI_ERR_INTERN:
            return "MPI_ERR_INTERN";
        case MPI_ERR_IN_STATUS:
            return "MPI_ERR_IN_STATUS";
        case MPI_ERR_PENDING:
            return "MPI_ERR_PENDING";
        case MPI_ERR_NO_MEM:
            return "MPI_ERR_NO_MEM";
        default:
            return "MPI_ERR";
    }
}

bool mpi_finalized() noexcept {
    int finalized = 0;
    MPI_Finalized(&finalized);
    return finalized != 0;
}

}  // namespace

void check(int rc, const char* call) {
    if (rc == MPI_SUCCESS) return;
    int error_class = MPI_ERR_UNKNOWN;
    MPI_Error_class(rc, &error_class);
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    if (MPI_Error_string(rc, text, &length) != MPI_SUCCESS) length = 0;
    throw kiln::error(call, rc, error_class_name(error_class), std::string(text, length));
}

kiln::detail::handle<datatype_traits> element_type(std::size_t element_bytes) {
    if (element_bytes > INT_MAX)
        throw kiln::invalid_argument_error(
            "kiln::mpi",
            "elements of " + std::to_string(element_bytes) + " bytes are too large for MPI");
    MPI_Datatype type = MPI_DATATYPE_NULL;
    check(MPI_Type_contiguous(static_cast<int>(element_bytes), MPI_BYTE, &type),
          "MPI_Type_contiguous");
    kiln::detail::handle<datatype_traits> owned(type);
    check(MPI_Type_commit(&type), "MPI_Type_commit");
    return owned;
}

void communicator_traits::release(MPI_Comm comm) noexcept {
    // After MPI_Finalize nothing may be freed: MPI has released every communicator itself.
    if (!mpi_finalized()) MPI_Comm_free(&comm);
}

}  // namespace detail

rank_failure::rank_failure(int failed_rank, const std::string& message)
    : kiln::error("kiln::mpi::communicator::agree", 0, "KILN_MPI_RANK_FAILED",
                  "rank " + std::to_string(failed_rank) + ": " + message),
      failed_rank_(failed_rank),
      rank_message_(message) {}

environment::environment(int& argc, char**& argv) {
    int provided = 0;
    detail::check(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
    // Errors on MPI_COMM_WORLD itself (before kiln duplicates it) come back too.
    detail::check(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN),
                  "MPI_Comm_set_errhandler");
}

environment::~environment() {
    if (!detail::mpi_finalized()) MPI_Finalize();
}

bool environment::cuda_aware() noexcept {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
    return MPIX_Query_cuda_support() == 1;
#else
    return false;
#endif
}

communicator::communicator(MPI_Comm comm) {
    MPI_Comm duplicate = MPI_COMM_NULL;
    detail::check(MPI_Comm_dup(comm, &duplicate), "MPI_Comm_dup");
    auto owned = std::make_shared<detail::communicator_handle>(duplicate);
    detail::check(MPI_Comm_set_errhandler(duplicate, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    detail::check(MPI_Comm_rank(duplicate, &rank_), "MPI_Comm_rank");
    detail::check(MPI_Comm_size(duplicate, &size_), "MPI_Comm_size");
    MPI_Comm node = MPI_COMM_NULL;
    detail::check(MPI_Comm_split_type(duplicate, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node),
                  "MPI_Comm_split_type");
    const detail::communicator_handle node_handle(node);
    detail::check(MPI_Comm_rank(node, &node_rank_), "MPI_Comm_rank");
    detail::check(MPI_Comm_size(node, &node_size_), "MPI_Comm_size");
    comm_ = std::move(owned);
}

void communicator::agree(const std::function<void()>& local_work) const {
    std::string message;
    try {
        local_work();
    } catch (const std::exception& e) {
        message = e.what();
        if (message.empty()) message = "unknown error";
    } catch (...) {
        message = "unknown error";
    }
    // The lowest failed rank, or size() when none failed.
    const int mine = message.empty() ? size_ : rank_;
    int failed = size_;
    detail::check(MPI_Allreduce(&mine, &failed, 1, MPI_INT, MPI_MIN, get()), "MPI_Allreduce");
    if (failed == size_) return;
    int length = static_cast<int>(std::min<std::size_t>(message.size(), INT_MAX));
    detail::check(MPI_Bcast(&length, 1, MPI_INT, failed, get()), "MPI_Bcast");
    message.resize(static_cast<std::size_t>(length));
    detail::check(MPI_Bcast(message.data(), length, MPI_CHAR, failed, get()), "MPI_Bcast");
    throw rank_failure(failed, message);
}

void communicator::abort(int status) const noexcept {
    MPI_Abort(get(), status);
    std::_Exit(status);  // MPI_Abort does not return; this keeps the promise if it ever does.
}

kiln::device local_device(const communicator& comm, std::string_view spec) {
    std::vector<kiln::device> candidates;
    if (!spec.empty()) {
        candidates = kiln::devices(kiln::filters::from_spec(spec));
    } else if (const char* from_environment = std::getenv("KILN_DEVICE")) {
        candidates = kiln::devices(kiln::filters::from_spec(from_environment));
    } else {
        // A GPU is seen once per backend (CUDA and NVIDIA's OpenCL): count the default's only.
        const kiln::device preferred = kiln::default_device();
        if (preferred.is_gpu())
            candidates =
                kiln::devices(kiln::filters::gpu() && kiln::filters::backend(preferred.backend()));
        else
            candidates.push_back(preferred);
    }
    if (candidates.empty())
        throw kiln::invalid_argument_error("kiln::mpi::local_device",
                                           "no device matches '" + std::string(spec) + "'");
    return candidates[static_cast<std::size_t>(comm.node_rank()) % candidates.size()];
}

}  // namespace kiln::mpi
