-- cpu-hog: a tutorial rule: alert when a session keeps its CPUs busy, and optionally stop its top process
--
-- Run it once, or every 10 seconds:
--   procwalk run examples/rules/cpu-hog.lua -- percent=150
--   procwalk watch examples/rules/cpu-hog.lua --interval 10s --dry-run -- percent=150 ticks=6 kill=1
--   procwalk watch examples/rules/cpu-hog.lua --interval 30s -- percent=150 for=5m
--
-- A rule is a plain Lua 5.1 script. procwalk runs it against one snapshot
-- of /proc per run (per tick under watch); scripting/README.md lists the
-- whole API. This file walks through the parts most rules need.

-- 1. The module. Everything procwalk offers is in it.
local pw = require "procwalk"

-- 2. Arguments. "procwalk run RULE -- percent=150" puts "percent=150" in
-- pw.args[1] and "150" in pw.args.percent. Check them and fail early: an
-- error() ends the run with this file's name and line.
local percent = tonumber(pw.args.percent or "100")
if not percent or percent <= 0 then
  error("percent must be a number > 0, such as 150 (1.5 CPUs), got " .. tostring(pw.args.percent))
end
local ticks = tonumber(pw.args.ticks or "3")
if not ticks or ticks < 1 or ticks % 1 ~= 0 then
  error("ticks must be a whole number >= 1, got " .. tostring(pw.args.ticks))
end
-- for=5m instead of ticks: how long the CPU must stay high, measured on
-- the snapshots' clock whatever the interval (a duration, as Go writes one).
local hold = pw.args["for"]
local kill = pw.args.kill == "1"

-- 3. Sessions. Each kind groups processes a different way: tmux sessions,
-- AI agents, cgroups (systemd units, pods), users ... An expected failure
-- (no tmux server answered, say) comes back as nil plus a message; misuse
-- (an unknown kind) raises an error.
local sessions, err = pw.sessions()
if not sessions then
  pw.log("cpu-hog: no sessions:", err)
  return
end

for _, s in ipairs(sessions) do
  -- Only the kinds that name something a person started.
  if s.kind == "tmux" or s.kind == "agent" or s.kind == "cgroup" then
    -- 4. Values that need two scans are nil until measured: CPU % and
    -- growth under procwalk run need --interval (the default is 1s), under
    -- watch they appear from the second tick. Never treat nil as 0.
    local cpu = s.cpu
    if cpu then
      -- 5. Emit a metric: one line of line protocol on stdout, or in the
      -- Telegraf batch under procwalk telegraf --script. Tags are for the
      -- few names you filter by; numbers go in fields.
      pw.emit("session_cpu", { kind = s.kind, session = s.name }, { percent = cpu, procs = s.procs })

      -- 6. Debounce: true once the condition has held this many runs in a
      -- row. Under procwalk run there is one run, so ticks=1 acts at once.
      -- With a duration ("5m") it is true once the condition has held in
      -- every run for that long.
      if pw.debounce("cpu-hog " .. s.ref, cpu > percent, hold or ticks) then
        -- 7. State that lasts from tick to tick: alert once per episode,
        -- not on every tick while it lasts.
        pw.state.alerted = pw.state.alerted or {}
        if not pw.state.alerted[s.ref] then
          pw.state.alerted[s.ref] = true
          local top = s:top("cpu", 1)[1]
          -- 8. An alert: a structured line on stderr, and a procwalk_alert
          -- metric next to the emitted ones.
          pw.alert {
            message = string.format("cpu-hog: %s used %.0f%% CPU for %s; busiest: %s %d",
              s.ref, cpu, hold or (ticks .. " ticks"), top and top.comm or "?", top and top.pid or 0),
            session = s, process = top, value = cpu, threshold = percent,
          }
          -- 9. A kill. It goes through procwalk's verified terminate: the
          -- target is the process seen in this snapshot (pid and start
          -- time), protected processes are refused, and --dry-run turns it
          -- into a report. TERM first, KILL after the grace.
          if kill and top then
            local report, kerr = top:kill { signal = "TERM", grace = 5 }
            if report then
              pw.log("cpu-hog:", report.dry_run and "would stop" or report.outcomes[1].result, top.comm, top.pid)
            else
              pw.log("cpu-hog: cannot stop", top.comm, top.pid, kerr)
            end
          end
        end
      elseif pw.state.alerted then
        pw.state.alerted[s.ref] = nil -- the episode is over: alert again next time
      end
    end
  end
end
