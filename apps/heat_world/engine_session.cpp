// SPDX-License-Identifier: Apache-2.0
// The stepping session of engines that step the world where it is (the host engines).
#include <algorithm>
#include <memory>
#include <stdexcept>

#include "engine.hpp"

namespace kiln::heat {
namespace {

// Rows [first_row, first_row + count / width) of w's temperatures, checked.
std::span<float> rows_of(world& w, std::uint32_t first_row, std::size_t count) {
    if (count == 0) return {};
    if (w.width == 0 || count % w.width != 0 || first_row > w.height ||
        count / w.width > w.height - first_row)
        throw std::invalid_argument("stepping_session: rows outside the world");
    return std::span<float>(w.temperatures).subspan(std::size_t{first_row} * w.width, count);
}

class in_place_session final : public stepping_session {
  public:
    in_place_session(engine& stepper, world& w, float dt) : engine_(stepper), world_(w), dt_(dt) {}

    void step(unsigned steps) override {
        const float t = world_.t;
        engine_.run(world_, dt_, steps, {});
        world_.t = t;
    }
    void read_rows(std::uint32_t first_row, std::span<float> rows) override {
        const std::span<float> source = rows_of(world_, first_row, rows.size());
        std::copy(source.begin(), source.end(), rows.begin());
    }
    void write_rows(std::uint32_t first_row, std::span<const float> rows) override {
        std::copy(rows.begin(), rows.end(), rows_of(world_, first_row, rows.size()).begin());
    }
    void finish() override {}

  private:
    engine& engine_;
    world& world_;
    float dt_;
};

// A session on a copy of some rows of a world, which it owns.
class rows_copy_session final : public stepping_session {
  public:
    rows_copy_session(engine& stepper, const world_rows& rows, float dt)
        : part_(copy_rows(rows)), session_(stepper.start(*part_, dt)) {}

    void step(unsigned steps) override { session_->step(steps); }
    void read_rows(std::uint32_t first_row, std::span<float> rows) override {
        session_->read_rows(first_row, rows);
    }
    void write_rows(std::uint32_t first_row, std::span<const float> rows) override {
        session_->write_rows(first_row, rows);
    }
    void finish() override { session_->finish(); }

  private:
    static std::unique_ptr<world> copy_rows(const world_rows& rows) {
        auto part = std::make_unique<world>();
        part->width = rows.source.width;
        part->height = rows.rows;
        part->alpha = rows.source.alpha;
        part->t = rows.source.t;
        part->flags.assign(rows.flags().begin(), rows.flags().end());
        part->temperatures.assign(rows.temperatures().begin(), rows.temperatures().end());
        return part;
    }
    std::unique_ptr<world> part_;
    std::unique_ptr<stepping_session> session_;
};

}  // namespace

std::unique_ptr<stepping_session> engine::start(world& w, float dt) {
    check_world(w);
    return std::make_unique<in_place_session>(*this, w, dt);
}

std::unique_ptr<stepping_session> engine::start_rows(const world_rows& rows, float dt) {
    return std::make_unique<rows_copy_session>(*this, rows, dt);
}

}  // namespace kiln::heat
