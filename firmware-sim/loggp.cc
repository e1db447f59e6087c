#include "firmware-sim/loggp.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace nicq::fwsim {
namespace {

std::string Trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

}  // namespace

Status ParseLogGP(const std::string& text, LogGP* out) {
  std::istringstream in(text);
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    line = Trim(line.substr(0, line.find('#')));
    if (line.empty()) continue;
    const auto eq = line.find('=');
    if (eq == std::string::npos) {
      return Error(Code::kArg,
                   "ParseLogGP: line " + std::to_string(lineno) + ": expected key = value");
    }
    const std::string key = Trim(line.substr(0, eq));
    const std::string val = Trim(line.substr(eq + 1));
    if (key == "name") {
      out->name = val;
      continue;
    }
    char* end = nullptr;
    const double v = std::strtod(val.c_str(), &end);
    if (end == val.c_str() || v < 0) {
      return Error(Code::kArg,
                   "ParseLogGP: line " + std::to_string(lineno) + ": bad value for " + key);
    }
    const auto ps = [&](double ns) { return static_cast<Time>(ns * kPsPerNs + 0.5); };
    if (key == "L_ns")
      out->L = ps(v);
    else if (key == "o_ns")
      out->o = ps(v);
    else if (key == "g_ns")
      out->g = ps(v);
    else if (key == "G_ps_per_byte")
      out->G = static_cast<Time>(v + 0.5);
    else if (key == "nic_op_ns")
      out->nic_op = ps(v);
    else if (key == "host_op_ns")
      out->host_op = ps(v);
    else if (key == "host_byte_ps")
      out->host_byte = static_cast<Time>(v + 0.5);
    else if (key == "trigger_slots")
      out->trigger_slots = static_cast<std::size_t>(v);
    else if (key == "max_retries")
      out->max_retries = static_cast<std::size_t>(v);
    else if (key == "counter_bits") {
      if (v < 1 || v > 64) {
        return Error(Code::kArg,
                     "ParseLogGP: line " + std::to_string(lineno) + ": counter_bits must be 1..64");
      }
      out->counter_bits = static_cast<unsigned>(v);
    } else if (key == "retry_timeout_ns")
      out->retry_timeout = ps(v);
    else {
      return Error(Code::kArg,
                   "ParseLogGP: line " + std::to_string(lineno) + ": unknown key '" + key + "'");
    }
  }
  return Status::Ok();
}

Status LoadLogGP(const std::string& path, LogGP* out) {
  std::ifstream f(path);
  if (!f) return Error(Code::kArg, "LoadLogGP: cannot open '" + path + "'");
  std::stringstream ss;
  ss << f.rdbuf();
  Status s = ParseLogGP(ss.str(), out);
  return s.WithContext("LoadLogGP(" + path + ")");
}

// Keep in sync with configs/*.conf (a test compares them).
Status PresetLogGP(const std::string& name, LogGP* out) {
  *out = LogGP{};
  if (name == "slingshot") {
    return ParseLogGP(
        "name = slingshot\nL_ns = 1300\no_ns = 150\ng_ns = 40\nG_ps_per_byte = 40\n"
        "nic_op_ns = 30\nhost_op_ns = 800\nhost_byte_ps = 80\ntrigger_slots = 1024\n",
        out);
  }
  if (name == "infiniband") {
    return ParseLogGP(
        "name = infiniband\nL_ns = 900\no_ns = 200\ng_ns = 30\nG_ps_per_byte = 40\n"
        "nic_op_ns = 50\nhost_op_ns = 600\nhost_byte_ps = 80\ntrigger_slots = 512\n",
        out);
  }
  return Error(Code::kArg, "PresetLogGP: unknown preset '" + name + "' (slingshot, infiniband)");
}

}  // namespace nicq::fwsim
