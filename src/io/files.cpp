// Whole-file reading (with transparent gunzip), format dispatch and the path-taking readers.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <initializer_list>
#include <memory>
#include <system_error>
#include <thread>
#include <utility>

#include "common/check.hpp"
#include "common/random.hpp"
#include "io/io_util.hpp"
#include "rateopt/io.hpp"

namespace rateopt {

namespace {

struct FileCloser {
  void operator()(std::FILE* f) const noexcept { std::fclose(f); }
};

// The text of errno, as std::strerror gives it, but thread-safe (strerror_r underneath): readers
// and writers run on several threads at once.
std::string errno_text() {
  return std::generic_category().message(errno);
}

std::string read_raw(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw IoError(fmt::format("cannot read '{}': it is a directory", path));
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
  if (!file) throw IoError(fmt::format("cannot open '{}': {}", path, errno_text()));
  std::string data;
  char buffer[1 << 16];
  while (true) {
    const std::size_t n = std::fread(buffer, 1, sizeof buffer, file.get());
    data.append(buffer, n);
    if (n < sizeof buffer) break;
  }
  if (std::ferror(file.get()))
    throw IoError(fmt::format("cannot read '{}': {}", path, errno_text()));
  return data;
}

bool has_gzip_magic(std::string_view data) {
  return data.size() >= 2 && static_cast<unsigned char>(data[0]) == 0x1f &&
         static_cast<unsigned char>(data[1]) == 0x8b;
}

// Inflates every gzip member of `data` (concatenated members are allowed, as with gzip -d).
std::string gunzip(std::string_view data, const std::string& path) {
  std::string out;
  out.reserve(data.size() * 4);
  z_stream zs{};
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK)
    throw IoError(fmt::format("cannot decompress '{}': zlib initialisation failed", path));
  struct Guard {
    z_stream* z;
    ~Guard() { inflateEnd(z); }
  } guard{&zs};
  std::size_t pos = 0;
  char buffer[1 << 16];
  while (true) {
    const std::size_t chunk = std::min<std::size_t>(data.size() - pos, 1u << 30);
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data() + pos));
    zs.avail_in = static_cast<uInt>(chunk);
    int rc = Z_OK;
    do {
      zs.next_out = reinterpret_cast<Bytef*>(buffer);
      zs.avail_out = sizeof buffer;
      rc = inflate(&zs, Z_NO_FLUSH);
      if (rc != Z_OK && rc != Z_STREAM_END && !(rc == Z_BUF_ERROR && zs.avail_in == 0)) {
        throw IoError(fmt::format("corrupt gzip stream in '{}' ({})", path,
                                  zs.msg != nullptr ? zs.msg : "inflate failed"));
      }
      out.append(buffer, sizeof buffer - zs.avail_out);
    } while (rc == Z_OK && (zs.avail_in > 0 || zs.avail_out == 0));
    pos += chunk - zs.avail_in;
    if (rc == Z_STREAM_END) {
      const std::string_view rest = data.substr(pos);
      if (rest.empty()) break;
      if (has_gzip_magic(rest)) {
        inflateReset(&zs);
        continue;
      }
      if (rest.find_first_not_of('\0') == std::string_view::npos) break;  // zero padding
      throw IoError(
          fmt::format("corrupt gzip stream in '{}': trailing garbage after the data", path));
    }
    if (pos >= data.size()) {
      throw IoError(
          fmt::format("corrupt gzip stream in '{}': the file is truncated (unexpected end)", path));
    }
  }
  return out;
}

std::string strip_gz(const std::string& path) {
  return io_detail::ends_with_ci(path, ".gz") ? path.substr(0, path.size() - 3) : path;
}

FileFormat format_from_name(const std::string& path) {
  const std::string base = strip_gz(path);
  if (io_detail::ends_with_ci(base, ".csv") || io_detail::ends_with_ci(base, ".tsv"))
    return FileFormat::kCsv;
  if (io_detail::ends_with_ci(base, ".arff")) return FileFormat::kArff;
  return FileFormat::kLibsvm;
}

}  // namespace

std::string read_text_file(const std::string& path) {
  std::string data = read_raw(path);
  if (has_gzip_magic(data)) return gunzip(data, path);
  return data;
}

