#include "job.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>

#include "boot/local_wire.h"

namespace nicq::run {

// Ranks get this long to exit after SIGTERM before SIGKILL.
static constexpr double kGraceSeconds = 3.0;
// After the last rank exits, output still held by its children is forwarded
// for at most this long.
static constexpr double kDrainSeconds = 2.0;

double Now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

static void Note(const std::string& msg) {
  std::fprintf(stderr, "nicqrun: %s\n", msg.c_str());
}

// --bind-to core, in the child before exec: rank r of N gets the r-th block
// of C/N CPUs of nicqrun's own set (one CPU round robin when N > C). Tells
// the library through NICQ_BOUND that its cpuset is its own, not the
// node's (progress-thread decisions count cores per rank).
void Job::BindRank(int r) const {
  cpu_set_t mine;
  CPU_ZERO(&mine);
  if (sched_getaffinity(0, sizeof mine, &mine) != 0) return;
  int cpus[CPU_SETSIZE];
  int c = 0;
  for (int i = 0; i < CPU_SETSIZE; ++i)
    if (CPU_ISSET(i, &mine)) cpus[c++] = i;
  if (c == 0) return;
  const int n = opts_.ranks;
  const int per = n <= c ? c / n : 1;
  const int first = n <= c ? r * per : r % c;
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int i = 0; i < per; ++i) CPU_SET(cpus[first + i], &set);
  if (sched_setaffinity(0, sizeof set, &set) == 0) setenv("NICQ_BOUND", "1", 1);
}

Job::Job(const Options& opts) : opts_(opts), ranks_(opts.ranks), rendezvous_(opts.ranks) {}

Job::~Job() {
  if (signal_fd_ >= 0) ::close(signal_fd_);
  if (!job_dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(job_dir_, ec);
  }
}

std::string Job::Setup() {
  const char* tmp = std::getenv("TMPDIR");
  std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/nicqrun.XXXXXX";
  if (templ.size() > 80) templ = "/tmp/nicqrun.XXXXXX";  // keep the socket path short
  if (!::mkdtemp(templ.data())) return "mkdtemp(" + templ + "): " + strerror(errno);
  job_dir_ = templ;
  rendezvous_.set_recovery(opts_.recovery);
  std::string err = rendezvous_.Listen(job_dir_ + "/" + boot::kSocketName);
  if (!err.empty()) return err;

  sigset_t set;
  sigemptyset(&set);
  for (int s : {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaddset(&set, s);
  if (sigprocmask(SIG_BLOCK, &set, nullptr) < 0)
    return std::string("sigprocmask: ") + strerror(errno);
  signal_fd_ = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  if (signal_fd_ < 0) return std::string("signalfd: ") + strerror(errno);
  signal(SIGPIPE, SIG_IGN);  // a closed stdout must not kill the launcher
  return "";
}

std::string Job::Spawn(int r) {
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) < 0) return std::string("pipe: ") + strerror(errno);
  if (pipe2(err, O_CLOEXEC) < 0) {
    ::close(out[0]);
    ::close(out[1]);
    return std::string("pipe: ") + strerror(errno);
  }
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) return std::string("fork: ") + strerror(errno);
  if (pid == 0) {
    // Child: own process group (so the job can be killed as a unit), dies
    // with nicqrun even if nicqrun is SIGKILLed, default signal state.
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    // Dispositions survive exec: a nicqrun started in the background by a
    // shell inherits SIGINT ignored, and its ranks must still die on it.
    for (int s : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT}) signal(s, SIG_DFL);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    setenv("NICQ_RANK", std::to_string(r).c_str(), 1);
    setenv("NICQ_SIZE", std::to_string(opts_.ranks).c_str(), 1);
    setenv("NICQ_LOCAL_RANK", std::to_string(r).c_str(), 1);
    setenv("NICQ_LOCAL_SIZE", std::to_string(opts_.ranks).c_str(), 1);
    setenv("NICQ_BOOT_DIR", job_dir_.c_str(), 1);
    if (opts_.bind_core) BindRank(r);
    std::vector<char*> argv;
    for (std::string& a : opts_.argv) argv.push_back(a.data());
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    std::string msg = "nicqrun: rank " + std::to_string(r) + ": cannot execute '" + opts_.argv[0] +
                      "': " + strerror(errno) + "\n";
    (void)!write(2, msg.data(), msg.size());
    _exit(127);
  }
  setpgid(pid, pid);  // also here: no race with an early kill(-pid)
  ::close(out[1]);
  ::close(err[1]);
  fcntl(out[0], F_SETFL, O_NONBLOCK);
  fcntl(err[0], F_SETFL, O_NONBLOCK);
  Rank& rk = ranks_[r];
  rk.pid = pid;
  rk.running = true;
  rk.out = std::make_unique<OutputForwarder>(r, out[0], 1, opts_.tag_output);
  rk.err = std::make_unique<OutputForwarder>(r, err[0], 2, opts_.tag_output);
  ++running_;
  return "";
}

