// Tollgate benchmark load generator.
//
// Plain POSIX sockets + epoll, single thread, loopback only (127.0.0.1).
// Built by bench/run.sh with: g++ -O2 -std=c++20 -o build/bench/loadgen bench/loadgen.cpp
//
// Modes
//   loadgen freeport
//       Bind 127.0.0.1:0, print the port the kernel chose, exit.
//
//   loadgen rate --port P --body FILE [--rate 5000] [--conns 32] [--duration 10]
//                [--warmup 1] [--drain 2] [--path /v1/chat/completions]
//                [--expect STRING] [--watch PID,PID,...] [--sample-every SECONDS]
//       Open-loop, fixed-rate load over keep-alive connections. Request i is
//       *intended* to start at t0 + i/rate regardless of how earlier requests
//       fared; it goes to a global FIFO and the next idle connection sends it.
//       Latency is measured from the intended start time, so a stalled server
//       shows up as queueing delay instead of silently lowering the offered load
//       (no coordinated omission). Only requests whose intended start falls in
//       [warmup, warmup+duration) are measured. With --watch, utime+stime of the
//       listed processes (/proc/PID/stat) is sampled at the window edges and
//       divided by the responses completed in the window; VmRSS/VmHWM come from
//       /proc/PID/status.
//
//   loadgen ttfb --port P --body FILE [--count 2000] [--warmup 100]
//                [--expect STRING] [--marker "data:"] [--max-seconds 60]
//       Sequential requests on one keep-alive connection. TTFB is the time from
//       the start of sending the request to the arrival of the first response
//       body byte that begins the marker (default "data:", i.e. the first SSE
//       event; an empty marker means any body byte).
//
// Output: one line "RESULT key=value ..." on stdout; diagnostics on stderr.
// Every loop is bounded in count and in time.

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace {

constexpr std::size_t kBodyKeep = 1 << 20;  // decoded body bytes kept for --expect

uint64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

[[noreturn]] void die(const std::string& msg) {
  std::fprintf(stderr, "loadgen: %s\n", msg.c_str());
  std::exit(2);
}

// ---------------------------------------------------------------- arguments

struct Args {
  std::map<std::string, std::string> kv;

  std::string str(const std::string& k, const std::string& def) const {
    auto it = kv.find(k);
    return it == kv.end() ? def : it->second;
  }
  double num(const std::string& k, double def) const {
    auto it = kv.find(k);
    if (it == kv.end()) return def;
    char* end = nullptr;
    double v = std::strtod(it->second.c_str(), &end);
    if (end == it->second.c_str() || *end != '\0') die("bad number for --" + k + ": " + it->second);
    return v;
  }
  bool has(const std::string& k) const { return kv.count(k) != 0; }
};

Args parse_args(int argc, char** argv, int first) {
  Args a;
  for (int i = first; i < argc; ++i) {
    std::string k = argv[i];
    if (k.rfind("--", 0) != 0) die("unexpected argument: " + k);
    if (i + 1 >= argc) die("missing value for " + k);
    a.kv[k.substr(2)] = argv[++i];
  }
  return a;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) die("cannot read " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// ---------------------------------------------------------------- /proc

struct ProcSample {
  bool ok = false;
  uint64_t cpu_ticks = 0;  // utime + stime
  long rss_kb = -1;
  long hwm_kb = -1;
};

ProcSample sample_proc(int pid) {
  ProcSample s;
  {
    std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!f || !std::getline(f, line)) return s;
    auto rp = line.rfind(')');
    if (rp == std::string::npos) return s;
    std::istringstream ss(line.substr(rp + 2));
    std::vector<std::string> tok;
    std::string t;
    while (ss >> t && tok.size() < 16) tok.push_back(t);
    // tok[0] is field 3 (state); utime is field 14, stime field 15.
    if (tok.size() < 13) return s;
    s.cpu_ticks =
        std::strtoull(tok[11].c_str(), nullptr, 10) + std::strtoull(tok[12].c_str(), nullptr, 10);
  }
  {
    std::ifstream f("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(f, line)) {
      if (line.rfind("VmRSS:", 0) == 0) s.rss_kb = std::strtol(line.c_str() + 6, nullptr, 10);
      if (line.rfind("VmHWM:", 0) == 0) s.hwm_kb = std::strtol(line.c_str() + 6, nullptr, 10);
    }
  }
  s.ok = true;
  return s;
}

std::vector<int> parse_pids(const std::string& s) {
  std::vector<int> out;
  std::string cur;
  for (char c : s + ",") {
    if (c == ',') {
      if (!cur.empty()) out.push_back(std::atoi(cur.c_str()));
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  return out;
}

// ---------------------------------------------------------------- HTTP/1.1 response parser

bool ieq_prefix(std::string_view line, std::string_view name) {
  if (line.size() < name.size()) return false;
  for (std::size_t i = 0; i < name.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(line[i])) !=
        std::tolower(static_cast<unsigned char>(name[i])))
      return false;
  return true;
}

std::string lower(std::string_view v) {
  std::string out(v);
  for (auto& c : out) c = char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

class RespParser {
 public:
  enum class St {
    Headers,
    Body,
    ChunkSize,
    ChunkData,
    ChunkCrlf,
    Trailers,
    UntilClose,
    Done,
    Error
  };

  void reset() {
    st_ = St::Headers;
    head_.clear();
    line_.clear();
    body_.clear();
    status_ = 0;
    clen_ = -1;
    chunked_ = false;
    close_ = false;
    remaining_ = 0;
  }

  // Feeds bytes; returns false on a protocol error. Bytes after the end of
  // the response (we never pipeline) are a protocol error too.
  bool feed(const char* p, std::size_t n) {
    std::size_t i = 0;
    while (i < n) {
      switch (st_) {
        case St::Headers: {
          // Accumulate until the blank line; headers are small.
          std::size_t take = n - i;
          std::size_t old = head_.size();
          head_.append(p + i, take);
          auto pos = head_.find("\r\n\r\n", old >= 3 ? old - 3 : 0);
          if (pos == std::string::npos) {
            if (head_.size() > 64 * 1024) return fail();
            i = n;
            break;
          }
          std::size_t used = pos + 4 - old;
          head_.resize(pos + 4);
          i += used;
          if (!parse_head()) return fail();
          break;
        }
        case St::Body: {
          std::size_t take = std::min<std::size_t>(n - i, std::size_t(remaining_));
          keep(p + i, take);
          i += take;
          remaining_ -= int64_t(take);
          if (remaining_ == 0) st_ = St::Done;
          break;
        }
        case St::UntilClose:
          keep(p + i, n - i);
          i = n;
          break;
        case St::ChunkSize:
        case St::Trailers: {
          char c = p[i++];
          line_.push_back(c);
          if (line_.size() > 4096) return fail();
          if (line_.size() >= 2 && line_[line_.size() - 2] == '\r' && c == '\n') {
            std::string l = line_.substr(0, line_.size() - 2);
            line_.clear();
            if (st_ == St::Trailers) {
              if (l.empty()) st_ = St::Done;
              break;
            }
            auto semi = l.find(';');
            if (semi != std::string::npos) l.resize(semi);
            char* end = nullptr;
            errno = 0;
            unsigned long long sz = std::strtoull(l.c_str(), &end, 16);
            if (l.empty() || errno != 0 || (end && *end != '\0' && *end != ' ' && *end != '\t'))
              return fail();
            if (sz == 0) {
              st_ = St::Trailers;
            } else {
              remaining_ = int64_t(sz);
              st_ = St::ChunkData;
            }
          }
          break;
        }
        case St::ChunkData: {
          std::size_t take = std::min<std::size_t>(n - i, std::size_t(remaining_));
          keep(p + i, take);
          i += take;
          remaining_ -= int64_t(take);
          if (remaining_ == 0) {
            st_ = St::ChunkCrlf;
            line_.clear();
          }
          break;
        }
        case St::ChunkCrlf: {
          line_.push_back(p[i++]);
          if (line_.size() == 2) {
            if (line_ != "\r\n") return fail();
            line_.clear();
            st_ = St::ChunkSize;
          }
          break;
        }
        case St::Done:
        case St::Error:
          return fail();
      }
    }
    return true;
  }

  // Peer closed the connection. Returns true if that completed the response.
  bool on_eof() {
    if (st_ == St::UntilClose) {
      st_ = St::Done;
      return true;
    }
    return st_ == St::Done;
  }

  bool done() const { return st_ == St::Done; }
  bool headers_done() const { return st_ != St::Headers; }
  int status() const { return status_; }
  bool must_close() const { return close_; }
  const std::string& body() const { return body_; }

 private:
  bool fail() {
    st_ = St::Error;
    return false;
  }

  void keep(const char* p, std::size_t n) {
    if (body_.size() < kBodyKeep) body_.append(p, std::min(n, kBodyKeep - body_.size()));
  }

  bool parse_head() {
    std::string_view h(head_);
    auto eol = h.find("\r\n");
    std::string_view sl = h.substr(0, eol);
    if (sl.size() < 12 || sl.substr(0, 5) != "HTTP/") return false;
    bool http10 = sl.substr(5, 3) == "1.0";
    status_ = std::atoi(std::string(sl.substr(9, 3)).c_str());
    if (status_ < 100 || status_ > 599) return false;
    bool ka10 = false;
    std::size_t pos = eol + 2;
    while (pos < h.size()) {
      auto e = h.find("\r\n", pos);
      if (e == std::string_view::npos || e == pos) break;
      std::string_view line = h.substr(pos, e - pos);
      pos = e + 2;
      auto colon = line.find(':');
      if (colon == std::string_view::npos) continue;
      std::string_view val = line.substr(colon + 1);
      while (!val.empty() && (val.front() == ' ' || val.front() == '\t')) val.remove_prefix(1);
      if (ieq_prefix(line, "content-length:")) {
        clen_ = std::strtoll(std::string(val).c_str(), nullptr, 10);
      } else if (ieq_prefix(line, "transfer-encoding:")) {
        if (lower(val).find("chunked") != std::string::npos) chunked_ = true;
      } else if (ieq_prefix(line, "connection:")) {
        std::string v = lower(val);
        if (v.find("close") != std::string::npos) close_ = true;
        if (v.find("keep-alive") != std::string::npos) ka10 = true;
      }
    }
    if (http10 && !ka10) close_ = true;
    if (status_ < 200) return false;  // we never send Expect: 100-continue
    if (status_ == 204 || status_ == 304) {
      st_ = St::Done;
    } else if (chunked_) {
      st_ = St::ChunkSize;
      line_.clear();
    } else if (clen_ >= 0) {
      remaining_ = clen_;
      st_ = clen_ == 0 ? St::Done : St::Body;
    } else {
      st_ = St::UntilClose;
      close_ = true;
    }
    return true;
  }

  St st_ = St::Headers;
  std::string head_, line_, body_;
  int status_ = 0;
  int64_t clen_ = -1;
  bool chunked_ = false, close_ = false;
  int64_t remaining_ = 0;
};

// ---------------------------------------------------------------- sockets

int open_socket(bool nonblock) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | (nonblock ? SOCK_NONBLOCK : 0), 0);
  if (fd < 0) die(std::string("socket: ") + std::strerror(errno));
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

sockaddr_in loopback(int port) {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(uint16_t(port));
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);  // always 127.0.0.1
  return sa;
}

std::string build_request(const std::string& path, int port, const std::string& body) {
  std::string r;
  r.reserve(body.size() + 512);
  r += "POST " + path + " HTTP/1.1\r\n";
  r += "Host: 127.0.0.1:" + std::to_string(port) + "\r\n";
  r += "User-Agent: tollgate-bench/1\r\n";
  r += "Accept: application/json, text/event-stream\r\n";
  // BENCH_AUTH: the Authorization value (run.sh sets a real key for the authenticated target).
  const char* auth = std::getenv("BENCH_AUTH");
  r +=
      "Authorization: " + std::string(auth != nullptr ? auth : "Bearer sk-bench-0000000000000000") +
      "\r\n";
  r += "Content-Type: application/json\r\n";
  r += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  r += "\r\n";
  r += body;
  return r;
}

// ---------------------------------------------------------------- statistics

double pct_us(std::vector<uint64_t>& v, double p) {
  if (v.empty()) return NAN;
  std::size_t idx = std::size_t(std::ceil(p / 100.0 * double(v.size())));
  if (idx > 0) --idx;
  idx = std::min(idx, v.size() - 1);
  std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(idx), v.end());
  return double(v[idx]) / 1000.0;
}