std::string decompress_gzip(std::string_view bytes, const std::string& name) {
  if (has_gzip_magic(bytes)) return gunzip(bytes, name);
  return std::string(bytes);
}

std::string io_detail::find_sibling_mulan_xml(const std::string& arff_path) {
  namespace fs = std::filesystem;
  const fs::path p(strip_gz(arff_path));
  std::string stem = p.filename().string();
  if (ends_with_ci(stem, ".arff")) stem.resize(stem.size() - 5);
  const fs::path dir = p.parent_path();
  // name-train-sparse -> name-train -> name: the longest prefix ending before a '-' wins.
  std::string candidate = stem;
  while (!candidate.empty()) {
    std::error_code ec;
    const fs::path xml = dir / (candidate + ".xml");
    if (fs::is_regular_file(xml, ec)) return xml.string();
    const auto dash = candidate.rfind('-');
    if (dash == std::string::npos || dash == 0) break;
    candidate.resize(dash);
  }
  return {};
}

Dataset parse_csv(std::string_view text, const CsvOptions& options, const std::string& name,
                  const Encoding* encoding, ReadStats* stats) {
  return io_detail::parse_csv_impl(text, options, name, encoding, stats);
}

Dataset parse_libsvm(std::string_view text, const LibsvmOptions& options, const std::string& name) {
  return io_detail::parse_libsvm_impl(text, options, name, nullptr, nullptr);
}

Dataset parse_arff(std::string_view text, const ArffOptions& options, const std::string& name,
                   const std::vector<std::string>* xml_labels) {
  return io_detail::parse_arff_impl(text, options, name, xml_labels, nullptr, nullptr);
}

namespace {

// read_csv. With an encoding and labels known without the whole file, the file is read in chunks
// (memory: the dataset and one chunk), dropping the slice columns `keep` does not name chunk by
// chunk; else its whole text is parsed (read_dataset then drops them).
Dataset read_csv_keeping(const std::string& path, const CsvOptions& options,
                         const Encoding* encoding, ReadStats* stats,
                         const std::vector<std::string>* keep) {
  Dataset ds;
  if (encoding != nullptr && io_detail::csv_reads_in_chunks(options)) {
    ds = io_detail::read_csv_chunked(path, options, *encoding, stats, keep,
                                     io_detail::kCsvChunkBytes);
  } else {
    const std::string text = read_text_file(path);
    ds = io_detail::parse_csv_impl(text, options, path, encoding, stats, keep);
  }
  ds.set_source(path);
  return ds;
}

}  // namespace

Dataset read_csv(const std::string& path, const CsvOptions& options, const Encoding* encoding,
                 ReadStats* stats) {
  return read_csv_keeping(path, options, encoding, stats, nullptr);
}

Dataset read_libsvm(const std::string& path, const LibsvmOptions& options, ReadStats* stats) {
  const std::string text = read_text_file(path);
  Dataset ds = io_detail::parse_libsvm_impl(text, options, path, nullptr, stats);
  ds.set_source(path);
  return ds;
}

namespace {

Dataset read_arff_with(const std::string& path, const ArffOptions& options,
                       const Encoding* encoding, ReadStats* stats) {
  std::string xml = options.xml_path;
  if (xml.empty() && options.num_labels == 0) xml = io_detail::find_sibling_mulan_xml(path);
  std::vector<std::string> labels;
  if (!xml.empty()) labels = read_mulan_labels(xml);
  const std::string text = read_text_file(path);
  Dataset ds = io_detail::parse_arff_impl(text, options, path, xml.empty() ? nullptr : &labels,
                                          encoding, stats);
  ds.set_source(path);
  return ds;
}

}  // namespace

Dataset read_arff(const std::string& path, const ArffOptions& options, ReadStats* stats) {
  return read_arff_with(path, options, nullptr, stats);
}

