// Package cmdline is procwalk's command line over ffcli: flags written
// anywhere among the arguments (SplitFlags, FlagsFirst), flag errors as a
// person reads them (FlagMessage, DidYouMeanFlag), values checked before
// the flag package's "parse error" (CheckValue), the config file's line
// format (PlainLine), every command's --help (Usage, LazyHelp), the
// manual page made from the same help (ManPage), and bash's words for a
// completion (ShellWords, BashReplies).
//
// It holds no state: package main builds the commands and wires them.
package cmdline
