-- agent-watch: alert when an AI coding agent has waited for you too long, its context is nearly full, or its model calls fail
--
--   procwalk watch examples/rules/agent-watch.lua --interval 30s -- blocked_minutes=10 context_percent=90
--
-- An agent is "blocked" when its last turn asked for a tool (a permission
-- prompt, usually) that has no result yet and nothing of it runs; its
-- context_percent is how much of the model's window its last turn used
-- (README, "Agent status"). An agent is "rate_limited" or "error" when its
-- turn ended on a model call that failed for good (last_error says which).
-- Each episode alerts once: again only after the agent was unblocked, its
-- context went back under the threshold (a /compact or /clear), or its
-- next turn began.

local pw = require "procwalk"

local blocked_minutes = tonumber(pw.args.blocked_minutes or "10")
if not blocked_minutes or blocked_minutes < 0 then
  error("blocked_minutes must be a number >= 0, got " .. tostring(pw.args.blocked_minutes))
end
local context_percent = tonumber(pw.args.context_percent or "90")
if not context_percent or context_percent <= 0 or context_percent > 100 then
  error("context_percent must be a number in (0, 100], got " .. tostring(pw.args.context_percent))
end

local agents, err = pw.sessions("agent")
if not agents then
  pw.log("agent-watch: no sessions:", err)
  return
end

pw.state.alerted = pw.state.alerted or {}
local alerted = pw.state.alerted

-- once alerts when cond starts to hold for key, and forgets key when it stops.
local function once(key, cond, alert)
  if not cond then
    alerted[key] = nil
  elseif not alerted[key] then
    alerted[key] = true
    pw.alert(alert)
  end
end

for _, s in ipairs(agents) do
  local a = s.agent
  if a then
    local where = s.attrs.tmux_target and (" in tmux " .. s.attrs.tmux_target) or ""
    local blocked = a.status == "blocked" and (s.status_seconds or 0) >= blocked_minutes * 60
    once("blocked " .. s.ref, blocked, {
      message = string.format("agent-watch: %s%s has waited for you for %s", s.ref, where, pw.duration(s.status_seconds or 0)),
      session = s, value = s.status_seconds, threshold = blocked_minutes * 60,
    })
    local failed = a.status == "rate_limited" or a.status == "error"
    once("failed " .. s.ref, failed, {
      message = string.format("agent-watch: %s%s stopped: its last model call failed (%s)", s.ref, where, a.last_error or a.status),
      session = s,
    })
    local full = a.status ~= "ended" and s.context_percent ~= nil and s.context_percent > context_percent
    once("context " .. s.ref, full, {
      message = string.format("agent-watch: %s%s has used %.0f%% of its context (%s)", s.ref, where, s.context_percent or 0, a.model or "?"),
      session = s, value = s.context_percent, threshold = context_percent,
    })
  end
end