namespace {

// The message for a file that is read whole, never in parts.
std::string whole_file_only(const std::string& path, std::string_view what,
                            std::string_view remedy) {
  return fmt::format(
      "{}: {} is read whole; parts of a file (--part-bytes, or one file over several MPI ranks) "
      "are read from CSV and LIBSVM files ({})",
      path, what, remedy);
}

// The bytes of `ranges` ([begin, end) each, in order) of `path`, one after the other.
std::string read_file_ranges(
    const std::string& path,
    std::initializer_list<std::pair<std::uint64_t, std::uint64_t>> ranges) {
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
  if (!file) throw IoError(fmt::format("cannot open '{}': {}", path, errno_text()));
  std::string out;
  for (const auto& [begin, end] : ranges) {
    if (end <= begin) continue;
    if (::fseeko(file.get(), static_cast<off_t>(begin), SEEK_SET) != 0)
      throw IoError(fmt::format("cannot read '{}': {}", path, errno_text()));
    const std::size_t old = out.size();
    const auto want = static_cast<std::size_t>(end - begin);
    out.resize(old + want);
    const std::size_t got = std::fread(out.data() + old, 1, want, file.get());
    if (got != want)
      throw IoError(fmt::format(
          "cannot read '{}': {} (it changed while it was read in parts?)", path,
          std::ferror(file.get()) != 0 ? errno_text() : fmt::format("{} of {} bytes", got, want)));
  }
  return out;
}

// One part of a CSV or LIBSVM file (ReadOptions::part_bytes): its header's bytes and its own,
// the records numbered with the file's lines.
Dataset read_dataset_part(const std::string& path, FileFormat format, const ReadOptions& options,
                          ReadStats* stats) {
  if (format == FileFormat::kArff)
    throw InvalidArgument(whole_file_only(
        path, "an ARFF file", "split it into one file per rank, or rateopt convert it"));
  FilePart part;
  if (options.part_range) {
    part = *options.part_range;
  } else {
    const std::vector<FilePart> parts = file_parts(path, options);
    if (options.part >= parts.size())
      throw InvalidArgument(fmt::format(
          "ReadOptions::part = {} for {}, which has {} part{} of {} bytes", options.part, path,
          parts.size(), parts.size() == 1 ? "" : "s", options.part_bytes));
    part = parts[options.part];
  }
  RATEOPT_CHECK(part.header_end <= part.begin && part.begin <= part.end,
                "ReadOptions::part_range of {}: header_end {}, begin {}, end {}, expected them in "
                "that order (file_parts gives them)",
                path, part.header_end, part.begin, part.end);
  const std::string text = read_file_ranges(path, {{0, part.header_end}, {part.begin, part.end}});
  Dataset ds;
  if (format == FileFormat::kCsv) {
    ds = io_detail::parse_csv_impl(text, options.csv, path, options.encoding, stats,
                                   options.keep_columns ? &*options.keep_columns : nullptr,
                                   part.first_line);
  } else {
    ds = io_detail::parse_libsvm_impl(text, options.libsvm, path, options.encoding, stats,
                                      part.first_line);
  }
  ds.set_source(path);
  return ds;
}

Dataset read_dataset_text(const std::string& path, const ReadOptions& options, ReadStats* stats) {
  FileFormat format = options.format;
  if (format == FileFormat::kAuto) format = format_from_name(path);
  if (options.part_bytes > 0 || options.part_range)
    return read_dataset_part(path, format, options, stats);
  switch (format) {
    case FileFormat::kCsv:
      return read_csv_keeping(path, options.csv, options.encoding, stats,
                              options.keep_columns ? &*options.keep_columns : nullptr);
    case FileFormat::kArff:
      return read_arff_with(path, options.arff, options.encoding, stats);
    case FileFormat::kLibsvm:
    case FileFormat::kAuto: {
      const std::string text = read_text_file(path);
      if (io_detail::has_dataset_binary_magic(text))
        throw ParseError(path, 1, 0,
                         "expected LIBSVM text, found a gzip-compressed binary dataset: binary "
                         "datasets are read uncompressed (gunzip it first)");
      Dataset ds =
          io_detail::parse_libsvm_impl(text, options.libsvm, path, options.encoding, stats);
      ds.set_source(path);
      return ds;
    }
  }
  throw InvalidArgument("read_dataset: unknown file format");
}

}  // namespace

