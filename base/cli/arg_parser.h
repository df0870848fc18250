// Design: the one command-line parser of lumos-model's commands and of lumos-run (it is in base/
// so that the agent half may use it without depending on the modeler).
// A command declares its options (short and long names, whether they take a value, the value's
// checks) bound to its own variables, and its positional arguments; Parse() fills them.
// Syntax: `--name VALUE`, `--name=VALUE` and `-n VALUE`; a flag takes no value (`--flag=x` is an
// error); `--` ends the options; a lone `-` is positional. A value taken from the next argument
// that looks like an option (`-o --quiet`) is refused: write `--name=VALUE` for a value that
// starts with '-'. A valued option given twice is refused unless declared repeatable. An unknown
// option is one error naming the closest declared one. With StopAtFirstPositional() (lumos-run)
// the first positional argument ends the options: it and what follows are a command line.
// Errors: Parse() returns one message without a prefix; ParseOrExit() prints it as
// `<program>: <message>` and `(run `<program> --help` for usage)` and gives exit status 2.
// Help: generated from the declarations (usage, description, every option under its section,
// epilogue), so --help lists every option there is.
// Threading: none; a parser is used once, by one thread.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "base/status.h"

namespace lumos::cli {

// "<program>: <message>\n(run `<program> --help` for usage)\n": every usage error, one wording.
std::string UsageErrorText(std::string_view program, std::string_view message);

class ArgParser {
 public:
  // `program` starts every message and the usage line ("lumos-model replay"); `synopsis` follows
  // it on the usage line ("FILE|DIR|GLOB... [options]").
  ArgParser(std::string program, std::string synopsis);

  // Text printed by Help() after the usage line, and after the options (e.g. exit status);
  // printed as given (lines of at most 100 columns).
  ArgParser& Description(std::string text);
  ArgParser& Epilogue(std::string text);
  // Options declared after this are listed under `heading` in Help().
  ArgParser& Section(std::string heading);
  // Adds --version, which prints `text` and a newline.
  ArgParser& Version(std::string text);

  // `names`: "-o, --output", "--json" or "-o". `help` is wrapped to the help's width.
  ArgParser& Flag(std::string_view names, std::string help, bool* value);
  ArgParser& String(std::string_view names, std::string value_name, std::string help,
                    std::string* value);
  // Repeatable: each occurrence appends its value.
  ArgParser& Strings(std::string_view names, std::string value_name, std::string help,
                     std::vector<std::string>* values);
  // A decimal integer in [min, max].
  template <typename T>
  ArgParser& Int(std::string_view names, std::string value_name, std::string help, T min, T max,
                 T* value) {
    static_assert(std::is_integral_v<T>);
    return AddInt(names, std::move(value_name), std::move(help), static_cast<int64_t>(min),
                  static_cast<int64_t>(max), [value](int64_t v) { *value = static_cast<T>(v); });
  }
  // A finite number in [min, max] ([min, max) when `max_open`).
  ArgParser& Double(std::string_view names, std::string value_name, std::string help, double min,
                    double max, bool max_open, double* value);
  // One of `choices` (compared exactly).
  ArgParser& Choice(std::string_view names, std::string value_name, std::string help,
                    std::vector<std::string> choices, std::string* value);

  // Modifiers of the option declared last: it must be given; `check` runs on each value once it
  // has been stored (its error message is shown as it is); `*given` is set when it is given.
  ArgParser& Required();
  ArgParser& Check(std::function<Status(const std::string& value)> check);
  ArgParser& Given(bool* given);

  // The positional arguments, in order; fewer than `min_count` is the error
  // "no <noun> given (<name>)", e.g. "no input given (FILE|DIR|GLOB...)": one wording.
  ArgParser& Positionals(std::string name, std::string noun, size_t min_count,
                         std::vector<std::string>* values);
  ArgParser& StopAtFirstPositional();

  // Parses `args` (the arguments after the program, or the command, name). After --help or
  // --version the rest is not looked at (help_requested() / version_requested() say which).
  Status Parse(const std::vector<std::string>& args);
  bool help_requested() const { return help_requested_; }
  bool version_requested() const { return version_requested_; }

  // Parse(), then: --help → Help() on `out`, exit status 0; --version → the version on `out`,
  // 0; an error → UsageErrorText on `err`, 2; otherwise nullopt (go on).
  std::optional<int> ParseOrExit(const std::vector<std::string>& args, std::FILE* out,
                                 std::FILE* err);
  // Prints a usage error found after parsing (two inputs that cannot go together, ...): 2.
  int UsageError(std::FILE* err, std::string_view message) const;

  std::string Help() const;
  // Every name an option answers to ("-o", "--output", ..., "-h", "--help"), for tests.
  std::vector<std::string> OptionNames() const;
  const std::string& program() const { return program_; }

 private:
  struct Option {
    std::string short_name, long_name;  // "-o", "--output"; either may be empty.
    std::string value_name;             // Empty: a flag.
    std::string help;
    size_t section = 0;
    bool repeatable = false;
    bool required = false;
    bool numeric = false;  // A value that looks like a negative number is a value.
    int given = 0;
    std::function<Status(std::string_view typed, const std::string& value)> store;
    std::vector<std::function<Status(const std::string&)>> checks;
    bool* given_out = nullptr;
  };
  ArgParser& Add(std::string_view names, std::string value_name, std::string help,
                 std::function<Status(std::string_view, const std::string&)> store);
  ArgParser& AddInt(std::string_view names, std::string value_name, std::string help, int64_t min,
                    int64_t max, std::function<void(int64_t)> store);
  Option* Find(std::string_view name);
  std::string UnknownOption(std::string_view name) const;
  static std::string Names(const Option& option);

  std::string program_, synopsis_, description_, epilogue_, version_;
  std::vector<std::string> sections_{"options:"};
  std::vector<Option> options_;
  std::string positional_name_, positional_noun_;
  size_t positional_min_ = 0;
  std::vector<std::string>* positionals_ = nullptr;
  bool stop_at_first_positional_ = false;
  bool help_requested_ = false;
  bool version_requested_ = false;
};

}  // namespace lumos::cli
