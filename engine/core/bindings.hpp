// Helpers shared by the translation units that bind the core to Python (nanobind).
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "position.hpp"

namespace saz {

namespace nb = nanobind;

// A fresh NumPy int64 array holding `values` (the array owns its copy).
inline nb::ndarray<nb::numpy, int64_t, nb::ndim<1>> to_numpy(const Moves& values) {
  auto* data = new int64_t[values.size() ? values.size() : 1];
  for (size_t i = 0; i < values.size(); ++i) data[i] = values[i];
  nb::capsule owner(data, [](void* p) noexcept { delete[] static_cast<int64_t*>(p); });
  return nb::ndarray<nb::numpy, int64_t, nb::ndim<1>>(data, {values.size()}, owner);
}

// Each game's module part: binds its Position subclass (and its game-specific methods).
void bind_othello(nb::module_& m);
void bind_gomoku(nb::module_& m);
void bind_go(nb::module_& m);
void bind_chess(nb::module_& m);
void bind_tree(nb::module_& m);
void bind_digest(nb::module_& m);

}  // namespace saz
