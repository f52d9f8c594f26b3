// spdlog and fmt compiled into mt instead of linked as shared libraries: their shared objects' symbol
// tables alone were 0.4 MiB of every tool's resident memory (docs/benchmarks.md, issue 16), and
// without them no shared library of the tools needs libstdc++.so (tools/CMakeLists.txt links it
// statically). Every other file includes the libraries' headers as before, with the same
// definitions (SPDLOG_COMPILED_LIB: declarations only); this file compiles their definitions, the
// -inl.h headers both libraries ship for this purpose.
#include <fmt/format-inl.h>
#include <spdlog/common-inl.h>
#include <spdlog/details/backtracer-inl.h>
#include <spdlog/details/log_msg-inl.h>
#include <spdlog/details/log_msg_buffer-inl.h>
#include <spdlog/details/os-inl.h>
#include <spdlog/details/periodic_worker-inl.h>
#include <spdlog/details/registry-inl.h>
#include <spdlog/logger-inl.h>
#include <spdlog/pattern_formatter-inl.h>
#include <spdlog/sinks/ansicolor_sink-inl.h>
#include <spdlog/sinks/base_sink-inl.h>
#include <spdlog/sinks/sink-inl.h>
#include <spdlog/spdlog-inl.h>

#include <mutex>

// The templates the headers declare extern (their shared objects instantiate them): fmt's for char,
// spdlog's colour sink for stderr (lib/cli/tool.cpp).
template auto fmt::detail::thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template auto fmt::detail::decimal_point_impl(locale_ref) -> char;
template class spdlog::sinks::ansicolor_sink<spdlog::details::console_mutex>;
template class spdlog::sinks::ansicolor_stderr_sink<spdlog::details::console_mutex>;