std::vector<InferredEncoding> infer_encoding_parts(const std::string& path,
                                                   const ReadOptions& options) {
  const FileFormat format =
      options.format == FileFormat::kAuto ? format_from_name(path) : options.format;
  if (format == FileFormat::kCsv && options.encoding == nullptr && options.part_bytes == 0 &&
      !options.part_range && io_detail::csv_reads_in_chunks(options.csv) &&
      !is_dataset_binary(path)) {
    if (auto parts = io_detail::infer_csv_chunked(path, options.csv, io_detail::kCsvChunkBytes))
      return std::move(*parts);
  }
  ReadOptions o = options;
  o.keep_columns = std::vector<std::string>{};  // the encoding needs no slice column
  ReadStats stats;
  InferredEncoding e;
  e.encoding = read_dataset(path, o, &stats).encoding();
  e.moments = std::move(stats.moments);
  e.source = path;
  return {std::move(e)};
}

std::size_t file_part_count(const std::string& path, std::size_t part_bytes) {
  RATEOPT_CHECK(part_bytes > 0, "part_bytes is 0, expected a positive size");
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
  if (!file) throw IoError(fmt::format("cannot open '{}': {}", path, errno_text()));
  std::array<char, 2> magic{};
  const std::size_t got = std::fread(magic.data(), 1, magic.size(), file.get());
  if (has_gzip_magic(std::string_view(magic.data(), got)))
    throw InvalidArgument(fmt::format(
        "{} is gzip-compressed: a compressed file is read whole, so it cannot be shared by MPI "
        "ranks or read in parts; decompress it (gunzip -k) or split it into one file per rank",
        path));
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) throw IoError(fmt::format("cannot read the size of '{}': {}", path, ec.message()));
  return std::max<std::size_t>(1, (static_cast<std::size_t>(size) + part_bytes - 1) / part_bytes);
}

std::vector<FilePart> file_parts(const std::string& path, const ReadOptions& options) {
  if (is_dataset_binary(path))
    throw InvalidArgument(whole_file_only(
        path, "a binary dataset",
        "give each rank its own file: rateopt convert --data 'PATTERN' -o 'DIR/{}.rods'"));
  const FileFormat format =
      options.format == FileFormat::kAuto ? format_from_name(path) : options.format;
  if (format == FileFormat::kArff)
    throw InvalidArgument(whole_file_only(
        path, "an ARFF file", "split it into one file per rank, or rateopt convert it"));
  const std::size_t count = file_part_count(path, options.part_bytes);
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) throw IoError(fmt::format("cannot read the size of '{}': {}", path, ec.message()));
  return format == FileFormat::kCsv
             ? io_detail::csv_file_parts(path, options.csv, options.part_bytes, count, size)
             : io_detail::libsvm_file_parts(path, options.part_bytes, count, size);
}

Dataset read_dataset(const std::string& path, const ReadOptions& options, ReadStats* stats) {
  const std::vector<std::string>* keep = options.keep_columns ? &*options.keep_columns : nullptr;
  if (is_dataset_binary(path)) {
    if (options.part_bytes > 0 || options.part_range)
      throw InvalidArgument(whole_file_only(
          path, "a binary dataset",
          "give each rank its own file: rateopt convert --data 'PATTERN' -o 'DIR/{}.rods'"));
    return read_dataset_binary(path, options.encoding, keep);
  }
  Dataset ds = read_dataset_text(path, options, stats);
  if (keep != nullptr) ds.keep_columns(*keep);
  return ds;
}

namespace {

// Writes all of `text` to the descriptor, retrying short writes and EINTR.
bool write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    text.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

void write_stdout(std::string_view text) {
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0 ||
      std::ferror(stdout))
    throw WriteError(fmt::format("cannot write to standard output: {}", errno_text()));
}

}  // namespace

namespace {

// The temporary files being written right now, so that a signal handler can remove them
// (remove_pending_temp_files). Lock-free slots: the handler only reads them and calls unlink,
// both async-signal-safe.
constexpr std::size_t kTempSlots = 16;
std::array<std::atomic<const char*>, kTempSlots> g_pending_temp{};

// Registers a temporary file's path for the lifetime of the guard (none when every slot is taken:
// the file is then only removed by the normal error paths).
class PendingTemp {
 public:
  explicit PendingTemp(const std::string& path) {
    for (auto& slot : g_pending_temp) {
      const char* expected = nullptr;
      if (slot.compare_exchange_strong(expected, path.c_str())) {
        slot_ = &slot;
        return;
      }
    }
  }
  ~PendingTemp() {
    if (slot_ != nullptr) slot_->store(nullptr);
  }
  PendingTemp(const PendingTemp&) = delete;
  PendingTemp& operator=(const PendingTemp&) = delete;

