// Calibration samples for a model: one input set per sample, from a .npy file (one sample, or a
// batch split along its first axis), a directory of .npy files / images, or a list file of paths.
#pragma once

#include <string>
#include <vector>

#include "lib/ir/graph.h"
#include "lib/runtime/inputs.h"

namespace mt::quant {

using Sample = std::vector<HostArray>;  // one array per graph input, in graph.inputs order

// Loads at most `max_samples` (0: all) samples for a single-input model from `source`:
// - FILE.npy whose shape is the input's shape (one sample), or [N, ...] where the input's shape is
//   [B, ...] with the same trailing dims: N / B samples of B rows each (a remainder is dropped);
// - a directory: every .npy file and image in it, sorted by name;
// - any other file: a list of paths (.npy or images), one per line, relative to the list's folder.
// Images go through `image_options` (size/mean/std/layout as mt-run). Errors name the file.
std::vector<Sample> load_samples(const Graph& graph, const std::string& source, const InputOptions& image_options,
                                 size_t max_samples);

}  // namespace mt::quant
