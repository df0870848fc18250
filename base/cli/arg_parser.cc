#include "base/cli/arg_parser.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <utility>

namespace lumos::cli {
namespace {

constexpr size_t kHelpWidth = 92;      // Columns of the generated help.
constexpr size_t kMaxNameColumn = 30;  // Where option help starts, at most.

bool LooksLikeNegativeNumber(std::string_view text) {
  return text.size() >= 2 && text[0] == '-' &&
         ((text[1] >= '0' && text[1] <= '9') || text[1] == '.');
}

// Optimal string alignment distance (a swap of two neighbours counts once).
size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

// `text` wrapped into lines of at most `width` columns (a longer word gets a line of its own).
std::vector<std::string> Wrap(std::string_view text, size_t width) {
  std::vector<std::string> lines;
  std::string line;
  size_t pos = 0;
  while (pos < text.size()) {
    while (pos < text.size() && text[pos] == ' ') ++pos;
    size_t end = text.find(' ', pos);
    if (end == std::string_view::npos) end = text.size();
    if (end == pos) break;
    std::string_view word = text.substr(pos, end - pos);
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      lines.push_back(std::move(line));
      line.clear();
    }
    if (!line.empty()) line += ' ';
    line += word;
    pos = end;
  }
  if (!line.empty()) lines.push_back(std::move(line));
  return lines;
}

}  // namespace

std::string UsageErrorText(std::string_view program, std::string_view message) {
  std::string text(program);
  text += ": ";
  text += message;
  text += "\n(run `";
  text += program;
  text += " --help` for usage)\n";
  return text;
}

ArgParser::ArgParser(std::string program, std::string synopsis)
    : program_(std::move(program)), synopsis_(std::move(synopsis)) {}

ArgParser& ArgParser::Description(std::string text) {
  description_ = std::move(text);
  return *this;
}

ArgParser& ArgParser::Epilogue(std::string text) {
  epilogue_ = std::move(text);
  return *this;
}

ArgParser& ArgParser::Section(std::string heading) {
  sections_.push_back(std::move(heading));
  return *this;
}

ArgParser& ArgParser::Version(std::string text) {
  version_ = std::move(text);
  return *this;
}

ArgParser& ArgParser::Add(std::string_view names, std::string value_name, std::string help,
                          std::function<Status(std::string_view, const std::string&)> store) {
  Option option;
  // "-o, --output", "-o" or "--output".
  size_t pos = 0;
  while (pos < names.size()) {
    while (pos < names.size() && (names[pos] == ' ' || names[pos] == ',')) ++pos;
    size_t end = names.find_first_of(", ", pos);
    if (end == std::string_view::npos) end = names.size();
    std::string_view name = names.substr(pos, end - pos);
    if (name.rfind("--", 0) == 0) {
      option.long_name = name;
    } else if (!name.empty()) {
      option.short_name = name;
    }
    pos = end;
  }
  option.value_name = std::move(value_name);
  option.help = std::move(help);
  option.section = sections_.size() - 1;
  option.store = std::move(store);
  options_.push_back(std::move(option));
  return *this;
}

ArgParser& ArgParser::Flag(std::string_view names, std::string help, bool* value) {
  return Add(names, "", std::move(help), [value](std::string_view, const std::string&) {
    *value = true;
    return Status::Ok();
  });
}

ArgParser& ArgParser::String(std::string_view names, std::string value_name, std::string help,
                             std::string* value) {
  return Add(names, std::move(value_name), std::move(help),
             [value](std::string_view, const std::string& text) {
               *value = text;
               return Status::Ok();
             });
}

ArgParser& ArgParser::Strings(std::string_view names, std::string value_name, std::string help,
                              std::vector<std::string>* values) {
  Add(names, std::move(value_name), std::move(help),
      [values](std::string_view, const std::string& text) {
        values->push_back(text);
        return Status::Ok();
      });
  options_.back().repeatable = true;
  return *this;
}

ArgParser& ArgParser::AddInt(std::string_view names, std::string value_name, std::string help,
                             int64_t min, int64_t max, std::function<void(int64_t)> store) {
  Add(names, std::move(value_name), std::move(help),
      [min, max, store = std::move(store)](std::string_view typed, const std::string& text) {
        errno = 0;
        char* end = nullptr;
        const long long v = std::strtoll(text.c_str(), &end, 10);
        const bool digits_only = !text.empty() &&
                                 std::isspace(static_cast<unsigned char>(text[0])) == 0 &&
                                 text[0] != '+' && *end == '\0' && errno != ERANGE;
        if (!digits_only || v < min || v > max) {
          return Status::Error(std::string(typed) + " must be an integer in " +
                               std::to_string(min) + ".." + std::to_string(max) + ", got '" + text +
                               "'");
        }
        store(v);
        return Status::Ok();
      });
  options_.back().numeric = min < 0;
  return *this;
}

