-- agents: AI coding agent sessions (Claude Code, Codex, Gemini, Aider) with project, tmux pane, duration, memory and CPU
--
-- Usage: procwalk run agents [--pss]
-- An agent session is the agent's process and everything it started; an
-- agent started by another one is listed on its own (nested_agents counts
-- them). Add agents with --agent NAME=REGEX.

local pw = require "procwalk"

local agents, err = pw.sessions("agent")
if not agents then error("cannot group sessions: " .. err) end
if #agents == 0 then
  print("no AI agent sessions")
  return
end

local function bytes(n) return n and pw.bytes(n) or "-" end
local row = "%-8s %-20s %-12s %-14s %5s %11s %11s %7s %12s"
print(string.format(row, "AGENT", "PROJECT", "TMUX", "RUNNING", "PROCS", "RSS", "PSS", "CPU", "GROWTH/MIN"))
for _, s in ipairs(agents) do
  local a = s.attrs
  print(string.format(row, a.agent or "?", (a.project or s.name):sub(1, 20), a.tmux_target or "-",
    a.elapsed or (s.age and pw.duration(s.age)) or "-", s.procs, bytes(s.rss), bytes(s.pss),
    s.cpu and string.format("%.1f%%", s.cpu) or "-", s.growth and pw.bytes(s.growth) or "-"))
end