double mean_us(const std::vector<uint64_t>& v) {
  if (v.empty()) return NAN;
  long double s = 0;
  for (auto x : v) s += x;
  return double(s / v.size() / 1000.0L);
}

// ---------------------------------------------------------------- mode: freeport

int mode_freeport() {
  int fd = open_socket(false);
  sockaddr_in sa = loopback(0);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0)
    die(std::string("bind: ") + std::strerror(errno));
  socklen_t len = sizeof sa;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0) die("getsockname");
  std::printf("%d\n", ntohs(sa.sin_port));
  ::close(fd);
  return 0;
}

// ---------------------------------------------------------------- mode: rate

struct Conn {
  int fd = -1;
  bool connecting = false;
  bool connected = false;
  bool busy = false;
  bool measured = false;  // current request is inside the measurement window
  std::size_t woff = 0;
  uint64_t intended = 0;
  uint64_t retry_at = 0;  // when to reconnect after a failure
  RespParser parser;
};

struct RateStats {
  uint64_t ok = 0, bad_status = 0, bad_body = 0, io_errors = 0, connect_errors = 0, reconnects = 0;
  uint64_t completed_in_window = 0;  // responses (any outcome) completed inside the time window
  std::vector<uint64_t> lat_ns;
};

class RateRunner {
 public:
  RateRunner(const Args& a)
      : port_(int(a.num("port", 0))),
        rate_(a.num("rate", 5000)),
        conns_n_(int(a.num("conns", 32))),
        warmup_ns_(uint64_t(a.num("warmup", 1) * 1e9)),
        dur_ns_(uint64_t(a.num("duration", 10) * 1e9)),
        drain_ns_(uint64_t(a.num("drain", 2) * 1e9)),
        sample_ns_(uint64_t(a.num("sample-every", 0) * 1e9)),
        expect_(a.str("expect", "")),
        watch_(parse_pids(a.str("watch", ""))) {
    if (port_ <= 0 || port_ > 65535) die("--port required");
    if (rate_ <= 0 || rate_ > 1e6) die("--rate out of range");
    if (conns_n_ < 1 || conns_n_ > 4096) die("--conns out of range");
    if (dur_ns_ == 0 || dur_ns_ > uint64_t(3600e9)) die("--duration out of range (0, 3600]");
    request_ =
        build_request(a.str("path", "/v1/chat/completions"), port_, read_file(a.str("body", "")));
    conns_.resize(std::size_t(conns_n_));
    interval_ns_ = 1e9 / rate_;
  }

