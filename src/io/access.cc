// Reads and writes through a view: the view's data stream (filetype tiled
// from the displacement, holes skipped) cut into runs of file bytes, each
// moved with pread/pwrite.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <vector>

#include "io/file.h"

namespace nicq::io {
namespace {

// Calls fn(file_byte, length, data_done) for each run of file bytes that the
// view's data bytes [data_byte, data_byte + bytes) occupy, in order; stops
// at the first run fn refuses (returns false).
// (Positions and lengths are the view's native ones; the file's, and fn's,
// are scaled by the view's external32 ratio.)
template <typename Fn>
void ForEachRun(const File& f, std::int64_t data_byte, std::int64_t bytes, Fn fn) {
  const dtype::Type& ft = *f.filetype;
  if (bytes <= 0) return;
  const auto scaled = [&f](std::int64_t native) { return native * f.ext_bytes / f.native_bytes; };
  if (ft.IsContiguous()) {
    (void)fn(f.disp + scaled(data_byte), scaled(bytes), std::int64_t{0});
    return;
  }
  std::int64_t tile = data_byte / ft.size;
  std::int64_t within = data_byte % ft.size;
  std::size_t block = 0;
  while (within >= ft.blocks[block].length) within -= ft.blocks[block++].length;
  std::int64_t done = 0;
  while (done < bytes) {
    const dtype::Block& b = ft.blocks[block];
    const std::int64_t len = std::min(b.length - within, bytes - done);
    if (!fn(f.disp + scaled(tile * ft.extent + b.offset + within), scaled(len), scaled(done)))
      return;
    done += len;
    within = 0;
    if (++block == ft.blocks.size()) {
      block = 0;
      ++tile;
    }
  }
}

// Holds an fcntl lock on [lo, hi) of the file while it lives (atomic mode).
class RangeLock {
 public:
  RangeLock(int fd, bool active, bool exclusive, std::int64_t lo, std::int64_t hi)
      : fd_(active && hi > lo ? fd : -1), lo_(lo), hi_(hi) {
    if (fd_ >= 0) Set(exclusive ? F_WRLCK : F_RDLCK);
  }
  ~RangeLock() {
    if (fd_ >= 0) Set(F_UNLCK);
  }
  RangeLock(const RangeLock&) = delete;
  RangeLock& operator=(const RangeLock&) = delete;

 private:
  void Set(short type) {
    struct flock fl {};
    fl.l_type = type;
    fl.l_whence = SEEK_SET;
    fl.l_start = lo_;
    fl.l_len = hi_ - lo_;
    // F_SETLKW blocks in the kernel until the range is free.
    while (::fcntl(fd_, F_SETLKW, &fl) != 0 && errno == EINTR) {
    }
  }
  int fd_;
  std::int64_t lo_, hi_;
};

}  // namespace

std::int64_t FileByteOf(const File& f, std::int64_t data_byte) {
  std::int64_t at = f.disp;
  ForEachRun(f, data_byte, 1, [&](std::int64_t byte, std::int64_t, std::int64_t) {
    at = byte;
    return false;
  });
  return at;
}

std::int64_t DataBytesBefore(const File& f, std::int64_t file_byte) {
  if (file_byte <= f.disp) return 0;
  const dtype::Type& ft = *f.filetype;
  // In the view's native positions: a part of a narrower external32
  // element counts as the whole element.
  const std::int64_t rel = (file_byte - f.disp + f.ext_bytes - 1) / f.ext_bytes * f.native_bytes;
  if (ft.IsContiguous()) return rel;
  const std::int64_t tiles = rel / ft.extent;
  const std::int64_t rest = rel % ft.extent;
  std::int64_t n = tiles * ft.size;
  for (const dtype::Block& b : ft.blocks) {
    if (b.offset >= rest) break;
    n += std::min(b.length, rest - b.offset);
  }
  return n;
}

Status Read(const File& f, std::int64_t offset, void* buf, std::int64_t count,
            const dtype::Type& mem, std::int64_t* bytes) {
  *bytes = 0;
  const std::int64_t total = count * mem.size;
  if (total == 0) return Status::Ok();
  const std::int64_t start = offset * f.etype->size;
  std::vector<char> staging;
  char* dst = static_cast<char*>(buf);
  if (!mem.IsContiguous() || f.external32) {
    staging.resize(static_cast<std::size_t>(total * f.ext_bytes / f.native_bytes));
    dst = staging.data();
  }
  RangeLock lock(f.fd, f.atomic, false, FileByteOf(f, start), FileByteOf(f, start + total - 1) + 1);
  Status st;
  std::int64_t got = 0;
  ForEachRun(f, start, total, [&](std::int64_t at, std::int64_t len, std::int64_t done) {
    std::int64_t run = 0;
    while (run < len) {
      ssize_t n = ::pread(f.fd, dst + done + run, static_cast<std::size_t>(len - run), at + run);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        st = ErrnoStatus(errno, "cannot read", f.path);
        return false;
      }
      if (n == 0) break;  // end of file: the read is short
      run += n;
    }
    got += run;
    return run == len;
  });
  if (!st.ok()) return st;
  if (f.external32) {
    const std::int64_t items = got / dtype::ExternalSize(mem);  // whole items only
    dtype::UnpackExternal(mem, staging.data(), items, buf);
    // In memory's bytes; a part of an item left at the end of the file
    // counts as far as its whole elements go.
    got = got / f.ext_bytes * f.native_bytes;
  } else if (!staging.empty()) {
    dtype::Unpack(mem, staging.data(), got, count, buf);
  }
  *bytes = got;
  return Status::Ok();
}

Status Write(const File& f, std::int64_t offset, const void* buf, std::int64_t count,
             const dtype::Type& mem, std::int64_t* bytes) {
  *bytes = 0;
  const std::int64_t total = count * mem.size;
  if (total == 0) return Status::Ok();
  const std::int64_t start = offset * f.etype->size;
  std::vector<char> staging;
  const char* src = static_cast<const char*>(buf);
  if (f.ext_bytes < f.native_bytes) {
    const std::int64_t bad = dtype::FirstUnrepresentable(mem, buf, count);
    if (bad >= 0)
      return Error(kConversion, "element " + std::to_string(bad) +
                                    " does not fit its external32 size (" +
                                    std::to_string(f.ext_bytes) + " bytes); nothing was written");
  }
  if (!mem.IsContiguous() || f.external32) {
    staging.resize(static_cast<std::size_t>(total * f.ext_bytes / f.native_bytes));
    if (f.external32)
      dtype::PackExternal(mem, buf, count, staging.data());
    else
      dtype::Pack(mem, buf, count, staging.data());
    src = staging.data();
  }
  RangeLock lock(f.fd, f.atomic, true, FileByteOf(f, start), FileByteOf(f, start + total - 1) + 1);
  Status st;
  std::int64_t put = 0;
  ForEachRun(f, start, total, [&](std::int64_t at, std::int64_t len, std::int64_t done) {
    std::int64_t run = 0;
    while (run < len) {
      ssize_t n = ::pwrite(f.fd, src + done + run, static_cast<std::size_t>(len - run), at + run);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        st = ErrnoStatus(errno, "cannot write", f.path);
        return false;
      }
      run += n;
    }
    put += run;
    return true;
  });
  *bytes = put / f.ext_bytes * f.native_bytes;
  return st;
}

}  // namespace nicq::io
