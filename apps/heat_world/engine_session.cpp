// The stepping session of engines that step the world where it is (the host engines).
#include <algorithm>
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

}  // namespace

std::unique_ptr<stepping_session> engine::start(world& w, float dt) {
    check_world(w);
    return std::make_unique<in_place_session>(*this, w, dt);
}

}  // namespace kiln::heat