  int run() {
    ep_ = ::epoll_create1(EPOLL_CLOEXEC);
    if (ep_ < 0) die("epoll_create1");
    tfd_ = ::timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (tfd_ < 0) die("timerfd_create");
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u32 = kTimerTag;
    ::epoll_ctl(ep_, EPOLL_CTL_ADD, tfd_, &ev);

    // Connect everything first, then start the clock once all are up (bounded wait).
    for (std::size_t i = 0; i < conns_.size(); ++i) start_connect(i);
    uint64_t setup_deadline = now_ns() + 5'000'000'000ull;
    while (now_ns() < setup_deadline && connected_count() < conns_.size()) poll_once(10);
    if (connected_count() == 0) die("could not connect to 127.0.0.1:" + std::to_string(port_));

    t0_ = now_ns();
    win_start_ = t0_ + warmup_ns_;
    win_end_ = win_start_ + dur_ns_;
    hard_end_ = win_end_ + drain_ns_;
    total_planned_ = uint64_t(std::floor(double(warmup_ns_ + dur_ns_) / interval_ns_));
    next_sample_ = win_start_;

    // Periodic tick at the request interval (at least 20 us, at most 1 ms).
    uint64_t tick = std::clamp<uint64_t>(uint64_t(interval_ns_), 20'000, 1'000'000);
    itimerspec its{};
    its.it_interval.tv_sec = time_t(tick / 1000000000ull);
    its.it_interval.tv_nsec = long(tick % 1000000000ull);
    its.it_value.tv_nsec = 1;  // fire immediately
    ::timerfd_settime(tfd_, 0, &its, nullptr);

    // Main loop: bounded by hard_end_ (warmup + duration + drain).
    while (true) {
      uint64_t now = now_ns();
      if (now >= hard_end_) break;
      if (now >= win_end_ && issued_ >= total_planned_ && queue_.empty() && busy_count() == 0)
        break;
      poll_once(1);
    }
    if (!win_end_sampled_) take_window_end();
    report();
    return 0;
  }

 private:
  static constexpr uint32_t kTimerTag = 0xffffffffu;

  std::size_t connected_count() const {
    std::size_t n = 0;
    for (auto& c : conns_) n += c.connected ? 1 : 0;
    return n;
  }
  std::size_t busy_count() const {
    std::size_t n = 0;
    for (auto& c : conns_) n += c.busy ? 1 : 0;
    return n;
  }

  void start_connect(std::size_t i) {
    Conn& c = conns_[i];
    c.fd = open_socket(true);
    sockaddr_in sa = loopback(port_);
    int r = ::connect(c.fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
    if (r != 0 && errno != EINPROGRESS) {
      ++st_.connect_errors;
      ::close(c.fd);
      c.fd = -1;
      c.retry_at = now_ns() + 50'000'000ull;
      return;
    }
    c.connecting = r != 0;
    c.connected = r == 0;
    c.parser.reset();
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
    ev.data.u32 = uint32_t(i);
    ::epoll_ctl(ep_, EPOLL_CTL_ADD, c.fd, &ev);
  }

  void close_conn(std::size_t i, bool retry_soon) {
    Conn& c = conns_[i];
    if (c.fd >= 0) {
      ::epoll_ctl(ep_, EPOLL_CTL_DEL, c.fd, nullptr);
      ::close(c.fd);
    }
    c.fd = -1;
    c.connected = c.connecting = c.busy = false;
    c.retry_at = now_ns() + (retry_soon ? 0 : 50'000'000ull);
  }

  // A request that was sent (or being sent) failed at the transport level.
  void fail_inflight(std::size_t i) {
    Conn& c = conns_[i];
    if (c.busy) {
      ++st_.io_errors;
      count_completion(now_ns());
    }
    close_conn(i, false);
  }

  void count_completion(uint64_t now) {
    if (now >= win_start_ && now < win_end_) ++st_.completed_in_window;
  }

  void poll_once(int timeout_ms) {
    epoll_event evs[256];
    int n = ::epoll_wait(ep_, evs, 256, timeout_ms);
    if (n < 0 && errno != EINTR) die("epoll_wait");
    for (int k = 0; k < n; ++k) {
      uint32_t tag = evs[k].data.u32;
      if (tag == kTimerTag) {
        uint64_t exp;
        while (::read(tfd_, &exp, sizeof exp) > 0) {
        }
        on_tick();
        continue;
      }
      on_conn_event(tag, evs[k].events);
    }
    // Reconnect closed connections (bounded by the main loop's deadline).
    uint64_t now = now_ns();
    for (std::size_t i = 0; i < conns_.size(); ++i) {
      if (conns_[i].fd < 0 && now >= conns_[i].retry_at && now < hard_end_) {
        ++st_.reconnects;
        start_connect(i);
      }
    }
    dispatch();
  }

  void on_tick() {
    uint64_t now = now_ns();
    if (t0_ == 0) return;
    if (now >= t0_) {
      uint64_t due =
          std::min<uint64_t>(total_planned_, uint64_t(double(now - t0_) / interval_ns_) + 1);
      while (issued_ < due) {
        queue_.push_back(t0_ + uint64_t(double(issued_) * interval_ns_));
        ++issued_;
      }
    }
    if (!win_start_sampled_ && now >= win_start_) {
      win_start_sampled_ = true;
      for (int pid : watch_) cpu0_[pid] = sample_proc(pid);
    }
    if (sample_ns_ && now >= next_sample_ && now <= win_end_) {
      std::vector<ProcSample> s;
      for (int pid : watch_) s.push_back(sample_proc(pid));
      samples_.push_back(std::move(s));
      next_sample_ += sample_ns_;
    }
    if (!win_end_sampled_ && now >= win_end_) take_window_end();
  }

  void take_window_end() {
    win_end_sampled_ = true;
    win_end_actual_ = now_ns();
    for (int pid : watch_) cpu1_[pid] = sample_proc(pid);
    if (sample_ns_) {
      std::vector<ProcSample> s;
      for (int pid : watch_) s.push_back(sample_proc(pid));
      samples_.push_back(std::move(s));
    }
  }

  void dispatch() {
    if (queue_.empty()) return;
    // Round-robin over idle connections so that every keep-alive connection carries load.
    const std::size_t base = rr_;
    for (std::size_t k = 0; k < conns_.size() && !queue_.empty(); ++k) {
      std::size_t i = (base + k) % conns_.size();
      Conn& c = conns_[i];
      if (!c.connected || c.busy) continue;
      rr_ = i + 1;
      c.intended = queue_.front();
      queue_.pop_front();
      c.busy = true;
      c.measured = c.intended >= win_start_ && c.intended < win_end_;
      c.woff = 0;
      c.parser.reset();
      try_write(i);
    }
  }

  void try_write(std::size_t i) {
    Conn& c = conns_[i];
    while (c.busy && c.woff < request_.size()) {
      ssize_t w = ::send(c.fd, request_.data() + c.woff, request_.size() - c.woff, MSG_NOSIGNAL);
      if (w > 0) {
        c.woff += std::size_t(w);
      } else if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        return;  // EPOLLOUT (edge) will resume
      } else if (w < 0 && errno == EINTR) {
        continue;
      } else {
        fail_inflight(i);
        return;
      }
    }
  }

  void on_conn_event(std::size_t i, uint32_t events) {
    if (i >= conns_.size()) return;
    Conn& c = conns_[i];
    if (c.fd < 0) return;
    if (c.connecting) {
      int err = 0;
      socklen_t len = sizeof err;
      ::getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &err, &len);
      if (err != 0 || (events & (EPOLLERR | EPOLLHUP))) {
        ++st_.connect_errors;
        close_conn(i, false);
        return;
      }
      if (!(events & EPOLLOUT)) return;
      c.connecting = false;
      c.connected = true;
    }
    if (events & EPOLLOUT) try_write(i);
    if (c.fd < 0) return;
    if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) on_readable(i);
  }

  void on_readable(std::size_t i) {
    Conn& c = conns_[i];
    char buf[65536];
    for (int guard = 0; guard < 1024; ++guard) {
      ssize_t r = ::recv(c.fd, buf, sizeof buf, 0);
      if (r > 0) {
        if (!c.busy) {  // unsolicited bytes: drop the connection
          close_conn(i, false);
          return;
        }
        if (!c.parser.feed(buf, std::size_t(r))) {
          fail_inflight(i);
          return;
        }
        if (c.parser.done()) {
          finish(i);
          if (c.fd < 0) return;
        }
      } else if (r == 0) {
        if (c.busy && c.parser.on_eof()) {
          finish(i);
          close_conn(i, true);
        } else if (c.busy) {
          fail_inflight(i);
        } else {
          close_conn(i, true);
        }
        return;
      } else {
        if (errno == EAGAIN || errno == EWOULDBLOCK) return;
        if (errno == EINTR) continue;
        fail_inflight(i);
        return;
      }
    }
  }

  void finish(std::size_t i) {
    Conn& c = conns_[i];
    uint64_t now = now_ns();
    count_completion(now);
    bool good_status = c.parser.status() >= 200 && c.parser.status() < 300;
    bool good_body = expect_.empty() || c.parser.body().find(expect_) != std::string::npos;
    if (!good_status) {
      ++st_.bad_status;
      if (first_bad_.empty())
        first_bad_ =
            "status " + std::to_string(c.parser.status()) + ": " + c.parser.body().substr(0, 300);
    } else if (!good_body) {
      ++st_.bad_body;
      if (first_bad_.empty())
        first_bad_ = "body without expected text: " + c.parser.body().substr(0, 300);
    } else {
      ++st_.ok;
      if (c.measured) st_.lat_ns.push_back(now - c.intended);
    }
    c.busy = false;
    if (c.parser.must_close()) close_conn(i, true);
  }

  void report() {
    auto first_at_or_after = [&](uint64_t off_ns) {
      return std::min<uint64_t>(total_planned_, uint64_t(std::ceil(double(off_ns) / interval_ns_)));
    };
    uint64_t measured_planned =
        first_at_or_after(warmup_ns_ + dur_ns_) - first_at_or_after(warmup_ns_);
    uint64_t unsent = queue_.size() + (total_planned_ - issued_);
    uint64_t inflight = busy_count();
    double win_s = double(win_end_actual_ - win_start_) / 1e9;
    std::vector<uint64_t> lat = st_.lat_ns;

    std::printf("RESULT mode=rate rate=%.0f conns=%d duration_s=%.3f planned=%" PRIu64
                " measured=%zu ok=%" PRIu64 " bad_status=%" PRIu64 " bad_body=%" PRIu64
                " io_errors=%" PRIu64 " connect_errors=%" PRIu64 " unsent=%" PRIu64
                " inflight_at_end=%" PRIu64 " completed_in_window=%" PRIu64 " achieved_rps=%.1f",
                rate_, conns_n_, win_s, measured_planned, lat.size(), st_.ok, st_.bad_status,
                st_.bad_body, st_.io_errors, st_.connect_errors, unsent, inflight,
                st_.completed_in_window, win_s > 0 ? double(st_.completed_in_window) / win_s : 0.0);
    std::printf(" mean_us=%.1f p50_us=%.1f p90_us=%.1f p99_us=%.1f p999_us=%.1f max_us=%.1f",
                mean_us(lat), pct_us(lat, 50), pct_us(lat, 90), pct_us(lat, 99), pct_us(lat, 99.9),
                pct_us(lat, 100));

    if (!watch_.empty()) {
      long tck = ::sysconf(_SC_CLK_TCK);
      uint64_t total_ticks = 0;
      int64_t best_ticks = -1;
      int serving = watch_.front();
      std::size_t serving_idx = 0;
      for (std::size_t k = 0; k < watch_.size(); ++k) {  // serving process = most CPU in the window
        int pid = watch_[k];
        auto a = cpu0_[pid], b = cpu1_[pid];
        if (!a.ok || !b.ok) continue;
        uint64_t d = b.cpu_ticks - a.cpu_ticks;
        total_ticks += d;
        if (int64_t(d) > best_ticks) {
          best_ticks = int64_t(d);
          serving = pid;
          serving_idx = k;
        }
      }
      double cpu_us = double(total_ticks) * 1e6 / double(tck);
      std::printf(" cpu_us=%.0f cpu_us_per_req=%.2f cpu_util_pct=%.1f serving_pid=%d", cpu_us,
                  st_.completed_in_window ? cpu_us / double(st_.completed_in_window) : NAN,
                  win_s > 0 ? cpu_us / (win_s * 1e4) : NAN, serving);
      auto s = sample_proc(serving);
      std::printf(" rss_start_kb=%ld rss_end_kb=%ld hwm_kb=%ld", cpu0_[serving].rss_kb,
                  cpu1_[serving].rss_kb, s.hwm_kb);
      if (!samples_.empty()) {
        std::printf(" rss_samples_kb=");
        for (std::size_t k = 0; k < samples_.size(); ++k)
          std::printf("%s%ld", k ? "," : "", samples_[k][serving_idx].rss_kb);
      }
    }
    std::printf("\n");
    std::fflush(stdout);
    if (!first_bad_.empty())
      std::fprintf(stderr, "loadgen: first bad response: %s\n", first_bad_.c_str());
  }

  int port_;
  double rate_;
  int conns_n_;
  uint64_t warmup_ns_, dur_ns_, drain_ns_, sample_ns_;
  std::string expect_;
  std::vector<int> watch_;
  std::string request_;
  std::vector<Conn> conns_;
  double interval_ns_ = 0;

  int ep_ = -1, tfd_ = -1;
  uint64_t t0_ = 0, win_start_ = 0, win_end_ = 0, hard_end_ = 0, win_end_actual_ = 0,
           next_sample_ = 0;
  uint64_t total_planned_ = 0, issued_ = 0;
  std::size_t rr_ = 0;
  std::deque<uint64_t> queue_;
  bool win_start_sampled_ = false, win_end_sampled_ = false;
  std::map<int, ProcSample> cpu0_, cpu1_;
  std::vector<std::vector<ProcSample>> samples_;
  RateStats st_;
  std::string first_bad_;
};

