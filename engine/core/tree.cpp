// Placeholder until the tree part of the core lands.
#include "bindings.hpp"

namespace saz {
void bind_tree(nb::module_& m) {}
}  // namespace saz
