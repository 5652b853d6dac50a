// Package cmdline is procwalk's command line over ffcli: the command a
// line names, its global flags written before or after the command's name
// (Program), flags written anywhere among the arguments (SplitFlags,
// FlagsFirst), flag errors as a person reads them (FlagMessage,
// DidYouMeanFlag, ParseError), list, duration and size values
// (StringList, CommaList, DurationText, Size), flags whose declaration
// says what their value is (Spec: its name in --help, the choices that
// complete it, whether others are refused, whether it is a path), values
// checked before the
// flag package's "parse error" (CheckValue), the config file's line
// format (PlainLine), every command's --help (Usage, LazyHelp), the
// manual page made from the same help (ManPage), where each flag's value
// came from and the config file (Sources), errors that carry an exit code
// and the flag they are about, renamed to the value's source (Error,
// Usagef, Sources.Rename), and shell completion: the
// scripts (ShellScript), what completes a word (Completer) and bash's
// words for it (ShellWords, BashReplies).
//
// It holds no state: package main builds the commands and wires them.
package cmdline