 private:
  std::atomic<const char*>* slot_ = nullptr;
};

// Test hook: RATEOPT_TEST_WRITE_PAUSE_MS=N holds every finished temporary file N ms before the
// rename, so that tests/cli can interrupt a run at that moment deterministically.
void pause_for_tests() {
  static const long pause_ms = [] {
    // NOLINTNEXTLINE(concurrency-mt-unsafe): read once; rateopt never calls setenv
    const char* v = std::getenv("RATEOPT_TEST_WRITE_PAUSE_MS");
    return v == nullptr ? 0L : std::strtol(v, nullptr, 10);
  }();
  if (pause_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
}

}  // namespace

void remove_pending_temp_files() noexcept {
  for (auto& slot : g_pending_temp) {
    const char* path = slot.load();
    if (path != nullptr) ::unlink(path);
  }
}

AtomicFileWriter::AtomicFileWriter(std::string path) : path_(std::move(path)) {
  to_stdout_ = path_ == "-";
  RATEOPT_CHECK(!path_.empty(), "write_file_atomic: the output path is empty");
}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (!temp_.empty() && !committed_) ::unlink(temp_.c_str());
  delete static_cast<PendingTemp*>(pending_);
}

namespace {
// The target's name as the temporary file's stem: at most 200 bytes (cut at a UTF-8 character
// boundary), so that the stem with its dot and 17-byte suffix stays within the 255-byte name
// limit of common file systems for any valid target name.
std::string temp_stem(std::string name) {
  constexpr std::size_t kMax = 200;
  if (name.size() <= kMax) return name;
  std::size_t cut = kMax;
  while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xC0U) == 0x80U) --cut;
  name.resize(cut);
  return name;
}
}  // namespace

void AtomicFileWriter::open() {
  opened_ = true;
  if (to_stdout_) return;
  // A symbolic link is written through: its target gets the text (renaming over the link would
  // replace the link itself).
  {
    std::error_code ec;
    if (std::filesystem::is_symlink(path_, ec)) {
      const std::filesystem::path resolved = std::filesystem::weakly_canonical(path_, ec);
      if (!ec) path_ = resolved.string();
    }
  }
  struct stat st {};
  if (::stat(path_.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode))
      throw WriteError(fmt::format("cannot write '{}': it is a folder", path_));
    if (!S_ISREG(st.st_mode)) {  // a device or FIFO: written in place
      in_place_ = true;
      fd_ = ::open(path_.c_str(), O_WRONLY | O_CLOEXEC);
      if (fd_ < 0)
        throw WriteError(fmt::format("cannot open '{}' for writing: {}", path_, errno_text()));
      return;
    }
  }
  const std::filesystem::path target(path_);
  const std::filesystem::path folder =
      target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
  // The temporary file's name is registered for remove_pending_temp_files *before* the file is
  // created, so that a signal at any moment removes it (with mkstemp the file would exist a
  // moment before its name could be registered): a random suffix, then an exclusive create,
  // another suffix when the name is taken.
  static std::atomic<std::uint64_t> serial{0};
  const auto clock =
      static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  for (int attempt = 0;; ++attempt) {
    const std::uint64_t suffix =
        detail::mix64(clock ^ (static_cast<std::uint64_t>(::getpid()) << 32), serial++);
    temp_ = (folder / fmt::format(".{}.tmp-{:012x}", temp_stem(target.filename().string()),
                                  suffix & 0xFFFFFFFFFFFFULL))
                .string();
    pending_ = new PendingTemp(temp_);
    const int fd = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0) {
      fd_ = fd;
      break;
    }
    const int error = errno;
    delete static_cast<PendingTemp*>(pending_);
    pending_ = nullptr;
    if (error != EEXIST || attempt >= 100) {
      temp_.clear();
      errno = error;
      throw WriteError(fmt::format("cannot create a temporary file in '{}' to write '{}': {}",
                                   folder.string(), path_, errno_text()));
    }
  }
  // The new file gets the permissions a plain create would give (mkstemp makes it 0600), or the
  // replaced file's.
  mode_t mode = 0666;
  if (::stat(path_.c_str(), &st) == 0) {
    mode = st.st_mode & 07777;
  } else {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    mode &= ~mask;
  }
  mode_ = mode;
}

