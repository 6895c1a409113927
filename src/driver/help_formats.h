// The option list of tlc in other formats than --help: a man page and shell completion scripts,
// generated from the CLI11 definition so that they cannot drift from it.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace tlc::driver {

// roff source of tlc(1): synopsis, every visible option of `tlc` and `tlc check`, exit status.
std::string man_page(const CLI::App& app);
// A completion script for `shell` ("bash" or "zsh"): option names, their value lists, file and
// directory arguments, the `check` and `help` commands.
std::string completion_script(const CLI::App& app, const std::string& shell);

} // namespace tlc::driver