ArgParser& ArgParser::Double(std::string_view names, std::string value_name, std::string help,
                             double min, double max, bool max_open, double* value) {
  Add(names, std::move(value_name), std::move(help),
      [min, max, max_open, value](std::string_view typed, const std::string& text) {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        const bool number = !text.empty() &&
                            std::isspace(static_cast<unsigned char>(text[0])) == 0 &&
                            *end == '\0' && std::isfinite(v);
        if (!number || v < min || v > max || (max_open && v == max)) {
          char range[96];
          std::snprintf(range, sizeof(range), "[%g, %g%c", min, max, max_open ? ')' : ']');
          return Status::Error(std::string(typed) + " must be a number in " + range + ", got '" +
                               text + "'");
        }
        *value = v;
        return Status::Ok();
      });
  options_.back().numeric = min < 0;
  return *this;
}

ArgParser& ArgParser::Choice(std::string_view names, std::string value_name, std::string help,
                             std::vector<std::string> choices, std::string* value) {
  return Add(
      names, std::move(value_name), std::move(help),
      [choices = std::move(choices), value](std::string_view typed, const std::string& text) {
        if (std::find(choices.begin(), choices.end(), text) != choices.end()) {
          *value = text;
          return Status::Ok();
        }
        std::string list;
        for (const std::string& c : choices) list += (list.empty() ? "" : ", ") + c;
        return Status::Error(std::string(typed) + " must be one of " + list + ", got '" + text +
                             "'");
      });
}

ArgParser& ArgParser::Required() {
  options_.back().required = true;
  return *this;
}

ArgParser& ArgParser::Check(std::function<Status(const std::string& value)> check) {
  options_.back().checks.push_back(std::move(check));
  return *this;
}

ArgParser& ArgParser::Given(bool* given) {
  options_.back().given_out = given;
  return *this;
}

ArgParser& ArgParser::Positionals(std::string name, std::string noun, size_t min_count,
                                  std::vector<std::string>* values) {
  positional_name_ = std::move(name);
  positional_noun_ = std::move(noun);
  positional_min_ = min_count;
  positionals_ = values;
  return *this;
}

ArgParser& ArgParser::StopAtFirstPositional() {
  stop_at_first_positional_ = true;
  return *this;
}

ArgParser::Option* ArgParser::Find(std::string_view name) {
  for (Option& option : options_) {
    if (name == option.long_name || name == option.short_name) return &option;
  }
  return nullptr;
}

std::string ArgParser::UnknownOption(std::string_view name) const {
  std::string message = "unknown option '" + std::string(name) + "'";
  std::vector<std::string> names = OptionNames();
  std::string best;
  size_t best_distance = SIZE_MAX;
  for (const std::string& candidate : names) {
    if (candidate.size() <= 2) continue;  // A short name says too little to guess from.
    size_t distance = EditDistance(name, candidate);
    // "--zstd" for "--zstd-level": a prefix of four or more letters is close.
    if (name.size() >= 6 && candidate.rfind(name, 0) == 0) distance = 1;
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  if (!best.empty() && best_distance <= std::max<size_t>(2, name.size() / 3)) {
    return message + " (did you mean " + best + "?)";
  }
  std::string list;
  for (const Option& option : options_) {
    list += list.empty() ? "" : ", ";
    list += option.long_name.empty() ? option.short_name : option.long_name;
  }
  list += list.empty() ? "--help" : ", --help";
  if (!version_.empty()) list += ", --version";
  return message + " (options: " + list + ")";
}

Status ArgParser::Parse(const std::vector<std::string>& args) {
  bool options_done = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (!options_done && arg == "--") {
      options_done = true;
      continue;
    }
    if (options_done || arg.size() < 2 || arg[0] != '-') {
      if (positionals_ == nullptr) {
        return Status::Error("unexpected argument '" + arg + "'");
      }
      positionals_->push_back(arg);
      if (stop_at_first_positional_) options_done = true;
      continue;
    }
    std::string name = arg;
    std::optional<std::string> inline_value;
    if (arg.rfind("--", 0) == 0) {
      if (const size_t equals = arg.find('='); equals != std::string::npos) {
        name = arg.substr(0, equals);
        inline_value = arg.substr(equals + 1);
      }
    }
    if (name == "-h" || name == "--help") {
      help_requested_ = true;
      return Status::Ok();
    }
    if (name == "--version" && !version_.empty()) {
      version_requested_ = true;
      return Status::Ok();
    }
    Option* option = Find(name);
    if (option == nullptr) return Status::Error(UnknownOption(name));
    std::string value;
    if (option->value_name.empty()) {
      if (inline_value) {
        std::string message = name;
        message += " takes no value, got '";
        message += arg;
        message += "'";
        return Status::Error(message);
      }
    } else if (inline_value) {
      if (inline_value->empty()) return Status::Error(name + " needs a value");
      value = *inline_value;
    } else {
      if (i + 1 >= args.size()) return Status::Error(name + " needs a value");
      const std::string& next = args[i + 1];
      const bool looks_like_option =
          next.size() >= 2 && next[0] == '-' && !(option->numeric && LooksLikeNegativeNumber(next));
      if (looks_like_option || next.empty()) {
        std::string message = name;
        message += " needs a value, got '";
        message += next;
        message += "'";
        if (!option->long_name.empty() && !next.empty()) {
          message += " (for a value that starts with '-', write ";
          message += option->long_name;
          message += "=VALUE)";
        }
        return Status::Error(message);
      }
      value = next;
      ++i;
    }
    if (option->given > 0 && !option->repeatable && !option->value_name.empty()) {
      return Status::Error(name + " given twice");
    }
    ++option->given;
    if (option->given_out != nullptr) *option->given_out = true;
    LUMOS_RETURN_IF_ERROR(option->store(name, value));
    for (const auto& check : option->checks) LUMOS_RETURN_IF_ERROR(check(value));
  }
  for (const Option& option : options_) {
    if (option.required && option.given == 0) {
      return Status::Error((option.short_name.empty() ? option.long_name : option.short_name) +
                           " " + option.value_name + " is required");
    }
  }
  if (positionals_ != nullptr && positionals_->size() < positional_min_) {
    return Status::Error("no " + positional_noun_ + " given (" + positional_name_ + ")");
  }
  return Status::Ok();
}

