#include "lib/core/file_io.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "lib/core/error.h"
#include "lib/core/memory_limit.h"

namespace mt {
namespace {

std::string errno_text(int err) { return std::strerror(err); }

// Temporary output paths to remove if a signal arrives before commit. Fixed-size storage so
// the handler only touches memory it can use safely.
constexpr size_t kMaxPending = 16;
constexpr size_t kMaxPathLength = 4096;
std::array<std::array<char, kMaxPathLength>, kMaxPending> g_pending_paths;
std::array<std::atomic<bool>, kMaxPending> g_pending_used;

int register_pending(const std::string& path) {
  if (path.size() >= kMaxPathLength) return -1;
  for (size_t i = 0; i < kMaxPending; ++i) {
    bool expected = false;
    if (g_pending_used[i].compare_exchange_strong(expected, true)) {
      std::memcpy(g_pending_paths[i].data(), path.c_str(), path.size() + 1);
      return static_cast<int>(i);
    }
  }
  return -1;
}

void unregister_pending(int slot) {
  if (slot >= 0) g_pending_used[static_cast<size_t>(slot)] = false;
}

extern "C" void remove_pending_and_die(int sig) {
  for (size_t i = 0; i < kMaxPending; ++i)
    if (g_pending_used[i]) unlink(g_pending_paths[i].data());
  std::signal(sig, SIG_DFL);
  raise(sig);
}

}  // namespace

bool stdin_is_terminal() { return isatty(STDIN_FILENO) != 0; }
bool stdout_is_terminal() { return isatty(STDOUT_FILENO) != 0; }
bool stderr_is_terminal() { return isatty(STDERR_FILENO) != 0; }

void install_output_signal_handlers() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) std::signal(sig, remove_pending_and_die);
  std::signal(SIGPIPE, SIG_IGN);
  // Past a file size limit (ulimit -f) write() then fails with EFBIG, reported as an error that
  // removes the temporary file, instead of the signal killing the process and leaving it behind.
  std::signal(SIGXFSZ, SIG_IGN);
}

void reserve_standard_streams() {
  // /dev/null opened in the direction the stream is never used: reads of a closed stdin and
  // writes to a closed stdout/stderr fail with EBADF as before, but no file the tool opens can
  // take descriptor 0, 1 or 2 and receive what was meant for the terminal.
  for (int fd : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO}) {
    if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    const int reserved = open("/dev/null", (fd == STDIN_FILENO ? O_WRONLY : O_RDONLY) | O_CLOEXEC);
    if (reserved >= 0 && reserved != fd) {
      dup2(reserved, fd);
      close(reserved);
    }
  }
}

