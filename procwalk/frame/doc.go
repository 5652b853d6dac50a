// Package frame is procwalk's one pipeline. A Pipeline plans what to read,
// scans /proc (or another procwalk.Source), turns counters into rates with
// its one Sampler, groups the snapshot into sessions as its last stage, and
// hands out one Frame per gather: the snapshot, the sessions, the host's
// figures and the notes of what grouping could not do.
//
// Every consumer takes Frames: the CLI's commands, the Telegraf collector,
// Lua's run, watch and telegraf --script (a script worker gets its
// parent's Frame, it never scans), and the live view. Fields a consumer
// needs of a few processes (the rows on screen, a session's top members)
// are read with Frame.ReadMore, through the same Monitor and Sampler: their
// rates too.
//
// One driver, Pipeline.Run, serves every long-running consumer: a Trigger
// says when to gather (a ticker, Telegraf's stdin lines, a live view's
// refresh) and a function takes each Frame.
//
// The pipeline owns the memory its frames live in (memory.go): a frame
// stays valid as long as its Retention says, and using it after its
// storage was recycled panics instead of reading another gather's
// processes.
//
// Dependencies run one way: frame imports procwalk and procwalk/session;
// plugin, scripting and cmd import frame.
package frame