std::optional<int> ArgParser::ParseOrExit(const std::vector<std::string>& args, std::FILE* out,
                                          std::FILE* err) {
  Status status = Parse(args);
  if (!status.ok()) return UsageError(err, status.message());
  if (help_requested_) {
    std::fputs(Help().c_str(), out);
    return 0;
  }
  if (version_requested_) {
    std::fprintf(out, "%s\n", version_.c_str());
    return 0;
  }
  return std::nullopt;
}

int ArgParser::UsageError(std::FILE* err, std::string_view message) const {
  std::fputs(UsageErrorText(program_, message).c_str(), err);
  return 2;
}

std::string ArgParser::Names(const Option& option) {
  std::string names = option.short_name;
  if (!option.long_name.empty()) {
    names += names.empty() ? "" : ", ";
    names += option.long_name;
  }
  if (!option.value_name.empty()) names += " " + option.value_name;
  return names;
}

std::string ArgParser::Help() const {
  std::string help = "usage: " + program_ + (synopsis_.empty() ? "" : " " + synopsis_) + "\n";
  if (!description_.empty())
    help += "\n" + description_ + (description_.back() == '\n' ? "" : "\n");
  // -h and --version are options like the others, listed in the first section.
  std::vector<Option> listed = options_;
  Option help_option;
  help_option.short_name = "-h";
  help_option.long_name = "--help";
  help_option.help = "print this help and exit";
  listed.push_back(help_option);
  if (!version_.empty()) {
    Option version;
    version.long_name = "--version";
    version.help = "print the version and exit";
    listed.push_back(version);
  }
  const bool any_short = std::any_of(listed.begin(), listed.end(),
                                     [](const Option& o) { return !o.short_name.empty(); });
  auto left = [any_short](const Option& o) {
    return std::string(any_short && o.short_name.empty() ? "      " : "  ") + Names(o);
  };
  size_t column = 0;
  for (const Option& o : listed) column = std::max(column, left(o).size() + 2);
  column = std::min(column, kMaxNameColumn);
  for (size_t section = 0; section < sections_.size(); ++section) {
    bool heading = false;
    for (const Option& o : listed) {
      if (o.section != section) continue;
      if (!heading) {
        help += "\n";
        for (const std::string& line : Wrap(sections_[section], kHelpWidth)) help += line + "\n";
        heading = true;
      }
      std::string first = left(o);
      const std::vector<std::string> lines = Wrap(o.help, kHelpWidth - column);
      size_t next = 0;
      if (!lines.empty() && first.size() + 2 <= column) {
        first.resize(column, ' ');
        first += lines[next++];
      }
      help += first + "\n";
      for (; next < lines.size(); ++next) help += std::string(column, ' ') + lines[next] + "\n";
    }
  }
  if (!epilogue_.empty()) help += "\n" + epilogue_ + (epilogue_.back() == '\n' ? "" : "\n");
  return help;
}

std::vector<std::string> ArgParser::OptionNames() const {
  std::vector<std::string> names;
  for (const Option& option : options_) {
    if (!option.short_name.empty()) names.push_back(option.short_name);
    if (!option.long_name.empty()) names.push_back(option.long_name);
  }
  names.push_back("-h");
  names.push_back("--help");
  if (!version_.empty()) names.push_back("--version");
  return names;
}

}  // namespace lumos::cli
