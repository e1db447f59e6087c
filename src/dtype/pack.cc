// Moving typed data: packing a typed buffer into a contiguous one and
// back, copying between two buffers of one type, and the conversions
// between bytes, elements and counts that MPI_Get_count and
// MPI_Get_elements report. Type construction is datatype.cc.
#include <algorithm>
#include <cstring>

#include "dtype/datatype.h"

namespace nicq::dtype {

void Pack(const Type& t, const void* src, std::int64_t count, void* dst) {
  auto* out = static_cast<char*>(dst);
  const auto* base = static_cast<const char*>(src);
  if (t.IsContiguous()) {
    std::memcpy(out, base, static_cast<std::size_t>(count * t.size));
    return;
  }
  for (std::int64_t i = 0; i < count; ++i) {
    const char* item = base + i * t.extent;
    for (const Block& b : t.blocks) {
      std::memcpy(out, item + b.offset, static_cast<std::size_t>(b.length));
      out += b.length;
    }
  }
}

void Unpack(const Type& t, const void* src, std::int64_t bytes, std::int64_t count, void* dst) {
  const auto* in = static_cast<const char*>(src);
  auto* base = static_cast<char*>(dst);
  bytes = std::min(bytes, count * t.size);
  if (t.IsContiguous()) {
    std::memcpy(base, in, static_cast<std::size_t>(bytes));
    return;
  }
  for (std::int64_t i = 0; i < count && bytes > 0; ++i) {
    char* item = base + i * t.extent;
    for (const Block& b : t.blocks) {
      std::int64_t n = std::min(bytes, b.length);
      std::memcpy(item + b.offset, in, static_cast<std::size_t>(n));
      in += n;
      bytes -= n;
      if (bytes == 0) break;
    }
  }
}

void CopyTyped(const Type& t, const void* src, std::int64_t count, void* dst) {
  const auto* from = static_cast<const char*>(src);
  auto* to = static_cast<char*>(dst);
  if (t.IsContiguous()) {
    std::memmove(to, from, static_cast<std::size_t>(count * t.size));
    return;
  }
  for (std::int64_t i = 0; i < count; ++i)
    for (const Block& b : t.blocks)
      std::memmove(to + i * t.extent + b.offset, from + i * t.extent + b.offset,
                   static_cast<std::size_t>(b.length));
}

std::int64_t CountFromBytes(const Type& t, std::int64_t bytes) {
  if (t.size == 0) return bytes == 0 ? 0 : -1;
  return bytes % t.size == 0 ? bytes / t.size : -1;
}

std::int64_t ElementsFromBytes(const Type& t, std::int64_t bytes) {
  if (t.size == 0) return bytes == 0 ? 0 : -1;
  std::int64_t n = (bytes / t.size) * t.elements;
  std::int64_t rest = bytes % t.size;
  for (const Block& b : t.blocks) {
    if (rest == 0) break;
    std::int64_t take = std::min(rest, b.length);
    std::int64_t bs = BasicSize(b.basic);
    if (take % bs) return -1;
    n += take / bs;
    rest -= take;
  }
  return n;
}

std::int64_t BytesFromElements(const Type& t, std::int64_t elements) {
  if (t.elements == 0) return elements == 0 ? 0 : -1;
  std::int64_t bytes = (elements / t.elements) * t.size;
  std::int64_t rest = elements % t.elements;
  for (const Block& b : t.blocks) {
    if (rest == 0) break;
    std::int64_t bs = BasicSize(b.basic);
    std::int64_t take = std::min(rest, b.length / bs);
    bytes += take * bs;
    rest -= take;
  }
  return bytes;
}

void Span(const Type& t, const void* buf, std::int64_t count, std::uintptr_t* lo,
          std::uintptr_t* hi) {
  auto base = reinterpret_cast<std::uintptr_t>(buf);
  if (count <= 0 || t.size == 0) {
    *lo = *hi = base;
    return;
  }
  std::int64_t first = t.blocks.front().offset, last = first;
  for (const Block& b : t.blocks) {
    first = std::min(first, b.offset);
    last = std::max(last, b.offset + b.length);
  }
  std::int64_t step = (count - 1) * t.extent;
  *lo = base + std::min<std::int64_t>(first, first + step);
  *hi = base + std::max<std::int64_t>(last, last + step);
}

}  // namespace nicq::dtype