void AtomicFileWriter::flush_buffer() {
  if (!opened_) open();
  if (to_stdout_) {
    write_stdout(buffer_);
  } else if (!write_all(fd_, buffer_)) {
    const std::string why = errno_text();
    if (in_place_) throw WriteError(fmt::format("cannot write '{}': {}", path_, why));
    ::unlink(temp_.c_str());
    throw WriteError(
        fmt::format("cannot write '{}' (write): {}; the file is unchanged", path_, why));
  }
  buffer_.clear();
}

void AtomicFileWriter::write(std::string_view text) {
  buffer_.append(text);
  if (buffer_.size() >= (std::size_t{1} << 20)) flush_buffer();
}

void AtomicFileWriter::commit() {
  flush_buffer();
  committed_ = true;
  if (to_stdout_) return;
  const int fd = std::exchange(fd_, -1);
  if (in_place_) {
    if (::close(fd) != 0)
      throw WriteError(fmt::format("cannot write '{}': {}", path_, errno_text()));
    return;
  }
  const auto fail = [&](const std::string& what) {
    const std::string why = errno_text();
    ::unlink(temp_.c_str());
    throw WriteError(
        fmt::format("cannot write '{}' ({}): {}; the file is unchanged", path_, what, why));
  };
  if (::fchmod(fd, static_cast<mode_t>(mode_)) != 0 || ::fsync(fd) != 0) {
    const int saved = errno;
    ::close(fd);
    errno = saved;
    fail("flush");
  }
  if (::close(fd) != 0) fail("close");
  pause_for_tests();
  if (::rename(temp_.c_str(), path_.c_str()) != 0) fail("rename");
}

void write_file_atomic(const std::string& path, std::string_view text) {
  if (path == "-") return write_stdout(text);
  AtomicFileWriter writer(path);
  writer.write(text);
  writer.commit();
}

// ---- LineReader ---------------------------------------------------------------------------------

struct LineReader::Impl {
  std::string path;  // as named in messages
  std::FILE* file = nullptr;
  bool own_file = false;
  bool gz = false;
  z_stream zs{};
  bool member_ended = false;  // gz: a member ended; another may follow
  std::string raw;            // gz: compressed bytes read, from raw_pos on not yet inflated
  std::size_t raw_pos = 0;
  bool raw_eof = false;
  bool done = false;  // no more text
  std::string text;   // text read, from pos on not yet returned
  std::size_t pos = 0;
  std::size_t scanned = 0;  // text[pos, scanned) holds no '\n'
  std::size_t line_no = 0;

  ~Impl() {
    if (gz) inflateEnd(&zs);
    if (own_file && file != nullptr) std::fclose(file);
  }

  // Appends up to 1 MiB of the file to `out`; returns the bytes read (0 at the end).
  std::size_t read_chunk(std::string& out) {
    constexpr std::size_t kChunk = std::size_t{1} << 20;
    const std::size_t old = out.size();
    out.resize(old + kChunk);
    const std::size_t n = std::fread(out.data() + old, 1, kChunk, file);
    out.resize(old + n);
    if (n == 0 && std::ferror(file))
      throw IoError(fmt::format("cannot read '{}': {}", path, errno_text()));
    return n;
  }

  // raw bytes not yet inflated, reading more when fewer than `want` are held and the file has more.
  std::size_t raw_held(std::size_t want) {
    while (raw.size() - raw_pos < want && !raw_eof) {
      raw.erase(0, raw_pos);
      raw_pos = 0;
      if (read_chunk(raw) == 0) raw_eof = true;
    }
    return raw.size() - raw_pos;
  }

