-- agents: AI coding agent sessions (Claude Code, Codex, Gemini, Aider) with status, model, context use, project, tmux pane, duration, memory and CPU
--
-- Usage: procwalk run agents [--pss]
-- An agent session is the agent's process and everything it started; an
-- agent started by another one is listed on its own (nested_agents counts
-- them). Add agents with --agent NAME=REGEX. STATUS is working, idle,
-- blocked (waiting for you: a tool use awaits its result and nothing runs),
-- rate_limited or error (its turn ended on a failed model call) or ended,
-- with how long for blocked and ended ones; MODEL and CTX (the
-- share of the model's context window the last turn used) come from the
-- agent's transcript, "-" without one.

local pw = require "procwalk"

local agents, err = pw.sessions("agent")
if not agents then error("cannot group sessions: " .. err) end
if #agents == 0 then
  print("no AI agent sessions")
  return
end

local function bytes(n) return n and pw.bytes(n) or "-" end
local function status(s)
  local a = s.agent
  if not a then return "-" end
  if (a.status == "blocked" or a.status == "ended") and s.status_seconds then
    return a.status .. " " .. pw.duration(s.status_seconds)
  end
  return a.status
end
-- The report fits 80 columns: one row of figures per agent, its project
-- (on a line of its own when longer than the column) and a line of what
-- it is doing, wrapped.
-- Names are padded by the cells they take (pw.pad): %-20s pads by bytes.
local row = "%s %s %5s %10s %10s %6s  %10s"
print(string.format(row, pw.pad("AGENT", 8), pw.pad("PROJECT", 20), "PROCS", "RSS", "PSS", "CPU", "GROWTH/MIN"))
for _, s in ipairs(agents) do
  local a, ag = s.attrs, s.agent
  local name, project = pw.printable(a.agent or "?"), pw.printable(a.project or s.name)
  local figures = { s.procs, bytes(s.rss), bytes(s.pss), s.cpu and string.format("%.1f%%", s.cpu) or "-",
    s.growth and pw.bytes(s.growth) or "-" }
  if pw.width(name) > 8 or pw.width(project) > 20 then
    print(pw.wrap(name .. " " .. project, 80, "         "))
    name, project = "", ""
  end
  print(string.format(row, pw.pad(name, 8), pw.pad(project, 20), unpack(figures)))
  local ctx = s.context_percent and string.format("%d%%", math.floor(s.context_percent + 0.5)) or "-"
  print(pw.wrap(string.format("         %s, running %s, model %s, context %s, tmux %s", status(s),
    a.elapsed or (s.age and pw.duration(s.age)) or "-", pw.printable(ag and ag.model or "-"), ctx,
    pw.printable(a.tmux_target or "-")), 80, "         "))
end
