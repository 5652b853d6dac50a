// Package session groups the processes of a procwalk Snapshot into
// sessions, the units people think in: tmux sessions, Linux sessions (sid),
// process groups, terminals, trees, cgroups (pods, systemd units), users,
// AI coding agents and rule-defined groups. Totals never count a member
// twice, and partial data is marked, never shown as a smaller number.
//
// A Grouper is built once from a Config (Options turns the flags of a
// command into one) and kept: it is a Stage of the caller's
// procwalk.Monitor, so the Monitor reads what the kinds need (Grouper.Fields
// and Grouper.Selector), and its Group turns each gathered Snapshot into
// Sessions. Rates and cumulative counters live in the Grouper, and a name
// given to a live session stays with it (sticky by member identity).
//
// Each kind is one file behind one interface (session_kind.go): what it
// reads, how it groups, and what a session of it says for display
// (Session.Info) and as Telegraf tags (Session.TagAttrs). Metrics is the
// catalogue of a session's numbers. Find and ParseRef resolve "KIND:NAME"
// references; Session.RefID gives the NAME@ID form that a kill checks.
//
// Agent sessions also carry an AgentState (Session.Agent): working, idle,
// blocked or ended, model, context and token use, from the agent's
// transcript, which the Grouper reads incrementally (agent_status.go,
// AgentStatusConfig, TranscriptSource; the numbers are the session metrics marked Agent).
//
// The package imports procwalk (the read domain) and nothing of kill;
// package procwalk/kill builds on its sessions.
package session