  // Appends more text; false at the end of the input.
  bool fill() {
    if (done) return false;
    if (!gz) {
      if (!raw.empty()) {  // the first chunk, read to look for the gzip magic
        text.append(raw);
        raw.clear();
        return true;
      }
      if (read_chunk(text) > 0) return true;
      done = true;
      return false;
    }
    while (true) {
      if (member_ended) {
        const std::size_t held = raw_held(2);
        if (held == 0) break;
        if (held >= 2 && has_gzip_magic(std::string_view(raw).substr(raw_pos))) {
          inflateReset(&zs);
          member_ended = false;
          continue;
        }
        // Zero padding may follow the last member; anything else is garbage.
        while (true) {
          const std::string_view rest = std::string_view(raw).substr(raw_pos);
          if (rest.find_first_not_of('\0') != std::string_view::npos)
            throw IoError(
                fmt::format("corrupt gzip stream in '{}': trailing garbage after the data", path));
          raw_pos = raw.size();
          if (raw_held(1) == 0) break;
        }
        break;
      }
      if (raw_held(1) == 0)
        throw IoError(fmt::format(
            "corrupt gzip stream in '{}': the file is truncated (unexpected end)", path));
      constexpr std::size_t kOut = std::size_t{1} << 18;
      const std::size_t old = text.size();
      text.resize(old + kOut);
      const std::size_t avail = raw.size() - raw_pos;
      const auto chunk = static_cast<uInt>(std::min<std::size_t>(avail, 1u << 30));
      zs.next_in = reinterpret_cast<Bytef*>(raw.data() + raw_pos);
      zs.avail_in = chunk;
      zs.next_out = reinterpret_cast<Bytef*>(text.data() + old);
      zs.avail_out = static_cast<uInt>(kOut);
      const int rc = inflate(&zs, Z_NO_FLUSH);
      raw_pos += chunk - zs.avail_in;
      const std::size_t produced = kOut - zs.avail_out;
      text.resize(old + produced);
      if (rc != Z_OK && rc != Z_STREAM_END && !(rc == Z_BUF_ERROR && zs.avail_in == 0)) {
        throw IoError(fmt::format("corrupt gzip stream in '{}' ({})", path,
                                  zs.msg != nullptr ? zs.msg : "inflate failed"));
      }
      if (rc == Z_STREAM_END) member_ended = true;
      if (produced > 0) return true;
    }
    done = true;
    return false;
  }
};

LineReader::LineReader(const std::string& path) {
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  if (path == "-") {
    impl->file = stdin;
  } else {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
      throw IoError(fmt::format("cannot read '{}': it is a directory", path));
    impl->file = std::fopen(path.c_str(), "rb");
    if (impl->file == nullptr)
      throw IoError(fmt::format("cannot open '{}': {}", path, errno_text()));
    impl->own_file = true;
    // The gzip magic decides, as in read_text_file (standard input is read as it is).
    if (impl->read_chunk(impl->raw) == 0) impl->raw_eof = true;
    if (has_gzip_magic(impl->raw)) {
      if (inflateInit2(&impl->zs, 16 + MAX_WBITS) != Z_OK)
        throw IoError(fmt::format("cannot decompress '{}': zlib initialisation failed", path));
      impl->gz = true;
    }
  }
  impl_ = impl.release();
}

LineReader::~LineReader() {
  delete impl_;
}

std::size_t LineReader::line_number() const noexcept {
  return impl_->line_no;
}

bool LineReader::next(std::string_view& line) {
  if (!next_raw(line)) return false;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return true;
}

bool LineReader::next_raw(std::string_view& line) {
  Impl& r = *impl_;
  while (true) {
    const char* begin = r.text.data() + r.pos;
    const std::size_t nl = r.text.find('\n', r.scanned);
    std::size_t len = 0;
    if (nl != std::string::npos) {
      len = nl - r.pos;
      r.pos = nl + 1;
    } else {
      if (r.pos > 0) {  // keep only the partial line
        r.text.erase(0, r.pos);
        r.pos = 0;
      }
      r.scanned = r.text.size();
      if (r.fill()) continue;
      if (r.text.empty()) return false;
      begin = r.text.data();
      len = r.text.size();
      r.pos = len;
    }
    r.scanned = r.pos;
    line = std::string_view(begin, len);
    ++r.line_no;
    return true;
  }
}

}  // namespace rateopt