// ---------------------------------------------------------------- mode: ttfb

class TtfbRunner {
 public:
  TtfbRunner(const Args& a)
      : port_(int(a.num("port", 0))),
        count_(int(a.num("count", 2000))),
        warm_(int(a.num("warmup", 100))),
        max_ns_(uint64_t(a.num("max-seconds", 60) * 1e9)),
        expect_(a.str("expect", "")),
        marker_(a.has("marker") ? a.str("marker", "") : std::string("data:")) {
    if (port_ <= 0 || port_ > 65535) die("--port required");
    if (count_ < 1 || count_ > 10'000'000) die("--count out of range");
    request_ =
        build_request(a.str("path", "/v1/chat/completions"), port_, read_file(a.str("body", "")));
  }

  int run() {
    uint64_t start = now_ns();
    deadline_ = start + max_ns_;
    int errors = 0, bad_status = 0, bad_body = 0, no_marker = 0;
    std::vector<uint64_t> ttfb, total;
    std::string first_bad;
    int total_n = warm_ + count_;
    for (int k = 0; k < total_n && now_ns() < deadline_; ++k) {
      if (fd_ < 0 && !connect_blocking()) {
        ++errors;
        ::usleep(10000);
        continue;
      }
      uint64_t t_send = now_ns();
      if (!send_all()) {
        ++errors;
        reconnect();
        continue;
      }
      uint64_t t_first = 0;
      std::size_t scanned = 0;
      bool ok = read_response([&](const RespParser& p) {
        if (t_first) return;
        const std::string& b = p.body();
        if (marker_.empty()) {
          if (!b.empty()) t_first = now_ns();
          return;
        }
        std::size_t from = scanned >= marker_.size() ? scanned - marker_.size() + 1 : 0;
        if (b.find(marker_, from) != std::string::npos) t_first = now_ns();
        scanned = b.size();
      });
      uint64_t t_done = now_ns();
      if (!ok) {
        ++errors;
        reconnect();
        continue;
      }
      bool good_status = parser_.status() >= 200 && parser_.status() < 300;
      bool good_body = expect_.empty() || parser_.body().find(expect_) != std::string::npos;
      if (!good_status || !good_body) {
        (good_status ? bad_body : bad_status)++;
        if (first_bad.empty())
          first_bad =
              "status " + std::to_string(parser_.status()) + ": " + parser_.body().substr(0, 300);
      } else if (!t_first) {
        ++no_marker;
      } else if (k >= warm_) {
        ttfb.push_back(t_first - t_send);
        total.push_back(t_done - t_send);
      }
      if (parser_.must_close()) reconnect();
    }
    std::printf(
        "RESULT mode=ttfb count=%d measured=%zu errors=%d bad_status=%d bad_body=%d no_marker=%d "
        "reconnects=%d"
        " ttfb_mean_us=%.1f ttfb_p50_us=%.1f ttfb_p90_us=%.1f ttfb_p99_us=%.1f ttfb_max_us=%.1f"
        " total_p50_us=%.1f total_p99_us=%.1f elapsed_s=%.2f\n",
        count_, ttfb.size(), errors, bad_status, bad_body, no_marker, reconnects_, mean_us(ttfb),
        pct_us(ttfb, 50), pct_us(ttfb, 90), pct_us(ttfb, 99), pct_us(ttfb, 100), pct_us(total, 50),
        pct_us(total, 99), double(now_ns() - start) / 1e9);
    std::fflush(stdout);
    if (!first_bad.empty())
      std::fprintf(stderr, "loadgen: first bad response: %s\n", first_bad.c_str());
    if (fd_ >= 0) ::close(fd_);
    return 0;
  }

