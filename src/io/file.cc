// Opening, closing and sizing POSIX files, and the view's types.
#include "io/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace nicq::io {

Code ClassOfErrno(int err) {
  switch (err) {
    case ENOENT:
    case ENOTDIR:
      return kNoSuchFile;
    case EEXIST:
      return kFileExists;
    case EACCES:
    case EPERM:
      return kAccess;
    case EROFS:
      return kReadOnly;
    case ENOSPC:
    case EFBIG:
      return kNoSpace;
    case EDQUOT:
      return kQuota;
    case ENAMETOOLONG:
    case EISDIR:
    case ELOOP:
      return kBadFile;
    default:
      return kIo;
  }
}

Status ErrnoStatus(int err, const std::string& what, const std::string& path) {
  return Error(ClassOfErrno(err), what + " '" + path + "': " + std::strerror(err));
}

std::string LocalPath(const std::string& name) {
  for (const char* prefix : {"ufs:", "nfs:"})
    if (name.rfind(prefix, 0) == 0) return name.substr(std::strlen(prefix));
  return name;
}

// One open(2), EINTR retried.
static int OpenOnce(const std::string& path, int oflags) {
  int got;
  do {
    got = ::open(path.c_str(), oflags, 0666);
  } while (got < 0 && errno == EINTR);
  return got;
}

Status OpenPath(const std::string& path, const OpenFlags& flags, int* fd, bool* created) {
  int oflags = flags.read && flags.write ? O_RDWR : flags.write ? O_WRONLY : O_RDONLY;
  oflags |= O_CLOEXEC;
  bool made = false;
  int got = -1;
  if (flags.create && !flags.exclusive && created) {
    // O_CREAT alone cannot say whether it created: try to create first,
    // else open what exists (again if it was removed in between).
    for (int tries = 0; got < 0 && tries < 8; ++tries) {
      got = OpenOnce(path, oflags | O_CREAT | O_EXCL);
      made = got >= 0;
      if (got < 0 && errno == EEXIST) got = OpenOnce(path, oflags);
      if (got < 0 && errno != ENOENT) break;
    }
    // A dangling symbolic link fails O_EXCL (EEXIST) and the plain open
    // (ENOENT) every time; O_CREAT creates its target. Whether that made
    // the target is not known, so it is never removed.
    if (got < 0 && errno == ENOENT) got = OpenOnce(path, oflags | O_CREAT);
  } else {
    if (flags.create) oflags |= O_CREAT;
    if (flags.exclusive) oflags |= O_EXCL;
    got = OpenOnce(path, oflags);
    made = got >= 0 && flags.create && flags.exclusive;
  }
  if (got < 0) return ErrnoStatus(errno, "cannot open", path);
  struct stat st {};
  if (::fstat(got, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(got);
    return Error(kBadFile, "'" + path + "' is a directory");
  }
  *fd = got;
  if (created) *created = made;
  return Status::Ok();
}

void SetView(File* f, std::int64_t disp, dtype::Type* etype, dtype::Type* filetype,
             const std::string& datarep) {
  dtype::Retain(etype);
  dtype::Retain(filetype);
  dtype::Type* old_e = f->etype;
  dtype::Type* old_f = f->filetype;
  f->disp = disp;
  f->etype = etype;
  f->filetype = filetype;
  f->datarep = datarep;
  f->external32 = datarep == "external32";
  f->ext_bytes = f->native_bytes = 1;
  int ext = 1, native = 1;
  if (f->external32 && !SameExternalLayout(*etype) && dtype::ExternalScale(*etype, &ext, &native)) {
    f->ext_bytes = ext;
    f->native_bytes = native;
  }
  f->position = 0;
  if (old_e) dtype::Release(old_e);
  if (old_f) dtype::Release(old_f);
}

bool SameExternalLayout(const dtype::Type& t) {
  return dtype::ExternalSize(t) == t.size;
}

bool FitsExternalScale(const dtype::Type& t, int ext, int native) {
  if (ext == native) return SameExternalLayout(t);
  int e = 0, n = 0;
  return dtype::ExternalScale(t, &e, &n) && e == ext && n == native;
}

Status Close(File* f) {
  if (f->etype) dtype::Release(f->etype);
  if (f->filetype) dtype::Release(f->filetype);
  f->etype = f->filetype = nullptr;
  if (f->fd >= 0 && ::close(f->fd) != 0) {
    f->fd = -1;
    return ErrnoStatus(errno, "cannot close", f->path);
  }
  f->fd = -1;
  return Status::Ok();
}

Status Size(const File& f, std::int64_t* bytes) {
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) return ErrnoStatus(errno, "cannot stat", f.path);
  *bytes = st.st_size;
  return Status::Ok();
}

Status Truncate(const File& f, std::int64_t bytes) {
  int rc;
  do {
    rc = ::ftruncate(f.fd, bytes);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) return ErrnoStatus(errno, "cannot resize", f.path);
  return Status::Ok();
}

Status Preallocate(const File& f, std::int64_t bytes) {
  std::int64_t now = 0;
  if (Status st = Size(f, &now); !st.ok()) return st;
  if (bytes <= now) return Status::Ok();
  int err = ::posix_fallocate(f.fd, 0, bytes);
  // A file system without fallocate: growing the file is what remains.
  if (err == EOPNOTSUPP || err == EINVAL) return Truncate(f, bytes);
  if (err != 0) return ErrnoStatus(err, "cannot preallocate", f.path);
  return Status::Ok();
}

Status Sync(const File& f) {
  if (::fsync(f.fd) != 0 && errno != EINVAL) return ErrnoStatus(errno, "cannot sync", f.path);
  return Status::Ok();
}

}  // namespace nicq::io
