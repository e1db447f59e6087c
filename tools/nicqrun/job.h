// A nicqrun job: N rank processes on this node, their output pipes, the
// bootstrap rendezvous, and the rules that end the job. One poll() loop
// waits on everything (signals arrive through a signalfd), so nicqrun
// sleeps unless a rank prints, calls a bootstrap collective, or exits.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "options.h"
#include "output_forwarder.h"
#include "rendezvous_server.h"

namespace nicq::run {

class Job {
 public:
  explicit Job(const Options& opts);
  ~Job();
  // Runs the job to the end; returns nicqrun's exit status.
  int Run();

 private:
  struct Rank {
    pid_t pid = -1;
    bool running = false;
    int wait_status = 0;
    std::unique_ptr<OutputForwarder> out, err;
  };

  std::string Setup();
  std::string Spawn(int rank);
  void BindRank(int r) const;
  void ReapChildren();
  void OnRankExit(int rank, int status);
  // A clean end, or a failure that RankFailed reports.
  void JudgeExit(int rank, int status);
  void RankFailed(int rank, const std::string& message, int job_status);
  void OnSignal(int sig);
  void OnTimeout();
  void HandleRendezvous(const RendezvousEvent& ev);
  // First reason to end the job wins: message, exit status, then every
  // rank still running gets `sig` (SIGKILL follows after a grace period).
  void Fail(const std::string& message, int exit_status, int sig);
  void SignalAll(int sig);
  std::string RunningRanks() const;
  int PollTimeoutMs() const;

  Options opts_;
  std::vector<Rank> ranks_;
  RendezvousServer rendezvous_;
  std::string job_dir_;
  int signal_fd_ = -1;
  int running_ = 0;
  bool failing_ = false;
  int exit_status_ = 0;
  double start_ = 0, kill_at_ = 0, drain_until_ = 0;
};

// Seconds on the monotonic clock.
double Now();

}  // namespace nicq::run