void Job::SignalAll(int sig) {
  for (const Rank& rk : ranks_) {
    if (!rk.running) continue;
    if (kill(-rk.pid, sig) < 0) kill(rk.pid, sig);
  }
}

void Job::Fail(const std::string& message, int exit_status, int sig) {
  if (failing_) return;
  failing_ = true;
  exit_status_ = exit_status;
  Note(message);
  SignalAll(sig);
  kill_at_ = Now() + kGraceSeconds;
}

std::string Job::RunningRanks() const {
  std::string s;
  for (std::size_t r = 0; r < ranks_.size(); ++r)
    if (ranks_[r].running) s += (s.empty() ? "" : " ") + std::to_string(r);
  return s.empty() ? "none" : s;
}

void Job::HandleRendezvous(const RendezvousEvent& ev) {
  if (ev.kind == RendezvousEvent::kAbort) {
    Fail("rank " + std::to_string(ev.rank) + " called abort (code " + std::to_string(ev.code) +
             "): " + ev.message + "; killing the job",
         ev.code != 0 ? ev.code : 1, SIGTERM);
  } else if (ev.kind == RendezvousEvent::kFailure) {
    Fail(ev.message + "; killing the job", 1, SIGTERM);
  }
}

namespace {
// libfabric's shm provider keeps each endpoint in /dev/shm/<pid>:<n>:<m> and
// unlinks it only on a clean close: a rank killed by a signal (or one that
// exits without MPI_Finalize) leaves 16 MiB of tmpfs behind per endpoint.
void RemoveShmRegionsOf(pid_t pid) {
  const std::string prefix = std::to_string(pid) + ":";
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/dev/shm", ec)) {
    const std::string name = e.path().filename().string();
    if (name.compare(0, prefix.size(), prefix) == 0) std::filesystem::remove(e.path(), ec);
  }
}
}  // namespace

void Job::OnRankExit(int r, int status) {
  Rank& rk = ranks_[r];
  rk.running = false;
  RemoveShmRegionsOf(rk.pid);
  rk.wait_status = status;
  --running_;
  // What the rank sent before it went (an abort, its goodbye) comes first:
  // the exit may have been seen before the socket was read.
  const RendezvousEvent sent = rendezvous_.DrainRank(r);
  if (failing_) return;  // we are killing it: its end is not news
  if (sent.kind != RendezvousEvent::kNone && sent.rank == r) return HandleRendezvous(sent);
  JudgeExit(r, status);
  // The drain may also have read a connection not yet named, another
  // rank's: its event is handled after this rank's exit is judged.
  if (sent.kind != RendezvousEvent::kNone && !failing_) HandleRendezvous(sent);
}

void Job::JudgeExit(int r, int status) {
  const Rank& rk = ranks_[r];
  const std::string who = "rank " + std::to_string(r) + " (pid " + std::to_string(rk.pid) + ")";
  const bool exited = WIFEXITED(status);
  if (exited && WEXITSTATUS(status) == 0 && !rendezvous_.InitializedNotFinalized(r)) {
    // A clean end, or a program that never called MPI_Init.
    HandleRendezvous(rendezvous_.OnRankExit(r, "exited with status 0"));
    return;
  }
  std::string what;
  int job_status = 1;
  if (exited && WEXITSTATUS(status) == 0) {
    what = " exited with status 0 without calling MPI_Finalize";
  } else if (exited) {
    what = " exited with status " + std::to_string(WEXITSTATUS(status));
    job_status = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    what = " was killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
    job_status = 128 + sig;
  } else {
    return;
  }
  RankFailed(r, who + what, job_status);
}

// A rank failed (nonzero status, signal, or an exit without MPI_Finalize).
// By default the job ends; under --enable-recovery the failure is reported
// and remembered for the exit status, and the other ranks go on (nicq
// reports MPI_ERR_PROC_FAILED to calls that need the failed rank), unless
// they are stuck in a bootstrap collective that now cannot complete.
void Job::RankFailed(int r, const std::string& message, int job_status) {
  if (!opts_.recovery) {
    Fail(message + (running_ > 0 ? "; killing the other ranks" : ""), job_status, SIGTERM);
    return;
  }
  Note(message + (running_ > 0 ? "; the other ranks go on (--enable-recovery)" : ""));
  if (exit_status_ == 0) exit_status_ = job_status;
  HandleRendezvous(rendezvous_.OnRankExit(r, "failed"));
}

