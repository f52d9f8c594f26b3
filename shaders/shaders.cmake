# The Vulkan backend's compute shaders: every shaders/*.comp is compiled by glslc twice, once for
# fp32 storage and once with -DMT_FP16=1 (fp16 storage and arithmetic, fp32 accumulation), and the
# SPIR-V words are embedded in one generated .cpp (see kernels/vulkan/runtime/shader_binaries.h).
function(mt_embed_shaders out_var)
  file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/shaders/*.comp)
  file(GLOB headers CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/shaders/*.glsl ${CMAKE_SOURCE_DIR}/shaders/*.h)
  set(dir ${CMAKE_BINARY_DIR}/generated/shaders)
  file(MAKE_DIRECTORY ${dir})
  set(spirv_files)
  foreach(source IN LISTS sources)
    get_filename_component(name ${source} NAME_WE)
    foreach(variant IN ITEMS fp32 fp16)
      set(defines)
      if(variant STREQUAL "fp16")
        set(defines -DMT_FP16=1)
      endif()
      set(spirv ${dir}/${name}.${variant}.spv)
      add_custom_command(
        OUTPUT ${spirv}
        COMMAND ${MT_GLSLC} -fshader-stage=compute --target-env=vulkan1.1 -O -Werror
                -I ${CMAKE_SOURCE_DIR}/shaders ${defines} -o ${spirv} ${source}
        DEPENDS ${source} ${headers}
        COMMENT "glslc ${name}.comp (${variant})"
        VERBATIM)
      list(APPEND spirv_files ${spirv})
    endforeach()
  endforeach()
  set(cpp ${dir}/shader_binaries.cpp)
  string(REPLACE ";" "|" spirv_joined "${spirv_files}")
  add_custom_command(
    OUTPUT ${cpp}
    COMMAND ${CMAKE_COMMAND} -DOUTPUT=${cpp} -DINPUTS=${spirv_joined} -P ${CMAKE_SOURCE_DIR}/shaders/embed_spirv.cmake
    DEPENDS ${spirv_files} ${CMAKE_SOURCE_DIR}/shaders/embed_spirv.cmake
    COMMENT "Embedding SPIR-V of ${CMAKE_SOURCE_DIR}/shaders"
    VERBATIM)
  set(${out_var} ${cpp} PARENT_SCOPE)
endfunction()