InputBytes read_input(const std::string& path) {
  const bool from_stdin = path.empty() || path == "-";
  InputBytes input;
  input.source = from_stdin ? "<stdin>" : path;
  int fd = STDIN_FILENO;
  if (from_stdin) {
    if (stdin_is_terminal()) fail(ExitCode::usage, "no input file given and standard input is a terminal");
    const int flags = fcntl(fd, F_GETFL);
    if (flags == -1 || (flags & O_ACCMODE) == O_WRONLY)
      fail(ExitCode::usage, "no input file given and standard input is closed");
  } else {
    fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      const int err = errno;
      if (err == ENOENT) fail(ExitCode::invalid_input, "{}: no such file", path);
      fail(ExitCode::invalid_input, "{}: cannot open: {}", path, errno_text(err));
    }
  }
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    const int err = errno;
    if (!from_stdin) close(fd);
    fail(ExitCode::failure, "{}: cannot stat: {}", input.source, errno_text(err));
  }
  if (S_ISDIR(st.st_mode)) {
    if (!from_stdin) close(fd);
    fail(ExitCode::invalid_input, "{}: is a directory, expected a file", input.source);
  }
  if (S_ISREG(st.st_mode) && st.st_size > 0) {
    const auto size = static_cast<size_t>(st.st_size);
    check_memory_available(size, fmt::format("mapping {}", input.source), /*file_backed=*/true);
    void* map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (!from_stdin) close(fd);
    if (map == MAP_FAILED) fail(ExitCode::failure, "{}: cannot map: {}", input.source, errno_text(errno));
    input.owner = std::shared_ptr<const void>(map, [size](const void* p) { munmap(const_cast<void*>(p), size); });
    input.data = static_cast<const std::byte*>(map);
    input.size = size;
    return input;
  }
  // A stream: grow one 64-byte aligned block by doubling; only bytes actually received are
  // ever allocated for.
  size_t capacity = 1 << 20;
  size_t size = 0;
  auto* block = static_cast<std::byte*>(std::aligned_alloc(64, capacity));
  if (block == nullptr) fail(ExitCode::failure, "{}: out of memory", input.source);
  for (;;) {
    if (size == capacity) {
      check_memory_available(capacity * 2, fmt::format("reading {}", input.source));
      auto* bigger = static_cast<std::byte*>(std::aligned_alloc(64, capacity * 2));
      if (bigger == nullptr) {
        std::free(block);
        fail(ExitCode::failure, "{}: out of memory after {} bytes", input.source, size);
      }
      std::memcpy(bigger, block, size);
      std::free(block);
      block = bigger;
      capacity *= 2;
    }
    ssize_t got = read(fd, block + size, capacity - size);
    if (got == 0) break;
    if (got < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      std::free(block);
      if (!from_stdin) close(fd);
      fail(ExitCode::failure, "{}: read error: {}", input.source, errno_text(err));
    }
    size += static_cast<size_t>(got);
  }
  if (!from_stdin) close(fd);
  input.owner = std::shared_ptr<const void>(block, [](const void* p) { std::free(const_cast<void*>(p)); });
  input.data = block;
  input.size = size;
  return input;
}

OutputFile::OutputFile(const std::string& path, bool binary) {
  if (path.empty() || path == "-") {
    if (binary && stdout_is_terminal())
      fail(ExitCode::usage, "refusing to write a binary model to a terminal: use -o FILE or redirect stdout");
    fd_ = STDOUT_FILENO;
    is_stdout_ = true;
    display_name_ = "<stdout>";
    return;
  }
  target_ = path;
  display_name_ = path;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) fail(ExitCode::usage, "{}: is a directory, expected an output file", path);
  const auto parent = std::filesystem::path(path).parent_path();
  const auto base = std::filesystem::path(path).filename().string();
  std::string pattern = (parent.empty() ? std::string() : parent.string() + "/") + "." + base + ".tmp.XXXXXX";
  fd_ = mkstemp(pattern.data());
  if (fd_ < 0) fail(ExitCode::failure, "{}: cannot create output: {}", path, errno_text(errno));
  temp_ = pattern;
  pending_slot_ = register_pending(temp_);
}

OutputFile::~OutputFile() {
  if (is_stdout_ || committed_) return;
  if (fd_ >= 0) close(fd_);
  unlink(temp_.c_str());
  unregister_pending(pending_slot_);
}

void OutputFile::write(const void* data, size_t size) {
  auto bytes = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::write(fd_, bytes, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EPIPE) throw BrokenPipe{};
      fail(ExitCode::failure, "{}: write error: {}", display_name_, errno_text(errno));
    }
    bytes += n;
    size -= static_cast<size_t>(n);
  }
}

void OutputFile::commit() {
  if (committed_) return;
  if (is_stdout_) {
    committed_ = true;
    return;
  }
  if (fsync(fd_) != 0) fail(ExitCode::failure, "{}: write error: {}", display_name_, errno_text(errno));
  // Keep the permissions a newly created file would get (mkstemp makes it 0600).
  const mode_t mask = umask(0);
  umask(mask);
  fchmod(fd_, 0666 & ~mask);
  if (close(fd_) != 0) {
    fd_ = -1;
    fail(ExitCode::failure, "{}: write error: {}", display_name_, errno_text(errno));
  }
  fd_ = -1;
  if (rename(temp_.c_str(), target_.c_str()) != 0)
    fail(ExitCode::failure, "{}: cannot rename temporary file into place: {}", display_name_, errno_text(errno));
  committed_ = true;
  unregister_pending(pending_slot_);
}

}  // namespace mt
