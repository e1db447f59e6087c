// Human-readable views of a lowered plan, so users can see what will run on
// the NIC: text (one line per op) and Graphviz dot (ops as boxes, counters
// as ellipses; op -> counter is a completion, counter -> op a trigger).
#include <cstdio>
#include <fstream>
#include <sstream>

#include "core/config.h"
#include "offload/trigger_plan.h"

namespace nicq::offload {
namespace {

std::string OpDetail(const TriggeredOp& op) {
  std::ostringstream o;
  switch (op.kind) {
    case OpKind::kSend:
    case OpKind::kRecv:
      o << " peer=" << op.peer << " tag=" << op.tag << " bytes=" << op.bytes;
      break;
    case OpKind::kPut:
    case OpKind::kAtomic:
      o << " peer=" << op.peer << " bytes=" << op.bytes;
      break;
    case OpKind::kRemoteCounterAdd:
      o << " peer=" << op.peer << " value=" << op.value;
      break;
    case OpKind::kCounterAdd:
    case OpKind::kCounterSet:
      o << " value=" << op.value;
      break;
    case OpKind::kHost:
      break;
  }
  return o.str();
}

}  // namespace

std::string ExecutorName(const OffloadBackend* backend) {
  if (backend == nullptr) return "none (not bound)";
  const std::string name = backend->Name();
  if (backend->Caps().native_triggers) return name + " (triggered ops on the NIC)";
  if (backend->HostDriven()) return name + " (software counters, fired inside host calls)";
  if (name == "shm")
    return name + " (shared-memory counters, run by the process that completes them)";
  return name + " (software counters, fired by the emulator)";
}

// Who runs a plan's host steps (pack, unpack, reduce), for dumps: whether
// the plan still progresses with every host thread asleep.
std::string HostStepRunner(const OffloadBackend* backend) {
  if (backend == nullptr) return "not bound";
  if (backend->Caps().native_triggers || backend->HostDriven() ||
      std::string(backend->Name()) == "shm")
    return "the host's progress (MPI calls)";
  return "the emulator's agent";
}

std::string TriggerPlan::DumpText() const {
  std::ostringstream o;
  o << "plan " << name_ << ": " << proto_.size() << " ops, " << counters_.size() << " counters, "
    << slots_needed() << " trigger slots per epoch, executor " << ExecutorName(backend_);
  if (!host_tasks_.empty())
    o << "; host steps " << host_tasks_.size() << ", run by " << HostStepRunner(backend_);
  o << "\n";
  for (std::size_t c = 0; c < counters_.size(); ++c) {
    o << "  c" << c << " " << CounterRoleName(counters_[c].role) << " '" << counters_[c].name
      << "' +" << counters_[c].delta << "/epoch\n";
  }
  for (std::size_t i = 0; i < proto_.size(); ++i) {
    const TriggeredOp& op = proto_[i];
    o << "  op" << i << " " << OpKindName(op.kind) << OpDetail(op) << " [" << labels_[i] << "]"
      << " when c" << op.trigger << " >= " << base_[i] << "+k*" << delta_[i];
    if (op.kind == OpKind::kCounterAdd || op.kind == OpKind::kCounterSet) {
      o << " -> c" << op.target_counter;
    }
    if (op.completion != kNoCounter) o << " then c" << op.completion << " +=" << op.completion_inc;
    o << "\n";
  }
  return o.str();
}

std::string TriggerPlan::DumpDot() const {
  std::ostringstream o;
  o << "digraph \"" << name_ << "\" {\n  rankdir=TB;\n";
  for (std::size_t c = 0; c < counters_.size(); ++c) {
    o << "  c" << c << " [shape=ellipse,label=\"" << counters_[c].name << "\\n+"
      << counters_[c].delta << "/epoch\"];\n";
  }
  for (std::size_t i = 0; i < proto_.size(); ++i) {
    const TriggeredOp& op = proto_[i];
    o << "  op" << i << " [shape=box,label=\"" << OpKindName(op.kind) << OpDetail(op) << "\\n"
      << labels_[i] << "\"];\n";
    o << "  c" << op.trigger << " -> op" << i << " [label=\">=" << base_[i] << "+k*" << delta_[i]
      << "\"];\n";
    if (op.completion != kNoCounter) {
      o << "  op" << i << " -> c" << op.completion << " [label=\"+" << op.completion_inc
        << "\"];\n";
    }
    if (op.kind == OpKind::kCounterAdd && op.value != 0) {
      o << "  op" << i << " -> c" << op.target_counter << " [style=dashed,label=\"+" << op.value
        << "\"];\n";
    }
  }
  o << "}\n";
  return o.str();
}

void MaybeDumpPlan(const TriggerPlan& plan, int rank) {
  const std::string mode = config::GetString("NICQ_PLAN_DUMP");
  if (mode.empty()) return;
  const std::string text = mode == "dot" ? plan.DumpDot() : plan.DumpText();
  const std::string file = config::GetString("NICQ_PLAN_DUMP_FILE");
  const std::string header = "# rank " + std::to_string(rank) + "\n";
  if (file.empty()) {
    std::fprintf(stderr, "%s%s", header.c_str(), text.c_str());
    return;
  }
  std::ofstream f(file, std::ios::app);
  f << header << text;
}

}  // namespace nicq::offload
