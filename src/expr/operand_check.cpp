// SPDX-License-Identifier: Apache-2.0
// Size and device agreement between the operands of one statement, and targets that the statement
// reads at other positions, with messages that say which.
#include <algorithm>
#include <kiln/expr/core.hpp>
#include <string>
#include <vector>

namespace kiln::detail {
namespace {

std::string describe(const device& dev) {
    return dev.name() + " (device " + std::to_string(dev.index()) + ")";
}

}  // namespace

void operand_check::fail(const std::string& why) const {
    throw invalid_argument_error(literal_call_ ? std::string(literal_call_) : call_, why);
}

void operand_check::check_device(const device& dev, std::string_view what) const {
    const device* expected = nullptr;
    if (elementwise_)
        expected = &(*elementwise_)[0].queue.device();
    else if (single_queue_)
        expected = &single_queue_->device();
    if (expected && !(*expected == dev))
        fail(std::string(what) + " is on " + describe(dev) + " but the statement runs on " +
             describe(*expected) + "; every operand must live on the same device");
}

void operand_check::elementwise(const layout& parts, std::size_t size) {
    vectors_.push_back(&parts);
    sized(size, "a vector");
    // Empty operands have nothing to place; default-constructed vectors have no device at all.
    if (size == 0) {
        if (!empty_operand_queue_ && !parts.empty()) empty_operand_queue_ = parts[0].queue;
        return;
    }
    if (!elementwise_) {
        if (single_queue_) {
            if (parts.size() != 1)
                fail(single_queue_source_ +
                     " needs every vector of the statement on one device, but a vector "
                     "here is split over " +
                     std::to_string(parts.size()) + " devices");
            check_device(parts[0].queue.device(), "a vector");
        }
        elementwise_ = &parts;
        return;
    }
    if (&parts == elementwise_) return;
    const layout& first = *elementwise_;
    if (parts.size() != first.size())
        fail("vectors are split over different numbers of devices (" +
             std::to_string(first.size()) + " and " + std::to_string(parts.size()) +
             "); vectors in one statement must share devices and split");
    for (std::size_t k = 0; k < parts.size(); ++k) {
        if (!(parts[k].queue.device() == first[k].queue.device()))
            fail("part " + std::to_string(k) + " of one vector is on " +
                 describe(first[k].queue.device()) + ", of another on " +
                 describe(parts[k].queue.device()) +
                 "; vectors in one statement must live on the same devices");
        if (parts[k].begin != first[k].begin || parts[k].size != first[k].size)
            fail("vectors of equal size are split differently over their devices (part " +
                 std::to_string(k) + " holds " + std::to_string(first[k].size) +
                 " elements in one, " + std::to_string(parts[k].size) + " in another)");
    }
}

void operand_check::sized(std::size_t size, std::string_view what) {
    if (size_ && *size_ != size)
        fail("operand sizes differ: " + std::string(what) + " has " + std::to_string(size) +
             " elements where the statement has " + std::to_string(*size_));
    size_ = size;
}

void operand_check::gathered(const layout& parts, std::string_view what, bool mirrored) {
    vectors_.push_back(&parts);
    if (mirrored) mirrored_.push_back({&parts, std::string(what)});
    if (parts.size() != 1)
        fail(std::string(what) +
             " works on a vector on a single device; this vector is split over " +
             std::to_string(parts.size()) + " devices");
    single_device(parts[0].queue, what);
}

void operand_check::single_device(const kiln::queue& q, std::string_view what) {
    if (elementwise_ && elementwise_->size() != 1)
        fail(std::string(what) +
             " needs the statement on a single device, but its vectors are split over " +
             std::to_string(elementwise_->size()) + " devices");
    check_device(q.device(), what);
    if (!single_queue_) {
        single_queue_ = q;
        single_queue_source_ = what;
    }
}

void operand_check::on_queue(const kiln::queue& q) {
    check_device(q.device(), "the queue given");
    if (!single_queue_) {
        single_queue_ = q;
        single_queue_source_ = "the queue given";
    }
}

bool operand_check::involves(const layout& vector) const {
    return std::find(vectors_.begin(), vectors_.end(), &vector) != vectors_.end();
}

void operand_check::read_elsewhere(const layout& vector, std::string_view what) {
    vectors_.push_back(&vector);
    read_elsewhere_.push_back({&vector, std::string(what)});
}

void operand_check::read_elsewhere(const operand_check& operand, std::string_view what) {
    for (const void* vector : operand.vectors_)
        read_elsewhere(*static_cast<const layout*>(vector), what);
}

void operand_check::written(const layout& vector) const {
    for (const elsewhere_read& read : read_elsewhere_)
        if (read.vector == &vector)
            fail("the target is read by " + read.what +
                 " at other positions than the one written (as in x = 2 * x + x * S or "
                 "x = A * (2 * x)), so work-items would read elements that others have "
                 "already overwritten; write into another vector");
    // The target's own entry and a mirrored one at least: it is read as well as written, and
    // one of the two goes through the mirror.
    for (const elsewhere_read& view : mirrored_)
        if (view.vector == &vector && std::count(vectors_.begin(), vectors_.end(), &vector) > 1)
            fail("the target is written and read through " + view.what +
                 " in one statement (as in x = kiln::reverse(x) or kiln::reverse(x) = x), so "
                 "work-items would read elements that others have already overwritten; write "
                 "into another vector");
}

namespace {

/// Whether two stores of one element overlap: the whole element, or one member inside the other.
bool members_overlap(const std::string& a, const std::string& b) {
    const auto inside = [](const std::string& outer, const std::string& inner) {
        return inner.starts_with(outer) &&
               (inner.size() == outer.size() || inner[outer.size()] == '.');
    };
    return a.empty() || b.empty() || inside(a, b) || inside(b, a);
}

}  // namespace

void operand_check::written_once(std::initializer_list<written_target> targets) const {
    const written_target* all = targets.begin();
    for (std::size_t i = 0; i < targets.size(); ++i)
        for (std::size_t j = i + 1; j < targets.size(); ++j)
            if (all[i].vector == all[j].vector && members_overlap(all[i].member, all[j].member))
                fail("targets " + std::to_string(i + 1) + " and " + std::to_string(j + 1) +
                     " write the same vector, so its elements would keep one of the two "
                     "values; give each target a vector of its own");
}

const layout& operand_check::launch_layout() const {
    if (!size_)
        fail("the statement's size is unknown: use a vector in it, or give element_index a size");
    if (*size_ == 0) {
        made_layout_.clear();
        return made_layout_;
    }
    if (elementwise_) return *elementwise_;
    if (single_queue_) {
        made_layout_ = {part_extent{*single_queue_, 0, *size_}};
        return made_layout_;
    }
    fail("nothing in the statement says which device to run on: pass a queue");
}

std::optional<kiln::queue> operand_check::first_queue() const {
    if (elementwise_ && !elementwise_->empty()) return (*elementwise_)[0].queue;
    return single_queue_ ? single_queue_ : empty_operand_queue_;
}

}  // namespace kiln::detail
