// What mt-prepack writes into a model and what readers need to know about it: the options of the
// per-backend transform, the layout names a prepacked model may use, and the backend it is for.
// The transform itself belongs to each backend (Backend::prepack); lib/passes/prepack.h drives it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "lib/ir/graph.h"
#include "lib/runtime/plan_options.h"

namespace mt {

// TensorInfo::layout values (man/mt-format.5). The shape stays the logical one; only the order of
// the stored (or, for graph inputs, caller-supplied) elements changes.
inline constexpr std::string_view kLayoutNhwc = "nhwc";  // 4-D [N,C,H,W] stored N,H,W,C
inline constexpr std::string_view kLayoutOhwi = "ohwi";  // conv weights stored out-channel, kH, kW, in-channel

struct PrepackOptions {
  std::string input_layout = "nchw";  // "nhwc": 4-D float graph inputs are declared channels-last
  std::string precision = "fp32";     // vulkan: "fp16" stores the packed weights as half floats
  std::optional<CpuTarget> cpu_target;  // cpu: the CPU the weights are packed for; unset: this one's
};

// The backend a model was prepacked for (metadata "backend": a name, or an object with "name"),
// nullopt for a portable model. Throws Error(invalid_input) if the entry has another form.
std::optional<std::string> packed_backend(const Graph& graph);

// The precision a model prepacked for vulkan was packed in (metadata "backend": {"name": "vulkan",
// "precision": "fp32" or "fp16"}), nullopt for any other model. Throws Error(invalid_input) if the
// entry is missing or has another value.
std::optional<std::string> packed_precision(const Graph& graph);

// The vulkan precision to plan `graph` in when the user asked for none: the packed one, else fp32.
std::string default_precision(const Graph& graph);

// The shape of the data a caller supplies for a graph input: the logical shape, or N,H,W,C for
// an input declared "nhwc". Throws Error(unsupported) for a layout no caller can supply.
Shape caller_shape(const TensorInfo& info);

}  // namespace mt
