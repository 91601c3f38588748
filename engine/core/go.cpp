// Placeholder until the go part of the core lands.
#include "bindings.hpp"

namespace saz {
void bind_go(nb::module_& m) {}
}  // namespace saz
