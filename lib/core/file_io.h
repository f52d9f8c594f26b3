// Reading inputs (memory-mapped files or whole streams) and writing outputs atomically:
// the one implementation of "a path, or - for stdin/stdout" that every tool uses.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>

namespace mt {

// Read-only bytes of an input. For a regular file they are a memory map (nothing is copied);
// for a pipe or terminal they are read into one heap block.
struct InputBytes {
  std::shared_ptr<const void> owner;
  const std::byte* data = nullptr;
  size_t size = 0;
  std::string source;  // the path, or "<stdin>"

  std::span<const std::byte> bytes() const { return {data, size}; }
};

// Reads `path`, or standard input for "-" or "". Throws Error naming the path when it is
// missing, a directory, unreadable, or standard input is a terminal.
InputBytes read_input(const std::string& path);

// An output that appears whole or not at all. For a path, data goes to a temporary file in the
// same directory that commit() fsyncs and renames over the target; if the object is destroyed
// (error, exception) or the process is interrupted (SIGINT/SIGTERM/SIGHUP) before commit(), the
// temporary file is removed and the target is untouched. For "-" or "" data goes to stdout.
class OutputFile {
 public:
  // binary: refuse to write to a terminal (the error suggests -o FILE or a redirect).
  OutputFile(const std::string& path, bool binary);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  void write(const void* data, size_t size);
  void write(std::string_view text) { write(text.data(), text.size()); }
  void commit();
  const std::string& name() const { return display_name_; }

 private:
  int fd_ = -1;
  int pending_slot_ = -1;  // registration for signal-time cleanup
  bool is_stdout_ = false;
  bool committed_ = false;
  std::string target_;
  std::string temp_;
  std::string display_name_;
};

// Installs handlers that remove pending OutputFile temporaries on SIGINT/SIGTERM/SIGHUP and
// then die by the same signal, and makes writes to a closed pipe fail with EPIPE (reported as
// a quiet exit by run_tool) and writes past a file size limit fail with EFBIG, instead of
// killing the process. Called once by run_tool().
void install_output_signal_handlers();

// Occupies closed standard descriptors (a tool run with `<&-` or `>&-`) so that files the tool
// opens never become its stdin or stdout; reading or writing the closed stream still fails.
void reserve_standard_streams();

// Thrown when stdout is a closed pipe; tools exit quietly.
struct BrokenPipe {};

bool stdin_is_terminal();
bool stdout_is_terminal();
bool stderr_is_terminal();

}  // namespace mt
