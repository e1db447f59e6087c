// The deferred-work budget of the cxi persona: the trigger-list entries of
// a service, shared by the processes of the node that use it (fi_cxi(7)
// "Triggered Operation"). A small POSIX shm segment named after the service
// holds one slot per open domain (pid, entries held). An entry is held from
// FI_QUEUE_WORK until the persona sees its trigger fire (or FI_FLUSH_WORK /
// domain close); slots of dead processes are reclaimed.
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "providers/persona/persona.h"

namespace nicq::persona {

constexpr int kSlots = 256;

struct DwqShm {
  std::atomic<uint32_t> ready;
  pthread_mutex_t mutex;
  struct Slot {
    pid_t pid;
    uint32_t held;
  } slots[kSlots];
};

namespace {

std::string service_name() {
  const char* s = std::getenv("NICQ_PERSONA_SERVICE");
  // nicqrun / mpirun is the parent of every local rank: its pid names the job.
  std::string key = s && *s ? s : std::to_string(static_cast<long>(getppid()));
  std::string name = "/nicq_persona_dwq_";
  for (char c : key) name += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  return name;
}

bool alive(pid_t pid) {
  return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

void shm_lock(DwqShm* s) {
  if (pthread_mutex_lock(&s->mutex) == EOWNERDEAD) pthread_mutex_consistent(&s->mutex);
}

void nap() {
  timespec ts{0, 200000};
  nanosleep(&ts, nullptr);
}

size_t in_use(DwqShm* s) {
  size_t total = 0;
  for (auto& slot : s->slots) {
    if (!slot.pid) continue;
    if (!alive(slot.pid)) {
      slot.pid = 0;
      slot.held = 0;
      continue;
    }
    total += slot.held;
  }
  return total;
}

// Segments of jobs whose launcher is gone. A rank that exits without
// closing its domains (an abort, a kill, a timeout) or whose launcher has
// not reaped its peers yet (zombies still answer kill(pid, 0)) leaves the
// segment behind; the service of a real NIC ends with its job, so the
// attach of a domain removes those of dead launchers (domains are opened a
// few times per process: the scan is not on any data path).
void RemoveStaleSegments() {
  DIR* dir = opendir("/dev/shm");
  if (dir == nullptr) return;
  constexpr char kPrefix[] = "nicq_persona_dwq_";
  while (dirent* e = readdir(dir)) {
    if (std::strncmp(e->d_name, kPrefix, sizeof kPrefix - 1) != 0) continue;
    const char* key = e->d_name + sizeof kPrefix - 1;
    char* end = nullptr;
    const long pid = std::strtol(key, &end, 10);
    if (end == key || *end != '\0' || pid <= 0) continue;  // a named service
    if (!alive(static_cast<pid_t>(pid))) shm_unlink((std::string("/") + e->d_name).c_str());
  }
  closedir(dir);
}

}  // namespace

bool dwq_reserve(Domain* d) {
  DwqShm* s = d->dwq;
  shm_lock(s);
  const bool ok = in_use(s) + 1 <= dwq_depth();
  if (ok) s->slots[d->dwq_slot].held++;
  pthread_mutex_unlock(&s->mutex);
  if (ok) d->dwq_held++;
  return ok;
}

void dwq_release(Domain* d, size_t n) {
  if (!n || !d->dwq) return;
  DwqShm* s = d->dwq;
  shm_lock(s);
  auto& slot = s->slots[d->dwq_slot];
  slot.held = slot.held >= n ? slot.held - static_cast<uint32_t>(n) : 0;
  pthread_mutex_unlock(&s->mutex);
  d->dwq_held -= n < d->dwq_held ? n : d->dwq_held;
}

void dwq_exhausted(Domain* d) {
  fatal(*d->spec,
        "trigger resources exhausted: all %zu deferred-work entries of service %s are in use "
        "(undefined on the real NIC; NICQ_PERSONA_TRIG_OP_LIMIT=1 makes FI_QUEUE_WORK return "
        "-FI_ENOSPC instead)",
        dwq_depth(), service_name().c_str() + 1);
}

size_t dwq_depth() {
  const char* s = std::getenv("NICQ_PERSONA_DWQ_DEPTH");
  return s && *s ? std::strtoull(s, nullptr, 10) : 504;  // fi_cxi(7): 512 per service, 8 reserved
}

int dwq_attach(Domain* d) {
  RemoveStaleSegments();
  const std::string name = service_name();
  for (int attempt = 0; attempt < 100; attempt++) {
    bool creator = true;
    int fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0 && errno == EEXIST) {
      creator = false;
      fd = shm_open(name.c_str(), O_RDWR, 0600);
    }
    if (fd < 0) {
      if (errno == ENOENT) continue;  // unlinked between the two opens
      return -FI_EIO;
    }
    if (creator && ftruncate(fd, sizeof(DwqShm)) != 0) {
      close(fd);
      shm_unlink(name.c_str());
      return -FI_EIO;
    }
    struct stat st {};
    for (int i = 0; i < 5000 && fstat(fd, &st) == 0 && st.st_size < (off_t)sizeof(DwqShm); i++)
      nap();
    auto* s = static_cast<DwqShm*>(
        mmap(nullptr, sizeof(DwqShm), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
    if (s == MAP_FAILED) {
      close(fd);
      return -FI_EIO;
    }
    if (creator) {
      pthread_mutexattr_t a;
      pthread_mutexattr_init(&a);
      pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
      pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
      pthread_mutex_init(&s->mutex, &a);
      s->ready.store(1, std::memory_order_release);
    }
    for (int i = 0; i < 5000 && !s->ready.load(std::memory_order_acquire); i++) nap();
    shm_lock(s);
    // A segment unlinked by its last user meanwhile is not the service's any more.
    if (fstat(fd, &st) != 0 || st.st_nlink == 0) {
      pthread_mutex_unlock(&s->mutex);
      munmap(s, sizeof(DwqShm));
      close(fd);
      continue;
    }
    in_use(s);  // reclaims slots of dead processes
    int slot = -1;
    for (int i = 0; i < kSlots && slot < 0; i++)
      if (!s->slots[i].pid) slot = i;
    if (slot >= 0) s->slots[slot] = {getpid(), 0};
    pthread_mutex_unlock(&s->mutex);
    if (slot < 0) {
      munmap(s, sizeof(DwqShm));
      close(fd);
      return -FI_ENOSPC;
    }
    d->dwq = s;
    d->dwq_fd = fd;
    d->dwq_slot = slot;
    return 0;
  }
  return -FI_EIO;
}

void dwq_detach(Domain* d) {
  DwqShm* s = d->dwq;
  if (!s) return;
  shm_lock(s);
  s->slots[d->dwq_slot] = {0, 0};
  bool others = false;
  for (auto& slot : s->slots) others |= slot.pid && alive(slot.pid);
  if (!others) shm_unlink(service_name().c_str());
  pthread_mutex_unlock(&s->mutex);
  munmap(s, sizeof(DwqShm));
  close(d->dwq_fd);
  d->dwq = nullptr;
}

void dwq_release_fired(Domain* d) {
  size_t fired = 0;
  for (auto& [c, thresholds] : d->dwq_pending) {
    if (thresholds.empty()) continue;
    const uint64_t v = c->core_read();
    auto end = thresholds.upper_bound(v);
    fired += static_cast<size_t>(std::distance(thresholds.begin(), end));
    thresholds.erase(thresholds.begin(), end);
  }
  dwq_release(d, fired);
}

}  // namespace nicq::persona