 private:
  int remaining_ms() const {
    uint64_t n = now_ns();
    if (n >= deadline_) return 0;
    return int(std::min<uint64_t>((deadline_ - n) / 1'000'000ull + 1, 5000));  // per-wait cap 5 s
  }

  bool connect_blocking() {
    fd_ = open_socket(true);
    sockaddr_in sa = loopback(port_);
    int r = ::connect(fd_, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
    if (r != 0 && errno == EINPROGRESS) {
      pollfd p{fd_, POLLOUT, 0};
      if (::poll(&p, 1, remaining_ms()) == 1) {
        int err = 0;
        socklen_t len = sizeof err;
        ::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &len);
        r = err == 0 ? 0 : -1;
      } else {
        r = -1;
      }
    }
    if (r != 0) {
      ::close(fd_);
      fd_ = -1;
      return false;
    }
    return true;
  }

  void reconnect() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    ++reconnects_;
  }

  bool send_all() {
    std::size_t off = 0;
    while (off < request_.size()) {
      ssize_t w = ::send(fd_, request_.data() + off, request_.size() - off, MSG_NOSIGNAL);
      if (w > 0) {
        off += std::size_t(w);
        continue;
      }
      if (w < 0 && errno == EINTR) continue;
      if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        pollfd p{fd_, POLLOUT, 0};
        if (::poll(&p, 1, remaining_ms()) != 1) return false;
        continue;
      }
      return false;
    }
    return true;
  }

  template <class OnData>
  bool read_response(OnData on_data) {
    parser_.reset();
    char buf[65536];
    while (!parser_.done()) {
      ssize_t r = ::recv(fd_, buf, sizeof buf, 0);
      if (r > 0) {
        if (!parser_.feed(buf, std::size_t(r))) return false;
        on_data(parser_);
        continue;
      }
      if (r == 0) return parser_.on_eof();
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) return false;
      pollfd p{fd_, POLLIN, 0};
      int ms = remaining_ms();
      if (ms <= 0 || ::poll(&p, 1, ms) != 1) return false;
    }
    return true;
  }

  int port_, count_, warm_;
  uint64_t max_ns_, deadline_ = 0;
  std::string expect_, marker_, request_;
  int fd_ = -1, reconnects_ = 0;
  RespParser parser_;
};

void usage() {
  std::fprintf(stderr,
               "usage: loadgen freeport\n"
               "       loadgen rate --port P --body FILE [--rate R] [--conns N] [--duration S] "
               "[--warmup S]\n"
               "                    [--drain S] [--path P] [--expect TEXT] [--watch PID,..] "
               "[--sample-every S]\n"
               "       loadgen ttfb --port P --body FILE [--count N] [--warmup N] [--expect TEXT] "
               "[--marker TEXT]\n"
               "                    [--max-seconds S] [--path P]\n");
}

}  // namespace

int main(int argc, char** argv) {
  ::signal(SIGPIPE, SIG_IGN);
  if (argc < 2) {
    usage();
    return 2;
  }
  std::string mode = argv[1];
  if (mode == "freeport") return mode_freeport();
  if (mode == "rate") return RateRunner(parse_args(argc, argv, 2)).run();
  if (mode == "ttfb") return TtfbRunner(parse_args(argc, argv, 2)).run();
  usage();
  return 2;
}
