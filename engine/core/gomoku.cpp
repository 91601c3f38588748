// Placeholder until the gomoku part of the core lands.
#include "bindings.hpp"

namespace saz {
void bind_gomoku(nb::module_& m) {}
}  // namespace saz
