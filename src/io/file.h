// nicq::io — MPI-IO on POSIX files: one descriptor per process on a file
// every rank of the job sees, a view that maps the etype stream onto file
// bytes, and reads and writes as pread/pwrite over the view's runs. The
// collective agreement (who creates, one verdict for all) is the API
// layer's (src/api/file*.cc); everything here is local to one process.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"
#include "dtype/datatype.h"

namespace nicq::io {

// The MPI error classes of file I/O (mpi.h values; core/status.h names only
// the classes the other layers raise).
inline constexpr Code kAccess = static_cast<Code>(20);
inline constexpr Code kAmode = static_cast<Code>(21);
inline constexpr Code kBadFile = static_cast<Code>(23);
inline constexpr Code kConversion = static_cast<Code>(25);
inline constexpr Code kFileExists = static_cast<Code>(29);
inline constexpr Code kFile = static_cast<Code>(31);
inline constexpr Code kIo = static_cast<Code>(36);
inline constexpr Code kNoSpace = static_cast<Code>(41);
inline constexpr Code kNoSuchFile = static_cast<Code>(42);
inline constexpr Code kQuota = static_cast<Code>(44);
inline constexpr Code kReadOnly = static_cast<Code>(45);
inline constexpr Code kUnsupportedDatarep = static_cast<Code>(51);

// How a process opens the file (the access mode, decoded by the caller).
struct OpenFlags {
  bool read = false;
  bool write = false;
  bool create = false;
  bool exclusive = false;
};

// The error class for an errno of open, unlink, pread, pwrite, ftruncate.
Code ClassOfErrno(int err);
// A Status of that class: "<what> '<path>': <strerror>".
Status ErrnoStatus(int err, const std::string& what, const std::string& path);

// Opens `path` (the "ufs:" / "nfs:" prefix of ROMIO-style names removed).
// *created (when asked) says whether this call made the file, so that a
// failed collective open can remove what it created and nothing else.
Status OpenPath(const std::string& path, const OpenFlags& flags, int* fd, bool* created = nullptr);
// The name without a file-system prefix.
std::string LocalPath(const std::string& name);

struct File {
  int fd = -1;
  std::string path;  // as opened (prefix removed)
  int amode = 0;     // MPI_MODE_* bits as given
  bool readable = false;
  bool writable = false;
  bool atomic = false;
  // The view: data starts `disp` bytes into the file; filetype tiles from
  // there; positions count etypes of the view's data.
  std::int64_t disp = 0;
  dtype::Type* etype = nullptr;     // retained while the view holds it
  dtype::Type* filetype = nullptr;  // retained while the view holds it
  std::string datarep = "native";
  // "external32" on types whose external32 sizes are their native ones:
  // the file holds the same layout, big-endian (dtype's external32 code).
  bool external32 = false;
  // "external32" on a view of narrower elements (MPI_LONG: 8 bytes here, 4
  // there): every file position of the view is its native data position
  // scaled by ext_bytes/native_bytes (1/1 otherwise).
  int ext_bytes = 1, native_bytes = 1;
  std::int64_t position = 0;  // individual file pointer, in etypes
};

// Sets the view (types already checked and committed, the external32
// scale among them); retains the new types and releases the old ones;
// resets the individual pointer.
void SetView(File* f, std::int64_t disp, dtype::Type* etype, dtype::Type* filetype,
             const std::string& datarep);
// Releases the view's types and closes the descriptor.
Status Close(File* f);

Status Size(const File& f, std::int64_t* bytes);
Status Truncate(const File& f, std::int64_t bytes);
// Grows the file to at least `bytes` with its blocks allocated.
Status Preallocate(const File& f, std::int64_t bytes);
Status Sync(const File& f);

// The absolute byte of the view's data byte `data_byte`.
std::int64_t FileByteOf(const File& f, std::int64_t data_byte);
// How many of the view's data bytes lie before absolute byte `file_byte`.
std::int64_t DataBytesBefore(const File& f, std::int64_t file_byte);

// Whether "external32" keeps t's layout: every element as wide as natively.
bool SameExternalLayout(const dtype::Type& t);
// Whether t may be a view's etype or filetype, or an access's memory type,
// under "external32" on a view scaled ext/native (1/1: the view keeps the
// layout): t keeps the layout too, or is made of elements all narrower
// there by that one ratio (MPI_LONG, MPI_UNSIGNED_LONG: 8 to 4 bytes,
// MPI_WCHAR 4 to 2), whole elements apart.
bool FitsExternalScale(const dtype::Type& t, int ext, int native);

// Reads or writes `count` items of `mem` at `buf`, starting `offset` etypes
// into the view. *bytes is what moved: short for a read that met the end of
// the file. In atomic mode the touched byte range is locked (fcntl) for the
// duration, so concurrent accesses by other processes are serialized. A
// write of a value that a narrower external32 element cannot hold fails
// with MPI_ERR_CONVERSION before anything is written.
Status Read(const File& f, std::int64_t offset, void* buf, std::int64_t count,
            const dtype::Type& mem, std::int64_t* bytes);
Status Write(const File& f, std::int64_t offset, const void* buf, std::int64_t count,
             const dtype::Type& mem, std::int64_t* bytes);

}  // namespace nicq::io