void Job::ReapChildren() {
  for (;;) {
    int status = 0;
    pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid <= 0) return;
    for (std::size_t r = 0; r < ranks_.size(); ++r)
      if (ranks_[r].pid == pid && ranks_[r].running) OnRankExit(static_cast<int>(r), status);
  }
}

void Job::OnSignal(int sig) {
  if (sig == SIGCHLD) return ReapChildren();
  if (failing_) {  // second Ctrl-C: no more grace
    SignalAll(SIGKILL);
    return;
  }
  Fail(std::string("caught ") + sigabbrev_np(sig) +
           "; killing the job (ranks still running: " + RunningRanks() + ")",
       128 + sig, sig == SIGQUIT ? SIGKILL : sig);
}

void Job::OnTimeout() {
  char secs[32];
  std::snprintf(secs, sizeof(secs), "%g", opts_.timeout_s);
  Fail(std::string("timeout after ") + secs + " s; ranks still running: " + RunningRanks() +
           "; killing the job",
       124, SIGTERM);
}

int Job::PollTimeoutMs() const {
  double deadline = 0;
  if (!failing_ && opts_.timeout_s > 0) deadline = start_ + opts_.timeout_s;
  if (failing_ && running_ > 0 && kill_at_ > 0) deadline = kill_at_;
  if (running_ == 0) deadline = drain_until_;
  if (deadline == 0) return -1;
  double ms = (deadline - Now()) * 1000.0;
  return ms <= 0 ? 0 : static_cast<int>(ms) + 1;
}

int Job::Run() {
  start_ = Now();
  std::string err = Setup();
  for (int r = 0; err.empty() && r < opts_.ranks; ++r) err = Spawn(r);
  if (!err.empty()) {
    if (running_ == 0) {
      Note("cannot start the job: " + err);
      return 1;
    }
    Fail("cannot start the job: " + err, 1, SIGTERM);
  }

  std::vector<pollfd> fds;
  for (;;) {
    bool pipes_open = false;
    for (const Rank& rk : ranks_) pipes_open |= rk.out && (rk.out->open() || rk.err->open());
    if (running_ == 0 && !pipes_open) break;
    if (running_ == 0 && drain_until_ == 0) drain_until_ = Now() + kDrainSeconds;

    fds.clear();
    fds.push_back({signal_fd_, POLLIN, 0});
    for (const Rank& rk : ranks_) {  // a rank never spawned polls fd -1: ignored
      fds.push_back({rk.out ? rk.out->fd() : -1, POLLIN, 0});
      fds.push_back({rk.err ? rk.err->fd() : -1, POLLIN, 0});
    }
    const std::size_t rv_base = fds.size();
    rendezvous_.AddPollFds(fds);
    int n = poll(fds.data(), fds.size(), PollTimeoutMs());
    if (n < 0 && errno != EINTR) {
      Fail(std::string("poll: ") + strerror(errno), 1, SIGKILL);
      break;
    }
    if (n > 0) {
      for (std::size_t r = 0; r < ranks_.size(); ++r) {
        if (fds[1 + 2 * r].revents) ranks_[r].out->OnReadable();
        if (fds[2 + 2 * r].revents) ranks_[r].err->OnReadable();
      }
      HandleRendezvous(rendezvous_.HandlePoll(fds.data() + rv_base, fds.size() - rv_base));
      if (fds[0].revents & POLLIN) {
        signalfd_siginfo si;
        while (read(signal_fd_, &si, sizeof(si)) == sizeof(si))
          OnSignal(static_cast<int>(si.ssi_signo));
      }
    }
    const double now = Now();
    if (!failing_ && opts_.timeout_s > 0 && now >= start_ + opts_.timeout_s && running_ > 0)
      OnTimeout();
    if (failing_ && running_ > 0 && kill_at_ > 0 && now >= kill_at_) {
      Note("ranks " + RunningRanks() + " still running after " +
           std::to_string(int(kGraceSeconds)) + " s; sending SIGKILL");
      SignalAll(SIGKILL);
      kill_at_ = 0;
    }
    if (running_ == 0 && drain_until_ > 0 && now >= drain_until_)
      for (Rank& rk : ranks_)
        if (rk.out) rk.out->Close(), rk.err->Close();
  }
  return exit_status_;
}

}  // namespace nicq::run
