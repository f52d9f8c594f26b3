// The SPIR-V of every compute shader in shaders/, compiled by glslc at build time (fp32 and fp16
// variants of each) and embedded in the library by shaders/embed_spirv.cmake.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace mt::vulkan {

struct ShaderBinary {
  const char* name;  // the .comp file's base name: "conv2d"
  bool fp16;         // compiled with -DMT_FP16=1
  const uint32_t* words;
  size_t word_count;
};

std::span<const ShaderBinary> shader_binaries();

}  // namespace mt::vulkan
