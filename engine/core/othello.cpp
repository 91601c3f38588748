// Placeholder until the othello part of the core lands.
#include "bindings.hpp"

namespace saz {
void bind_othello(nb::module_& m) {}
}  // namespace saz
